/* Secrets for the credential broker (--secret): which value goes into which
 * header of which requests, and the placeholder the guest sees instead.
 *
 *   --secret NAME=SOURCE,host=HOST[:PORT][,header=H][,format=F]
 *            [,methods=M1,M2...][,paths=/P1,/P2...]
 *
 * SOURCE is where airlock reads the value on the host: env:VAR (airlock's
 * own environment), file:PATH (one trailing newline dropped) or fd:N (read
 * to its end, for programs that start airlock: the sandbox daemon).  The
 * value itself is never on a command line.  A list field (methods, paths)
 * takes the comma-separated items that follow it up to the next key=value,
 * so a PATH holding a comma cannot be named here.
 *
 * Defaults: PORT 443; header Authorization; format "Bearer {}" for
 * Authorization and "{}" for any other header; any method; any path.
 * `{}` stands for the value and appears exactly once.  A path prefix
 * matches whole segments: "/v1" admits "/v1", "/v1/x" and "/v1?q", never
 * "/v1x".
 *
 * The placeholder is the value's shape with fresh random characters:
 * the same length, the same prefix up to its last '-' or '_' within the
 * first 16 bytes ("sk-proj-", "ghp_"), and in every other position a
 * random character of the same class (digit, lower, upper; any other byte
 * kept), so SDKs that check a key's format accept it.  The value must have
 * at least SECRET_MIN_RANDOM letters or digits outside that prefix, or the
 * placeholder could be guessed.  Same length matters: scrubbing the value
 * out of a response then never changes the response's length.
 *
 * Pure parsing and shaping, plus the reads of the sources; no threads. */
#ifndef AIRLOCK_EGRESS_SECRET_H
#define AIRLOCK_EGRESS_SECRET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/egress/egress_policy.h"

#define SECRET_MAX          8     /* --secret per VM */
#define SECRET_NAME_MAX     128
#define SECRET_VALUE_MAX    4000  /* its "Bearer " form fits the parser's Authorization cap */
#define SECRET_MIN_RANDOM   16    /* random letters or digits in a placeholder */
#define SECRET_HEADER_MAX   64
#define SECRET_FORMAT_MAX   256
#define SECRET_LIST_MAX     16    /* methods, paths */
#define SECRET_PATH_MAX     256
#define SECRET_METHOD_MAX   16
#define SECRET_PREFIX_MAX   16

struct secret {
    char name[SECRET_NAME_MAX + 1];
    char source[PATH_MAX + 8];        /* as written: "env:KEY", "file:/p", "fd:3" */
    char host[EGRESS_HOST_MAX + 1];   /* lower-case, IPv6 without brackets */
    uint16_t port;
    char header[SECRET_HEADER_MAX + 1]; /* as written (compared case-insensitively) */
    char format[SECRET_FORMAT_MAX + 1]; /* with one "{}" */
    char methods[SECRET_LIST_MAX][SECRET_METHOD_MAX + 1];
    unsigned nmethods;                /* 0: any */
    char paths[SECRET_LIST_MAX][SECRET_PATH_MAX + 1];
    unsigned npaths;                  /* 0: any */
    /* Filled by secret_load (value) and secret_shape (placeholder). */
    char *value;                      /* malloc'd, NUL-terminated; wiped by secret_wipe */
    size_t len;                       /* of value and of placeholder */
    char placeholder[SECRET_VALUE_MAX + 1];
    char *env_value;                  /* env: the bytes in our environment, to wipe */
};

struct secret_set {
    struct secret s[SECRET_MAX];
    unsigned n;
};

/* Parses one --secret argument into set->s[set->n++].  0, or -EINVAL with
 * the reason in err (which never holds a value: there is none here). */
int secret_parse(struct secret_set *set, const char *arg, char *err, size_t errcap);

/* Reads each secret's value from its source and makes its placeholder.
 * 0, or -EINVAL with "secret NAME: ..." in err (unreadable, empty, a byte
 * that cannot go into a header, too short for a placeholder). */
int secret_load_all(struct secret_set *set, char *err, size_t errcap);

/* The placeholder for a loaded value: exposed for the unit tests.  `rnd`
 * supplies random bytes (len of them at least).  0 or -EINVAL. */
int secret_shape(const char *value, size_t len, const unsigned char *rnd, char *out);

/* Zeroes every value (and the environment bytes it came from) and frees
 * it: what the VM process does once the broker holds its own copy. */
void secret_wipe(struct secret_set *set);

/* The secret's host as an --allow rule and a create request write it:
 * "host:port", "[v6]:port".  Room: EGRESS_HOST_MAX + 16. */
void secret_host_port(const struct secret *s, char *out, size_t cap);

/* Whether `method` and `path` (origin-form target, query included) are
 * inside s's scope. */
bool secret_in_scope(const struct secret *s, const char *method, const char *target,
                     size_t target_len);

#endif
