/* The proxy request head parser (see http_request.h for the accepted form
 * and the results).  One pass finds the end of the head and rejects NUL and
 * bare CR/LF; then the request line and each header line are checked in
 * order, and for a forwarded request the origin-form head is written while
 * the header lines go by. */
#include "vmm/http/http_request.h"

#include "vmm/http/http_head.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define E_BAD       (-400)
#define E_NOT_PROXY (-405)
#define E_LENGTH    (-411)
#define E_URI_LONG  (-414)
#define E_TOO_LARGE (-431)
#define E_NO_MEM    (-500)
#define E_VERSION   (-505)

/* The shared helpers' verdicts (http_head.h) as this parser's statuses;
 * any other result passes through. */
static int status_of(int rc)
{
    switch (rc) {
    case HTTP_HEAD_BAD:
        return E_BAD;
    case HTTP_HEAD_TOO_LARGE:
        return E_TOO_LARGE;
    case HTTP_HEAD_VERSION:
        return E_VERSION;
    }
    return rc;
}

/* A DNS name as the policy will see it: letters, digits, '-', '_' and
 * '.', no empty label; copied lower-cased into host.  One trailing dot
 * (the fully qualified "example.com.", RFC 1034 3.1) names the same host
 * and is dropped, as the policy's rules drop it (docs/egress.md): the
 * policy, the broker and the credential proxy see one spelling. */
static int parse_reg_name(struct span s, char host[HTTP_HOST_MAX + 1])
{
    if (s.n > 1 && s.p[s.n - 1] == '.')
        s.n--;
    if (s.n == 0 || s.n > HTTP_HOST_MAX || s.p[0] == '.' || s.p[s.n - 1] == '.')
        return E_BAD;
    for (size_t i = 0; i < s.n; i++) {
        unsigned char c = (unsigned char)s.p[i];
        bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '_' ||
                  (c == '.' && s.p[i - 1] != '.');
        if (c >= 'A' && c <= 'Z') {
            c = (unsigned char)(c - 'A' + 'a');
            ok = true;
        }
        if (!ok)
            return E_BAD;
        host[i] = (char)c;
    }
    host[s.n] = '\0';
    return 0;
}

/* An IPv6 literal (the text between the brackets), stored canonical so
 * that "::1" and "0:0::1" are one host to the policy.  inet_pton rejects
 * zone identifiers ("%eth0"), which have no meaning on another host. */
static int parse_ipv6(struct span s, char host[HTTP_HOST_MAX + 1])
{
    char text[INET6_ADDRSTRLEN];
    struct in6_addr a;
    if (s.n == 0 || s.n >= sizeof(text))
        return E_BAD;
    memcpy(text, s.p, s.n);
    text[s.n] = '\0';
    if (inet_pton(AF_INET6, text, &a) != 1)
        return E_BAD;
    return inet_ntop(AF_INET6, &a, host, HTTP_HOST_MAX + 1) ? 0 : E_BAD;
}

/* 1*5DIGIT in 1..65535. */
static int parse_port(struct span s, uint16_t *port)
{
    unsigned v = 0;
    if (s.n == 0 || s.n > 5)
        return E_BAD;
    for (size_t i = 0; i < s.n; i++) {
        if (s.p[i] < '0' || s.p[i] > '9')
            return E_BAD;
        v = v * 10 + (unsigned)(s.p[i] - '0');
    }
    if (v == 0 || v > 65535)
        return E_BAD;
    *port = (uint16_t)v;
    return 0;
}

/* host[:port] or [v6][:port] (RFC 3986 3.2 without userinfo, which only
 * serves to confuse whoever reads the name).  default_port 0 means the port
 * is required. */
