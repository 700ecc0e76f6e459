/* The client side of the sandbox API, for airlock's own verbs (create,
 * exec, ls, rm): one request per connection to the daemon's Unix socket,
 * the answer read with bounds (the daemon is ours, but a socket path can
 * be anyone's). */
#ifndef AIRLOCK_SANDBOX_API_CLIENT_H
#define AIRLOCK_SANDBOX_API_CLIENT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

/* The most a JSON answer (not a stream) may be. */
#define API_CLIENT_BODY_MAX (16u << 20)

/* Which socket: `given` (a --socket flag, may be NULL), else
 * $AIRLOCK_SOCKET, else the daemon's default for this user.  0, or -1
 * with err saying why there is none. */
int api_client_socket(const char *given, char *out, size_t cap, char *err, size_t errlen);

struct api_client {
    int fd;
    int status;        /* the answer's HTTP status */
    bool chunked;
    unsigned long long left; /* Content-Length bytes, or the current chunk's, still to read */
    bool done;         /* the last chunk was read */
    char buf[65536];
    size_t off, len;
};

/* Sends METHOD PATH with `body` (NULL: none; the reference is kept) and
 * reads the answer's head.  0, or -1 with err ("no daemon at PATH ...",
 * a broken answer). */
int api_client_request(struct api_client *c, const char *sock, const char *method,
                       const char *path, json_t *body, char *err, size_t errlen);

/* The same with a raw body (application/octet-stream). */
int api_client_request_raw(struct api_client *c, const char *sock, const char *method,
                           const char *path, const void *data, size_t len, char *err,
                           size_t errlen);

/* The same with the body read from fd (len bytes) as it is sent: an
 * upload too big to hold (a tar). */
int api_client_request_fd(struct api_client *c, const char *sock, const char *method,
                          const char *path, const char *type, int fd, size_t len, char *err,
                          size_t errlen);

/* "/v1/sandboxes/ID/WHAT?path=PATH" with PATH percent-encoded: 0, or -1
 * when it does not fit cap. */
int api_client_path(char *out, size_t cap, const char *id, const char *what, const char *path);

/* Up to cap bytes of a raw answer's body (chunked framing removed): the
 * count, 0 at its end, -1 when it broke off (a tar cut short). */
ssize_t api_client_body(struct api_client *c, void *buf, size_t cap);

/* A whole JSON answer (after api_client_request); NULL with err. */
json_t *api_client_json(struct api_client *c, char *err, size_t errlen);

/* The next line of a JSON-lines stream, parsed; NULL at its end (with
 * err empty) or on a broken stream (err says so). */
json_t *api_client_line(struct api_client *c, char *err, size_t errlen);

/* The bytes a stream line carries ("data" as it is, "data_b64" decoded):
 * valid while `line` lives, and *owned (set when decoded) is the caller's
 * to free.  NULL when the line has neither (or bad base64). */
const char *api_client_line_data(json_t *line, size_t *len, unsigned char **owned);

/* Writes those bytes to fd, whole: their count, or -1 when the line has
 * none (errno EINVAL) or the write failed (errno EPIPE: fd lost its
 * reader). */
ssize_t api_client_line_write(json_t *line, int fd);

void api_client_close(struct api_client *c);

/* The "error" of a JSON error answer, or a fallback naming the status. */
const char *api_client_error_text(json_t *answer, int status, char *buf, size_t cap);

#endif
