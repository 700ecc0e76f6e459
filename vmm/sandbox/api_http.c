#include "vmm/sandbox/api_http.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"

static const char *phrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 429: return "Too Many Requests";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    case 507: return "Insufficient Storage";
    default: return status < 400 ? "OK" : "Error";
    }
}

/* A failed send means the client is gone: the calls after it do nothing. */
static void send_all(struct api_conn *c, const void *p, size_t n)
{
    if (!c->broken && agent_send_all(c->fd, p, n))
        c->broken = true;
}

/* chunked: the Content-Type of a chunked body, or NULL for a JSON one. */
static void send_head(struct api_conn *c, int status, const char *extra, size_t body_len,
                      const char *chunked)
{
    char head[512];
    int n = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\n%s", status, phrase(status),
                     extra ? extra : "");
    if (chunked)
        n += snprintf(head + n, sizeof(head) - (size_t)n,
                      "Content-Type: %s\r\nTransfer-Encoding: chunked\r\n", chunked);
    else if (status != 204) /* RFC 9110 8.6: no Content-Length on a 204 */
        n += snprintf(head + n, sizeof(head) - (size_t)n,
                      "Content-Type: application/json\r\nContent-Length: %zu\r\n", body_len);
    n += snprintf(head + n, sizeof(head) - (size_t)n, "%s\r\n",
                  c->close ? "Connection: close\r\n" : "");
    send_all(c, head, (size_t)n);
}

void api_reply_with(struct api_conn *c, int status, const char *extra, json_t *body)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    size_t len = text ? strlen(text) : 0;
    /* + "\n": curl and shells show the answer on a line of its own */
    send_head(c, status, extra, text ? len + 1 : 0, NULL);
    if (text) {
        send_all(c, text, len);
        send_all(c, "\n", 1);
    }
    free(text);
}

void api_reply_fd(struct api_conn *c, int status, const char *type, int fd, uint64_t len)
{
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %llu\r\n%s\r\n",
                     status, phrase(status), type, (unsigned long long)len,
                     c->close ? "Connection: close\r\n" : "");
    send_all(c, head, (size_t)n);
    char chunk[65536];
    while (len && !c->broken) {
        ssize_t r = read(fd, chunk, len < sizeof(chunk) ? (size_t)len : sizeof(chunk));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) { /* cannot keep the promised length: end the connection */
            c->broken = true;
            break;
        }
        send_all(c, chunk, (size_t)r);
        len -= (uint64_t)r;
    }
}

void api_reply(struct api_conn *c, int status, json_t *body)
{
    api_reply_with(c, status, NULL, body);
}

static json_t *error_body(const char *field, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    json_t *o = json_object();
    /* msg may quote a client's bytes: json_string refuses bad UTF-8 */
    json_t *m = json_string(msg);
    json_object_set_new(o, "error", m ? m : json_string("(a message that was not UTF-8)"));
    if (field)
        json_object_set_new(o, "field", json_string(field));
    return o;
}

void api_error(struct api_conn *c, int status, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (c->error_hook) {
        char msg[512];
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        return c->error_hook(c, status, field, msg);
    }
    json_t *o = error_body(field, fmt, ap);
    va_end(ap);
    api_reply(c, status, o);
}

int api_header(const struct api_conn *c, const char *name, char *out, size_t cap)
{
    if (!c->raw_head)
        return -1;
    return http_header_value(c->raw_head, c->raw_head_len, name, out, cap);
}

void api_reply_bytes(struct api_conn *c, int status, const char *type, const char *extra,
                     const void *p, size_t n)
{
    char head[1024];
    int k = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\n%s", status, phrase(status),
                     extra ? extra : "");
    if (status != 204)
        k += snprintf(head + k, sizeof(head) - (size_t)k, "Content-Type: %s\r\nContent-Length: %zu\r\n",
                      type, n);
    k += snprintf(head + k, sizeof(head) - (size_t)k, "%s\r\n",
                  c->close ? "Connection: close\r\n" : "");
    if (k >= (int)sizeof(head)) { /* extra too long: a bug of ours, never sent cut */
        c->broken = true;
        return;
    }
    send_all(c, head, (size_t)k);
    if (n)
        send_all(c, p, n);
}

void api_method_not_allowed(struct api_conn *c, const char *allow)
{
    char extra[128];
    snprintf(extra, sizeof(extra), "Allow: %s\r\n", allow);
    json_t *o = json_object();
    json_object_set_new(o, "error", json_sprintf("%s is not allowed here (allowed: %s)",
                                                 c->req.method, allow));
    api_reply_with(c, 405, extra, o);
}

void api_unauthorized(struct api_conn *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "error", json_string("this listener wants the daemon's token: "
                                                "Authorization: Bearer TOKEN"));
    c->close = true;
    api_reply_with(c, 401, "WWW-Authenticate: Bearer realm=\"airlock\"\r\n", o);
}

void api_chunked_begin(struct api_conn *c, int status, const char *type)
{
    api_chunked_begin_with(c, status, type, NULL);
}