static int parse_authority(struct span s, uint16_t default_port, char host[HTTP_HOST_MAX + 1],
                           uint16_t *port)
{
    struct span name = s, port_text = {0}, after;
    bool has_port;
    int rc;
    if (s.n == 0 || memchr(s.p, '@', s.n))
        return E_BAD;
    if (s.p[0] == '[') {
        if (!http_span_split((struct span){s.p + 1, s.n - 1}, ']', &name, &after))
            return E_BAD;
        has_port = after.n > 0;
        if (has_port && after.p[0] != ':') /* "[::1]x:443" */
            return E_BAD;
        if (has_port)
            port_text = (struct span){after.p + 1, after.n - 1};
        rc = parse_ipv6(name, host);
    } else {
        has_port = http_span_split(s, ':', &name, &port_text);
        rc = parse_reg_name(name, host);
    }
    if (rc)
        return rc;
    if (!has_port) {
        *port = default_port;
        return default_port ? 0 : E_BAD;
    }
    return parse_port(port_text, port);
}

/* ---- the origin-form head, written into a buffer sized in advance ---- */

struct out {
    char *p;
    size_t len, cap;
    bool overflow; /* cannot happen with the size bound; checked anyway */
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->overflow || n > o->cap - o->len) {
        o->overflow = true;
        return;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

static void puts_(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

/* "METHOD /path?q HTTP/1.x\r\nHost: authority\r\n": Host first (RFC 9110
 * 7.2 asks for it early), from the URI rather than the client's header. */
static void put_origin_start(struct out *o, const struct http_request *req, struct span path)
{
    char port[8];
    puts_(o, req->method);
    puts_(o, " ");
    if (path.n == 0 || path.p[0] != '/')
        puts_(o, "/"); /* "http://h" and "http://h?q" mean "/" and "/?q" */
    put(o, path.p, path.n);
    puts_(o, req->http_minor ? " HTTP/1.1\r\nHost: " : " HTTP/1.0\r\nHost: ");
    bool v6 = strchr(req->host, ':') != NULL;
    if (v6)
        puts_(o, "[");
    puts_(o, req->host);
    if (v6)
        puts_(o, "]");
    if (req->port != 80) {
        snprintf(port, sizeof(port), ":%u", (unsigned)req->port);
        puts_(o, port);
    }
    puts_(o, "\r\n");
}

/* ---- request line ---- */

/* The request-target: authority-form for CONNECT, absolute "http://" for
 * everything else.  *path gets the origin-form part (may be empty). */
static int parse_target(struct span t, struct http_request *req, struct span *path)
{
    if (req->kind == HTTP_REQ_CONNECT)
        return parse_authority(t, 0, req->host, &req->port);
    if (t.n >= 7 && strncasecmp(t.p, "http://", 7) == 0) {
        if (memchr(t.p, '#', t.n)) /* absolute-URI has no fragment */
            return E_BAD;
        struct span auth = {t.p + 7, 0};
        while (auth.n < t.n - 7 && auth.p[auth.n] != '/' && auth.p[auth.n] != '?')
            auth.n++;
        *path = (struct span){auth.p + auth.n, t.n - 7 - auth.n};
        return parse_authority(auth, 80, req->host, &req->port);
    }
    /* Origin- and asterisk-form are for servers, https:// goes by CONNECT,
     * other schemes are not spoken at all. */
    if (t.p[0] == '/' || (t.n == 1 && t.p[0] == '*') || memmem(t.p, t.n, "://", 3))
        return E_NOT_PROXY;
    return E_BAD;
}

/* method SP request-target SP HTTP-version, single spaces, no CTLs: the
 * method copied into method[16] (NUL-terminated), the target's span, the
 * version's minor number.  Both kinds of request start here. */
static int split_request_line(struct span line, char method_out[16], struct span *target,
                              int *minor)
{
    for (size_t i = 0; i < line.n; i++) {
        unsigned char c = (unsigned char)line.p[i];
        if (c < 0x20 || c >= 0x7f) /* targets are ASCII (RFC 3986 2) */
            return E_BAD;
    }
    struct span method, rest, version;
    if (!http_span_split(line, ' ', &method, &rest) ||
        !http_span_split(rest, ' ', target, &version) || !http_is_token(method) ||
        method.n >= 16 || target->n == 0)
        return E_BAD;
    if (target->n > HTTP_TARGET_MAX)
        return E_URI_LONG;
    int rc = http_version(version, minor);
    if (rc)
        return status_of(rc);
    memcpy(method_out, method.p, method.n);
    method_out[method.n] = '\0';
    return 0;
}

static int parse_request_line(struct span line, struct http_request *req, struct span *path)
{
    struct span target;
    int rc = split_request_line(line, req->method, &target, &req->http_minor);
    if (rc)
        return rc;
    req->kind = strcmp(req->method, "CONNECT") == 0 ? HTTP_REQ_CONNECT : HTTP_REQ_FORWARD;
    return parse_target(target, req, path);
}

/* ---- header lines ---- */

struct framing {
    int hosts;
    struct span content_length; /* n == 0: none seen */
    struct span last_te;
    bool te;
    int tes; /* Transfer-Encoding lines */
    /* The API's requests (http_request_parse_server) only: */
    bool server;
    struct span authorization;  /* n == 0: none seen */
    struct span connection;     /* p == NULL: none seen */
    int authorizations;
};

/* Records what framing headers say; the combination is judged once all
 * are seen (framing_check). */
static int note_framing(struct span name, struct span value, struct framing *f)
{
    if (http_span_is(name, "Host")) {
        char host[HTTP_HOST_MAX + 1];
        uint16_t port;
        if (++f->hosts > 1) /* RFC 9112 3.2: MUST 400 */
            return E_BAD;
        return f->server ? 0 : parse_authority(value, 1, host, &port);
    }
    if (f->server && http_span_is(name, "Authorization")) {
        if (++f->authorizations > 1)
            return E_BAD;
        if (value.n > HTTP_AUTH_MAX)
            return E_TOO_LARGE;
        f->authorization = value;
        return 0;
    }
    if (f->server && http_span_is(name, "Connection")) {
        f->connection = value; /* the last one counts */
        return 0;
    }
    if (http_span_is(name, "Content-Length"))
        return status_of(http_content_length(value, &f->content_length));
    if (http_span_is(name, "Transfer-Encoding")) {
        f->te = true;
        f->tes++;
        f->last_te = value;
    }
    return 0;
}

/* RFC 9112 6.1 and 6.3: Transfer-Encoding with Content-Length is how
 * requests get smuggled; 1.0 has no Transfer-Encoding; a request whose
 * final coding is not chunked has no determinable length. */
static int framing_check(const struct framing *f, int http_minor)
{
    if (!f->te)
        return 0;
    if (f->content_length.n || http_minor == 0)
        return E_BAD;
    struct span list = f->last_te, coding = {0};
    while (http_list_next(&list, &coding))
        ;
    return http_span_is(coding, "chunked") ? 0 : E_BAD;
}

/* Hop-by-hop headers that stop here; "Connection: close" is re-added. */
static bool is_dropped(struct span name)
{
    return http_span_is(name, "Connection") || http_span_is(name, "Proxy-Connection") ||
           http_span_is(name, "Proxy-Authorization") || http_span_is(name, "Host");
}

/* What http_fields hands each header line to. */
struct fields_ctx {
    struct framing *f;
    struct out *o; /* NULL: nothing to rewrite */
};

/* Notes one checked "name: value" line; copies it to the rewritten head
 * (when there is one) unless it is dropped. */
static int on_field(void *arg, struct span line, struct span name, struct span value)
{
    struct fields_ctx *ctx = arg;
    int rc = note_framing(name, value, ctx->f);
    if (rc)
        return rc;
    if (ctx->o && !is_dropped(name)) {
        put(ctx->o, line.p, line.n);
        puts_(ctx->o, "\r\n");
    }
    return 0;
}

/* Room for the rewritten head: the request line only shrinks (at least
 * "http://" and one host byte go, at most a "/" comes), plus the Host and
 * Connection lines and a NUL. */
static size_t origin_cap(size_t head_len)
{
    return head_len + sizeof("Host: []:65535\r\n") + HTTP_HOST_MAX +
           sizeof("Connection: close\r\n\r\n") + 1;
}

/* The header lines of a complete head (the request line's CRLF is at most
 * the first half of the final CRLFCRLF, so they lie between the two). */
static int parse_headers(const char *head, size_t head_len, struct span line, struct framing *f,
                         struct out *o)
{
    struct fields_ctx ctx = {f, o};
    return status_of(http_fields(head, line.n + 2, head_len - 2, on_field, &ctx));
}

/* http_head_end, and the request line (without its CRLF) once the head
 * is complete. */
static int head_and_first_line(const char *buf, size_t len, size_t *head_len, struct span *line)
{
    int rc = http_head_end(buf, len, HTTP_HEAD_MAX, head_len);
    if (rc == 1)
        *line = http_first_line(buf, *head_len);
    return status_of(rc);
}

int http_request_parse(const char *buf, size_t len, struct http_request *req)
{
    size_t head_len = 0;
    struct span path = {"", 0};
    struct framing f = {0};
    struct out o = {0};

    memset(req, 0, sizeof(*req));
    struct span line;
    int rc = head_and_first_line(buf, len, &head_len, &line);
    if (rc != 1)
        return rc;
    rc = parse_request_line(line, req, &path);
    if (rc)
        goto fail;
    if (req->kind == HTTP_REQ_FORWARD) {
        o.cap = origin_cap(head_len);
        o.p = malloc(o.cap);
        if (!o.p) {
            rc = E_NO_MEM;
            goto fail;
        }
        put_origin_start(&o, req, path);
    }
    rc = parse_headers(buf, head_len, line, &f, o.p ? &o : NULL);
    if (!rc)
        rc = framing_check(&f, req->http_minor);
    if (!rc && o.p && f.te)
        rc = E_LENGTH; /* see http_request.h: no chunked bodies through the proxy */
    if (rc)
        goto fail;
    if (o.p)
        req->body_len = http_digits_value(f.content_length);
    if (o.p) {
        puts_(&o, "Connection: close\r\n\r\n");
        put(&o, "", 1);
        if (o.overflow) {
            rc = E_NO_MEM;
            goto fail;
        }
        req->origin_head = o.p;
        req->origin_head_len = o.len - 1;
    }
    req->head_len = head_len;
    return 1;
fail:
    free(o.p);
    memset(req, 0, sizeof(*req));
    return rc;
}

/* ---- the sandbox API's requests ---- */

/* The request line with an origin-form target ("/..."), kept as sent. */
static int parse_server_line(struct span line, struct http_server_request *req)
{
    struct span target;
    int rc = split_request_line(line, req->method, &target, &req->http_minor);
    if (rc)
        return rc;
    if (target.p[0] != '/' || memchr(target.p, '#', target.n))
        return E_BAD;
    memcpy(req->target, target.p, target.n);
    return 0;
}

int http_request_parse_server(const char *buf, size_t len, struct http_server_request *req)
{
    return http_request_parse_server_ex(buf, len, req, 0);
}

int http_request_parse_server_ex(const char *buf, size_t len, struct http_server_request *req,
                                 unsigned flags)
{
    size_t head_len = 0;
    struct framing f = {.server = true};

    memset(req, 0, sizeof(*req));
    struct span line;
    int rc = head_and_first_line(buf, len, &head_len, &line);
    if (rc != 1)
        return rc;
    rc = parse_server_line(line, req);
    if (!rc)
        rc = parse_headers(buf, head_len, line, &f, NULL);
    if (!rc)
        rc = framing_check(&f, req->http_minor);
    if (!rc && f.te && !(flags & HTTP_SERVER_CHUNKED))
        rc = E_LENGTH;
    if (!rc && f.te) { /* decoded here: "chunked" alone, on one line */
        struct span list = f.last_te, coding = {0};
        int n = 0;
        while (http_list_next(&list, &coding))
            n++;
        if (f.tes != 1 || n != 1)
            rc = E_BAD;
    }
    if (rc) {
        memset(req, 0, sizeof(*req));
        return rc;
    }
    req->body_len = http_digits_value(f.content_length);
    req->chunked = f.te; /* checked above: "chunked" alone */
    if (f.authorization.n)
        memcpy(req->authorization, f.authorization.p, f.authorization.n);
    req->keep_alive = req->http_minor == 1 ? !http_list_has(f.connection, "close")
                                           : http_list_has(f.connection, "keep-alive");
    req->head_len = head_len;
    return 1;
}

int http_header_value(const char *head, size_t head_len, const char *name, char *out, size_t cap)
{
    size_t head_end;
    if (http_head_end(head, head_len, head_len, &head_end) != 1 || !cap)
        return -1;
    struct span first = http_first_line(head, head_end);
    size_t pos = (size_t)(first.p - head) + first.n + 2, end = head_end - 2;
    struct span line, fname, value;
    int found = 0, rc;
    while ((rc = http_field_next(head, end, &pos, &line, &fname, &value)) == 1) {
        if (!http_span_is(fname, name))
            continue;
        if (found++ || value.n >= cap)
            return -1;
        memcpy(out, value.p, value.n);
        out[value.n] = '\0';
    }
    return rc < 0 ? -1 : found;
}

void http_request_free(struct http_request *req)
{
    free(req->origin_head);
    req->origin_head = NULL;
    req->origin_head_len = 0;
}

/* ---- the proxy's own answers ---- */

static const char *status_phrase(int status)
{
    static const struct {
        int status;
        const char *phrase;
    } phrases[] = {
        {200, "Connection established"}, {400, "Bad Request"},
        {403, "Forbidden"},              {405, "Method Not Allowed"},
        {411, "Length Required"},
        {408, "Request Timeout"},        {414, "URI Too Long"},
        {431, "Request Header Fields Too Large"},
        {500, "Internal Server Error"},  {502, "Bad Gateway"},
        {503, "Service Unavailable"},    {504, "Gateway Timeout"},
        {505, "HTTP Version Not Supported"},
    };
    for (size_t i = 0; i < sizeof(phrases) / sizeof(phrases[0]); i++)
        if (phrases[i].status == status)
            return phrases[i].phrase;
    return status < 300 ? "OK" : "Error";
}

/* The head of a non-2xx answer; its length depends on the body's. */
#define ERROR_HEAD                                                                  \
    "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n" \
    "Connection: close\r\n\r\n"

size_t http_response_format(char *out, size_t cap, int status, const char *reason)
{
    if (cap)
        out[0] = '\0';
    if (status < 100 || status > 599)
        status = 500;
    const char *phrase = status_phrase(status);
    if (status >= 200 && status < 300) {
        int n = snprintf(NULL, 0, "HTTP/1.1 %d %s\r\n\r\n", status, phrase);
        if (n <= 0 || (size_t)n >= cap)
            return 0;
        snprintf(out, cap, "HTTP/1.1 %d %s\r\n\r\n", status, phrase);
        return (size_t)n;
    }
    if (!reason)
        reason = phrase;
    /* Cut the reason until head + reason + "\n" + NUL fits. */
    size_t rn = strnlen(reason, 256);
    int h;
    for (;;) {
        h = snprintf(NULL, 0, ERROR_HEAD, status, phrase, rn + 1);
        if (h > 0 && (size_t)h + rn + 2 <= cap)
            break;
        if (h <= 0 || rn == 0)
            return 0;
        rn--;
    }
    snprintf(out, cap, ERROR_HEAD, status, phrase, rn + 1);
    for (size_t i = 0; i < rn; i++) {
        unsigned char c = (unsigned char)reason[i];
        out[h + i] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
    }
    out[h + rn] = '\n';
    out[h + rn + 1] = '\0';
    return (size_t)h + rn + 1;
}
