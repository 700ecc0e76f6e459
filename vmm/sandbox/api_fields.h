/* The fields of a JSON request body, each check naming the field it
 * refuses: the first failure answers 400 {"error", "field"} and marks
 * the set failed, and every later check does nothing. */
#ifndef AIRLOCK_SANDBOX_API_FIELDS_H
#define AIRLOCK_SANDBOX_API_FIELDS_H

#include <stdbool.h>

#include <jansson.h>

#include "vmm/sandbox/api_http.h"

#define FIELD_MAX_LIST 256  /* entries of an array of strings */
#define FIELD_MAX_VARS 256  /* entries of an object of strings */
#define FIELD_MAX_TEXT 4096 /* bytes of one string */
/* A command's `cmd`: only the body (API_BODY_MAX) bounds it, since
 * agents send scripts and heredocs of hundreds of KiB (the agent hands
 * one past 64 KiB to the shell through a memfd: AGENT_EXEC_F_SCRIPT).
 * An `argv` entry goes to execve as it is, and Linux takes at most
 * 128 KiB per string, NUL included (MAX_ARG_STRLEN): a longer one is
 * refused here by name, not as a 126 from the guest.  The agent
 * protocol's AGENT_MAX_ARGV_BYTES has room for either. */
#define COMMAND_MAX_TEXT API_BODY_MAX
#define COMMAND_MAX_ARG  (128 * 1024 - 1)

struct fields {
    struct api_conn *c;
    json_t *obj;
    bool failed;
};

/* Answers 400 naming `name` (once). */
void field_error(struct fields *f, const char *name, const char *fmt, const char *what);
/* A string with no NUL, at most max bytes; NULL when absent. */
const char *get_string(struct fields *f, const char *name, size_t max);
/* get_string at most FIELD_MAX_TEXT bytes. */
const char *get_text(struct fields *f, const char *name);
/* A whole number in [min, max]; dflt when absent. */
long long get_uint(struct fields *f, const char *name, long long min, long long max,
                   long long dflt);
/* true or false; dflt when absent. */
bool get_bool(struct fields *f, const char *name, bool dflt);
/* An array of at most FIELD_MAX_LIST non-empty strings, each at most max
 * bytes; NULL when absent. */
json_t *get_list(struct fields *f, const char *name, size_t max);
/* An object of at most FIELD_MAX_VARS strings, names without '=' and not
 * empty; NULL when absent. */
json_t *get_vars(struct fields *f, const char *name);
/* Refuses names not in `known` (NULL-terminated): a typo must not pass
 * as a default. */
void only_known(struct fields *f, const char *const *known);
/* The body as a JSON object (an empty body is {}); NULL after a 4xx. */
json_t *body_object(struct api_conn *c);

#endif
