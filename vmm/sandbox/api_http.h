/* One API client connection: requests in (a strict head, http/, then a
 * body of Content-Length bytes), answers out (JSON, or a stream of JSON
 * lines in chunked encoding).  Every limit here is a client's input. */
#ifndef AIRLOCK_SANDBOX_API_HTTP_H
#define AIRLOCK_SANDBOX_API_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "vmm/http/http_chunked.h"
#include "vmm/http/http_request.h"

/* A request body larger than this is refused (413) unread. */
#define API_BODY_MAX (1u << 20)
/* A client has this long to send each request, and to take each answer. */
#define API_IO_TIMEOUT_S 30

struct api_conn {
    int fd;
    char buf[HTTP_HEAD_MAX]; /* bytes read past the last request */
    size_t have;
    struct http_server_request req;
    char *body;              /* api_read_body: NUL-terminated, body_len bytes */
    uint64_t body_left;      /* body bytes not read yet (a chunked body: UINT64_MAX
                              * until its end) */
    struct http_chunked chunks; /* a chunked body's decoder (req.chunked) */
    uint64_t body_got;       /* a chunked body's bytes so far */
    uint64_t body_max;       /* a chunked body's most (api_body_check), 0: API_BODY_MAX */
    bool body_bad;           /* a chunked body broke its framing */
    bool close;              /* answer, then close */
    bool streaming;          /* a chunked answer has begun */
    bool broken;             /* a write failed: the client is gone */
    const char *token;       /* each request must carry it (TCP); NULL: none needed */
    /* The request's head as it came, for the routes that pass it on (a
     * guest port's HTTP route, vmm/sandbox/port_proxy.h) or read more of
     * its headers (api_header). */
    char *raw_head;
    size_t raw_head_len;
    /* Set by a layer that speaks another API on this connection (the E2B
     * layer, vmm/e2b/): every api_error of the operations it calls is
     * answered in that API's shape instead of {"error", "field"}. */
    void (*error_hook)(struct api_conn *c, int status, const char *field, const char *msg);
    void *error_ctx; /* the hook's */
};

/* Reads the next request's head into c->req (its body is left for the
 * handler).  A chunked body (Transfer-Encoding: chunked) is decoded as it
 * is read, bounded as a Content-Length one is; once a reader below has
 * read it whole, c->req.body_len is its length.  1: one is there; 0: the
 * client closed between requests; -1: the connection is done (an error
 * answer, if any, was sent). */
int api_read_request(struct api_conn *c);
/* The body into c->body (at most API_BODY_MAX: else 413).  0, or -1 with
 * the answer sent and the connection to be closed. */
int api_read_body(struct api_conn *c);
/* The body written to fd (at most max bytes: else 413; a chunked one
 * broken: 400); afterwards c->req.body_len is the bytes written.  0 or -1
 * as above. */
int api_body_to_fd(struct api_conn *c, int fd, uint64_t max);
/* A streamed body: refuse one over max bytes (413, sent: -1; else 0), then
 * read it piecewise: up to n bytes, 0 at its end, -1 when the client went
 * away or stalled (the connection is then closed). */
int api_body_check(struct api_conn *c, uint64_t max);
ssize_t api_body_read(struct api_conn *c, void *p, size_t n);
/* Header `name` of the request (http_header_value's results). */
int api_header(const struct api_conn *c, const char *name, char *out, size_t cap);
/* After the answer: a body left unread closes the connection. */
void api_request_done(struct api_conn *c);

/* A whole JSON answer (takes the reference to `body`). */
void api_reply(struct api_conn *c, int status, json_t *body);
/* The same with more header lines (each ending in CRLF; NULL: none). */
void api_reply_with(struct api_conn *c, int status, const char *extra, json_t *body);
/* A body of n bytes with this Content-Type; extra: more header lines,
 * each ending in CRLF (NULL: none). */
void api_reply_bytes(struct api_conn *c, int status, const char *type, const char *extra,
                     const void *p, size_t n);
/* A body of `len` bytes read from fd, with this Content-Type. */
void api_reply_fd(struct api_conn *c, int status, const char *type, int fd, uint64_t len);
/* {"error": msg, "field": field} with status (field NULL: none), or
 * c->error_hook's answer. */
void api_error(struct api_conn *c, int status, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* 405 naming the methods the path takes. */
void api_method_not_allowed(struct api_conn *c, const char *allow);

/* 401 with `WWW-Authenticate: Bearer` (vmm/sandbox/api_auth.h), then the
 * connection closes. */
void api_unauthorized(struct api_conn *c);

/* A body of unknown length (chunked) with this Content-Type: begin, write
 * (any number of bytes, an empty write is none), end.  abort instead of
 * end cuts the connection without the last chunk, so the client sees a
 * broken body, never a short one passed off as whole. */
void api_chunked_begin(struct api_conn *c, int status, const char *type);
/* The same with more header lines (each ending in CRLF). */
void api_chunked_begin_with(struct api_conn *c, int status, const char *type, const char *extra);
void api_chunked_write(struct api_conn *c, const void *p, size_t n);
void api_chunked_end(struct api_conn *c);
void api_chunked_abort(struct api_conn *c);

/* A stream of JSON lines (application/x-ndjson, chunked): begin, lines
 * (each takes the reference), end.  A failed write marks c->broken; the
 * calls after it do nothing. */
void api_stream_begin(struct api_conn *c, int status);
void api_stream_line(struct api_conn *c, json_t *line);
void api_stream_end(struct api_conn *c);

#endif
