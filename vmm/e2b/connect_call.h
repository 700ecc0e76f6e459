/* One Connect call on an API connection: its request message read (a
 * unary call's JSON body, or a streaming call's one envelope), its answer
 * written (a JSON body, or envelopes ending in the end-of-stream
 * message), and every error, ours or an operation's (api_error, through
 * the connection's error hook), in Connect's shape:
 *   unary:     HTTP status of the code, {"code": "not_found", "message"}
 *   streaming: 200, then an end-of-stream envelope {"error": {...}} */
#ifndef AIRLOCK_E2B_CONNECT_CALL_H
#define AIRLOCK_E2B_CONNECT_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "vmm/sandbox/api_http.h"

/* A message larger than this is refused (resource_exhausted): envd's
 * requests are small (a command line, a path); file bodies go by /files. */
#define CONNECT_MSG_MAX API_BODY_MAX

struct connect_call {
    struct api_conn *c;
    bool stream;          /* application/connect+json */
    bool began;           /* a stream's 200 is sent */
    bool ended;           /* the answer is complete (or the connection cut) */
    int64_t deadline_ms;  /* Connect-Timeout-Ms as a monotonic time; 0: none */
};

/* Reads the request's message into *msg (an object) and takes c's error
 * hook.  0, or -1 with the error answered. */
int connect_call_open(struct connect_call *k, struct api_conn *c, json_t **msg);
/* Gives c's error hook back (after the answer). */
void connect_call_close(struct connect_call *k);

/* A unary call's answer, or one message of a stream (takes msg). */
void connect_send(struct connect_call *k, json_t *msg);
/* The error answer (a stream's end with it); code is Connect's name. */
void connect_fail(struct connect_call *k, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A stream's end without an error (nothing for a unary call, which
 * connect_send answered). */
void connect_end(struct connect_call *k);
/* Cuts the connection: the client sees the body break off (the sandbox
 * went away under a stream, as E2B's proxy shows it). */
void connect_cut(struct connect_call *k);

#endif
