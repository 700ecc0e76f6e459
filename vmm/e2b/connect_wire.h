/* The Connect protocol's framing and error codes (connectrpc.com/docs/
 * protocol), as the E2B SDK's envd client speaks it with the JSON codec
 * over HTTP/1.1: a streaming call's messages are envelopes (a flags byte,
 * a 4-byte big-endian length, that many bytes of JSON), the last one
 * flagged end-of-stream; a unary call's are bare JSON bodies.  Pure
 * functions over the client's bytes: nothing here trusts a length. */
#ifndef AIRLOCK_E2B_CONNECT_WIRE_H
#define AIRLOCK_E2B_CONNECT_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define CONNECT_FLAG_COMPRESSED 0x01
#define CONNECT_FLAG_END        0x02
#define CONNECT_HEAD_LEN        5

/* A streaming request's body: exactly one message envelope, flags 0 (no
 * compression: the SDK sends none, and a server may refuse it).  0 with
 * the JSON at [*msg, *msg + *len); -1 with the reason in why. */
int connect_request_envelope(const uint8_t *body, size_t n, const uint8_t **msg, size_t *len,
                             const char **why);

/* The five bytes before a message of len bytes. */
void connect_envelope_head(uint8_t head[CONNECT_HEAD_LEN], uint8_t flags, uint32_t len);

/* A Connect error code's name ("not_found") and the HTTP status a unary
 * error answer carries for it; the code for an HTTP status our own
 * operations answered with. */
int connect_code_http(const char *code);
const char *connect_code_for_http(int status);

/* Connect-Timeout-Ms: 1 to 10 digits (the protocol's bound).  0 with *ms,
 * -1 when malformed. */
int connect_timeout_parse(const char *s, uint64_t *ms);

#endif
