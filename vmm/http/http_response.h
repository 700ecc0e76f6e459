/* The head of an HTTP/1.1 response from an upstream server airlock does
 * not trust (the credential broker's origin, reached over TLS the broker
 * terminates).  The server may be hostile or merely broken; either way,
 * what the broker relays to the guest is framed by exactly what this
 * parser decided, so the two can never disagree about where a body ends.
 * Pure (no I/O), never reads past `len`, needs no NUL terminator.
 *
 * Accepted (RFC 9112 4 and 5), each rule stricter than the RFC, never
 * looser:
 *   - status-line "HTTP/1.x SP 3DIGIT SP reason CRLF", x 0 or 1, the
 *     status in 100..599, the reason any field-value bytes (maybe none);
 *   - CRLF only: a bare LF or CR anywhere is malformed, as are NUL and
 *     control bytes other than HTAB in values, obs-fold, a field name that
 *     is not a token, and whitespace before a colon;
 *   - framing: Content-Length is plain digits (at most 18, so the value
 *     fits), repeated only byte-identically; Transfer-Encoding is exactly
 *     the one coding "chunked" (over all its lines), never with
 *     Content-Length and never in an HTTP/1.0 response.  RFC 9112 6.3
 *     would read "gzip, chunked" or "gzip" until close; we refuse them,
 *     since a body the broker cannot read as plain bytes cannot be
 *     scrubbed;
 *   - no leading empty line, at most HTTP_RESPONSE_HEAD_MAX bytes.
 *
 * Results of http_response_parse:
 *    1   a complete head was parsed into *r (r->head_len bytes of buf)
 *    0   more bytes are needed (no CRLFCRLF yet, len < HTTP_RESPONSE_HEAD_MAX)
 *   -1   malformed
 *   -2   no end of head within HTTP_RESPONSE_HEAD_MAX bytes
 * As for requests, a longer prefix of the same stream never changes a
 * non-zero result.  A 1xx head is complete on its own: the final response
 * follows it, and the caller parses again after r->head_len bytes. */
#ifndef AIRLOCK_HTTP_HTTP_RESPONSE_H
#define AIRLOCK_HTTP_HTTP_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Twice the request cap: servers send more (cookies, CSP, tracing). */
#define HTTP_RESPONSE_HEAD_MAX 16384

struct http_response {
    int status;                     /* 100..599 */
    int http_minor;                 /* 0 or 1 */
    size_t head_len;                /* incl. the final CRLFCRLF */
    uint64_t content_length;        /* when has_content_length */
    bool has_content_length;
    bool chunked;                   /* Transfer-Encoding: chunked */
    /* "Connection: close", or HTTP/1.0 without "Connection: keep-alive".
     * A body that runs until close (HTTP_BODY_UNTIL_CLOSE) also ends the
     * connection, whatever this says. */
    bool connection_close;
    /* false when a Content-Encoding line names anything but "identity"
     * (an empty or unknown coding included): the body is not plain bytes */
    bool content_encoding_identity;
    bool upgrade;                   /* an Upgrade line is present */
};

int http_response_parse(const char *buf, size_t len, struct http_response *r);

/* How the body after a parsed head ends (RFC 9112 6.3): NONE for a
 * response to HEAD and for 1xx, 204 and 304 (whatever their framing lines
 * say), else CHUNKED, LENGTH (content_length bytes, maybe 0), or, with
 * neither, UNTIL_CLOSE.  A 2xx answer to CONNECT is a tunnel, not a body:
 * callers that send CONNECT do not ask here. */
enum http_body_kind {
    HTTP_BODY_NONE,
    HTTP_BODY_LENGTH,
    HTTP_BODY_CHUNKED,
    HTTP_BODY_UNTIL_CLOSE,
};

enum http_body_kind http_response_body(const struct http_response *r, bool head_request);

#endif