void api_chunked_begin_with(struct api_conn *c, int status, const char *type, const char *extra)
{
    c->streaming = true;
    send_head(c, status, extra, 0, type);
}

void api_chunked_write(struct api_conn *c, const void *p, size_t n)
{
    if (!n)
        return; /* an empty chunk would end the body */
    char size[32];
    int k = snprintf(size, sizeof(size), "%zx\r\n", n);
    send_all(c, size, (size_t)k);
    send_all(c, p, n);
    send_all(c, "\r\n", 2);
}

void api_chunked_end(struct api_conn *c)
{
    send_all(c, "0\r\n\r\n", 5);
}

void api_chunked_abort(struct api_conn *c)
{
    c->close = true;
    c->broken = true;
}

void api_stream_begin(struct api_conn *c, int status)
{
    api_chunked_begin(c, status, "application/x-ndjson");
}

void api_stream_line(struct api_conn *c, json_t *line)
{
    char *text = json_dumps(line, JSON_COMPACT);
    json_decref(line);
    if (!text) {
        c->broken = true;
        return;
    }
    size_t len = strlen(text);
    text[len] = '\n'; /* json_dumps's NUL becomes the line's end: one chunk */
    api_chunked_write(c, text, len + 1);
    free(text);
}

void api_stream_end(struct api_conn *c)
{
    api_chunked_end(c);
}

/* ---- requests ---- */

/* Reads more bytes into c->buf; 1, 0 at EOF, -1 on error or timeout. */
static int fill(struct api_conn *c)
{
    if (c->have >= sizeof(c->buf))
        return -1;
    ssize_t n;
    while ((n = recv(c->fd, c->buf + c->have, sizeof(c->buf) - c->have, 0)) < 0 && errno == EINTR)
        ;
    if (n <= 0)
        return n == 0 ? 0 : -1;
    c->have += (size_t)n;
    return 1;
}

static const char *parse_error(int rc)
{
    switch (rc) {
    case -411: return "request bodies need a Content-Length (no Transfer-Encoding)";
    case -414: return "request target too long";
    case -431: return "request head too large";
    case -505: return "only HTTP/1.0 and HTTP/1.1 are spoken";
    default: return "malformed request";
    }
}

int api_read_request(struct api_conn *c)
{
    int rc;
    c->body = NULL;
    c->body_left = 0;
    while ((rc = http_request_parse_server_ex(c->buf, c->have, &c->req, HTTP_SERVER_CHUNKED)) == 0) {
        int f = fill(c);
        if (f <= 0) {
            if (f < 0 && c->have) {
                c->close = true;
                api_error(c, 408, NULL, "the request did not arrive within %d s",
                          API_IO_TIMEOUT_S);
            }
            return f == 0 && !c->have ? 0 : -1;
        }
    }
    if (rc < 0) {
        c->close = true;
        api_error(c, -rc, NULL, "%s", parse_error(rc));
        return -1;
    }
    if (!c->req.keep_alive)
        c->close = true;
    /* Kept for the routes that read more of the head than http/ keeps (the
     * E2B layer's headers) or pass it on (a guest port's HTTP route). */
    if ((c->raw_head = malloc(c->req.head_len))) {
        memcpy(c->raw_head, c->buf, c->req.head_len);
        c->raw_head_len = c->req.head_len;
    }
    c->have -= c->req.head_len;
    memmove(c->buf, c->buf + c->req.head_len, c->have);
    c->body_left = c->req.chunked ? UINT64_MAX : c->req.body_len;
    c->body_got = 0;
    c->body_max = 0;
    c->body_bad = false;
    http_chunked_init(&c->chunks);
    return 1;
}

/* Up to n raw body bytes into p: first what is buffered, then the socket. */
static ssize_t raw_some(struct api_conn *c, char *p, size_t n)
{
    ssize_t got;
    if (c->have) {
        got = (ssize_t)(n < c->have ? n : c->have);
        memcpy(p, c->buf, (size_t)got);
        memmove(c->buf, c->buf + got, c->have - (size_t)got);
        c->have -= (size_t)got;
        return got;
    }
    while ((got = recv(c->fd, p, n, 0)) < 0 && errno == EINTR)
        ;
    if (got <= 0) {
        c->close = true;
        return -1;
    }
    return got;
}

/* A chunked body's next data bytes, at most n, into p: 0 at its end, -1
 * when it is malformed, passes its bound, or the client went. */
static ssize_t chunked_some(struct api_conn *c, char *p, size_t n)
{
    for (;;) {
        if (!c->have) {
            ssize_t got;
            while ((got = recv(c->fd, c->buf, sizeof(c->buf), 0)) < 0 && errno == EINTR)
                ;
            if (got <= 0) {
                c->close = true;
                return -1;
            }
            c->have = (size_t)got;
        }
        /* At most n bytes in: the data span found is then at most n. */
        size_t used;
        const char *data;
        size_t data_len;
        int rc = http_chunked_feed(&c->chunks, c->buf, c->have < n ? c->have : n, &used, &data,
                                   &data_len);
        if (rc == HTTP_CHUNKED_BAD) {
            c->close = true;
            c->body_bad = true;
            return -1;
        }
        if (data_len)
            memcpy(p, data, data_len); /* before the buffer moves */
        memmove(c->buf, c->buf + used, c->have - used);
        c->have -= used;
        uint64_t max = c->body_max ? c->body_max : API_BODY_MAX;
        c->body_got += data_len;
        if (c->body_got > max) {
            c->close = true;
            return -1;
        }
        if (rc == HTTP_CHUNKED_DONE) {
            c->body_left = 0;
            c->req.body_len = c->body_got;
            return (ssize_t)data_len;
        }
        if (data_len)
            return (ssize_t)data_len;
    }
}

