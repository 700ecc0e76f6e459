/* What the client verbs (`airlock create`, `exec`, `update`, `ls`, `rm`,
 * `volume ... --socket`) share about talking to the daemon: a JSON request
 * with the status it must answer, and a command's exit record made into
 * our exit status. */
#ifndef AIRLOCK_CLI_VERB_API_H
#define AIRLOCK_CLI_VERB_API_H

#include <jansson.h>

/* METHOD PATH with body (NULL: none): the JSON answer when the daemon
 * answered `want` (an empty one as {}), else NULL after one line on
 * stderr (no daemon, or its error).  *status: what it answered, 0 when
 * no answer came (no daemon, a broken answer). */
json_t *verb_call(const char *sock, const char *method, const char *path, json_t *body,
                  int want, int *status);

/* The exit status for a refusal as verb_call left *status:
 * 125 for a 4xx (what was asked is wrong: bad input, none of that name,
 * in use), 1 for anything else (the daemon failed, or none answered). */
int verb_refusal_status(int status);

/* An exit record ({"type":"exit",...}): the status to exit with, as
 * `airlock run` would (124 on a timeout, said on stderr; 125 with the
 * daemon's error line). */
int verb_exit_status(json_t *exit);

#endif