/* Up to n body bytes into p. */
static ssize_t body_some(struct api_conn *c, char *p, size_t n)
{
    if (n > c->body_left)
        n = (size_t)c->body_left;
    if (!n)
        return 0;
    if (c->req.chunked)
        return chunked_some(c, p, n);
    ssize_t got = raw_some(c, p, n);
    if (got > 0)
        c->body_left -= (uint64_t)got;
    return got;
}

static int too_large(struct api_conn *c, uint64_t max)
{
    c->close = true; /* the body stays unread */
    if (c->req.chunked)
        api_error(c, 413, NULL, "chunked request body of more than %llu bytes",
                  (unsigned long long)max);
    else
        api_error(c, 413, NULL, "request body of %llu bytes: at most %llu",
                  (unsigned long long)c->req.body_len, (unsigned long long)max);
    return -1;
}

/* -1, with a 400 when the chunked body was malformed (else the client
 * went: nobody to answer). */
static int bad_chunks(struct api_conn *c)
{
    if (c->body_bad)
        api_error(c, 400, NULL, "%s", "malformed chunked request body (RFC 9112 7.1)");
    return -1;
}

int api_read_body(struct api_conn *c)
{
    if (c->req.body_len > API_BODY_MAX)
        return too_large(c, API_BODY_MAX);
    if (c->req.chunked) { /* its length is known at its end */
        size_t cap = 4096, got = 0;
        c->body = malloc(cap + 1);
        while (c->body && c->body_left) {
            if (got == cap) {
                if (cap >= API_BODY_MAX) { /* full, and more is coming */
                    c->body_got = API_BODY_MAX + 1ull;
                    return too_large(c, API_BODY_MAX);
                }
                char *more = realloc(c->body, 2 * cap + 1);
                if (!more)
                    break;
                c->body = more;
                cap *= 2;
            }
            ssize_t n = body_some(c, c->body + got, cap - got);
            if (n < 0) {
                if (c->body_got > API_BODY_MAX)
                    return too_large(c, API_BODY_MAX);
                return bad_chunks(c);
            }
            got += (size_t)n;
        }
        if (!c->body || c->body_left) {
            c->close = true;
            api_error(c, 503, NULL, "out of memory");
            return -1;
        }
        c->body[got] = '\0';
        c->req.body_len = got;
        return 0;
    }
    size_t len = (size_t)c->req.body_len, got = 0;
    c->body = malloc(len + 1);
    if (!c->body) {
        c->close = true;
        api_error(c, 503, NULL, "out of memory");
        return -1;
    }
    while (got < len) {
        ssize_t n = body_some(c, c->body + got, len - got);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    c->body[len] = '\0';
    return 0;
}

int api_body_check(struct api_conn *c, uint64_t max)
{
    c->body_max = max; /* a chunked body is held to it as it comes */
    return c->req.body_len > max ? too_large(c, max) : 0;
}

ssize_t api_body_read(struct api_conn *c, void *p, size_t n)
{
    return body_some(c, p, n);
}

int api_body_to_fd(struct api_conn *c, int fd, uint64_t max)
{
    if (c->req.body_len > max)
        return too_large(c, max);
    c->body_max = max;
    char chunk[65536];
    while (c->body_left) {
        ssize_t n = body_some(c, chunk, sizeof(chunk));
        if (n < 0 && c->req.chunked && c->body_got > max)
            return too_large(c, max);
        if (n < 0 && c->body_bad)
            return bad_chunks(c);
        if (n < 0 || (n == 0 && c->body_left))
            return -1;
        int rc = agent_write_all(fd, chunk, (size_t)n);
        if (rc) {
            c->close = true;
            api_error(c, 507, NULL, "cannot hold the upload: %s", strerror(-rc));
            return -1;
        }
    }
    return 0;
}

void api_request_done(struct api_conn *c)
{
    free(c->body);
    c->body = NULL;
    free(c->raw_head);
    c->raw_head = NULL;
    c->raw_head_len = 0;
    /* A body nobody read (the request was refused before it was needed)
     * is read and dropped when it is small, so the client, still sending
     * it, sees the answer and not a reset, and the connection can go on;
     * a large one ends the connection. */
    char junk[4096];
    if (c->body_left && c->req.body_len <= API_BODY_MAX && !c->close)
        while (c->body_left && body_some(c, junk, sizeof(junk)) >= 0 && !c->close)
            ; /* a chunked body's framing may give 0 data bytes at a time */
    if (c->body_left)
        c->close = true;
}
