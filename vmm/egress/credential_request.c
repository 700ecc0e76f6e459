/* Judging a decrypted request head; see credential_request.h. */
#include "vmm/egress/credential_request.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vmm/http/http_head.h"

static const char h2_preface[] = "PRI * HTTP/2.0\r\n";

static int refuse(struct cred_request *r, int status, int secret, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int refuse(struct cred_request *r, int status, int secret, const char *fmt, ...)
{
    va_list ap;
    r->status = status;
    r->secret = secret;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
    va_end(ap);
    free(r->out_head);
    r->out_head = NULL;
    r->out_len = 0;
    return 1;
}

static const char *parse_reason(int status)
{
    switch (status) {
    case 411: return "a request body needs Content-Length (no chunked uploads)";
    case 414: return "request target too long";
    case 431: return "request head too large";
    case 505: return "only HTTP/1.0 and HTTP/1.1 are relayed";
    default:  return "malformed request";
    }
}

/* One header line of a head the parser accepted (http_field_next). */
struct field {
    struct span line, name, value;
};

static bool next_field(const char *head, size_t end, size_t *pos, struct field *f)
{
    return http_field_next(head, end, pos, &f->line, &f->name, &f->value) == 1;
}

static bool name_is(const struct field *f, const char *name)
{
    return f->name.n == strlen(name) && !strncasecmp(f->name.p, name, f->name.n);
}

/* host:port as a Host header writes it: "[v6]:port" for an IPv6 literal. */
static void authority(char *o, size_t cap, const char *host, uint16_t port)
{
    snprintf(o, cap, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
}

/* Host as the guest may write it for host:port: the port may go for 443,
 * and one trailing dot after a name is the same host, as in CONNECT
 * (vmm/http/http_request.c drops it there). */
static bool host_matches(const char *v, size_t n, const char *host, uint16_t port)
{
    char want[EGRESS_HOST_MAX + 24];
    authority(want, sizeof(want), host, port);
    size_t name = (size_t)(strrchr(want, ':') - want), port_len = strlen(want) - name;
    if (n < name || strncasecmp(v, want, name))
        return false;
    v += name;
    n -= name;
    if (n && *v == '.' && !strchr(host, ':')) {
        v++;
        n--;
    }
    return (n == port_len && !memcmp(v, want + name, n)) || (n == 0 && port == 443);
}

/* Whether the value is exactly s's format around its placeholder. */
static bool is_formatted(const struct secret *s, const char *v, size_t n)
{
    const char *at = strstr(s->format, "{}");
    size_t pre = (size_t)(at - s->format), post = strlen(at + 2);
    return n == pre + s->len + post && !memcmp(v, s->format, pre) &&
           !memcmp(v + pre, s->placeholder, s->len) && !memcmp(v + pre + s->len, at + 2, post);
}

/* The first secret whose placeholder is in [p, p + n), or -1. */
static int placeholder_in(const struct secret_set *set, const char *p, size_t n)
{
    for (unsigned i = 0; i < set->n; i++)
        if (set->s[i].len && memmem(p, n, set->s[i].placeholder, set->s[i].len))
            return (int)i;
    return -1;
}

static bool for_host(const struct secret *s, const char *host, uint16_t port)
{
    return s->port == port && !strcmp(s->host, host);
}

static void put(char **o, const void *p, size_t n)
{
    memcpy(*o, p, n);
    *o += n;
}

static int build_head(const char *buf, const struct http_server_request *q, size_t first_line,
                      const struct secret_set *set, uint32_t inject, struct cred_request *r)
{
    static const char ae[] = "Accept-Encoding: identity\r\n";
    /* Each injected value may be longer than nothing at all. */
    size_t cap = q->head_len + sizeof(ae) + set->n * (SECRET_VALUE_MAX + SECRET_FORMAT_MAX + 8);
    char *o = malloc(cap), *w = o;
    if (!o)
        return refuse(r, 500, -1, "out of memory");
    put(&w, buf, first_line);
    size_t pos = first_line;
    struct field f;
    while (next_field(buf, q->head_len - 2, &pos, &f)) {
        if (name_is(&f, "Accept-Encoding"))
            continue;
        bool done = false;
        for (unsigned i = 0; i < set->n && !done; i++) {
            const struct secret *s = &set->s[i];
            if (!(inject & (1u << i)) || !name_is(&f, s->header))
                continue;
            const char *at = strstr(s->format, "{}");
            put(&w, f.name.p, f.name.n);
            put(&w, ": ", 2);
            put(&w, s->format, (size_t)(at - s->format));
            put(&w, s->value, s->len);
            put(&w, at + 2, strlen(at + 2));
            put(&w, "\r\n", 2);
            done = true;
        }
        if (!done) {
            put(&w, f.line.p, f.line.n);
            put(&w, "\r\n", 2);
        }
    }
    put(&w, ae, sizeof(ae) - 1);
    put(&w, "\r\n", 2);
    r->out_head = o;
    r->out_len = (size_t)(w - o);
    return 1;
}

int cred_request_judge(const char *buf, size_t len, const struct secret_set *set,
                       const char *host, uint16_t port, struct cred_request *r)
{
    memset(r, 0, sizeof(*r));
    r->secret = -1;
    if (len >= sizeof(h2_preface) - 1 && !memcmp(buf, h2_preface, sizeof(h2_preface) - 1))
        return refuse(r, 505, -1, "HTTP/2 is not relayed on credential connections: use HTTP/1.1");
    struct http_server_request q;
    int rc = http_request_parse_server(buf, len, &q);
    if (rc == 0)
        return 0;
    if (rc < 0)
        return refuse(r, -rc, -1, "%s", parse_reason(-rc));
    snprintf(r->method, sizeof(r->method), "%s", q.method);
    snprintf(r->target, sizeof(r->target), "%s", q.target);
    r->keep_alive = q.keep_alive;
    r->head_len = q.head_len;
    r->body_len = q.body_len;

    int i = placeholder_in(set, q.target, strlen(q.target));
    if (i >= 0)
        return refuse(r, 403, i, "the placeholder of %s is in the URL: it is replaced only in "
                      "its %s header", set->s[i].name, set->s[i].header);
    size_t first_line = (size_t)((const char *)memmem(buf, q.head_len, "\r\n", 2) - buf) + 2;
    size_t pos = first_line;
    bool host_seen = false;
    uint32_t inject = 0;
    struct field f;
    while (next_field(buf, q.head_len - 2, &pos, &f)) {
        if (name_is(&f, "Host")) {
            if (!host_matches(f.value.p, f.value.n, host, port)) {
                char want[EGRESS_HOST_MAX + 24];
                authority(want, sizeof(want), host, port);
                return refuse(r, 403, -1, "Host '%.*s' is not %s, the host and port this "
                              "connection was opened for", (int)(f.value.n > 100 ? 100 : f.value.n),
                              f.value.p, want);
            }
            host_seen = true;
        } else if (name_is(&f, "Upgrade")) {
            return refuse(r, 403, -1, "protocol upgrades (WebSocket, h2c) are not relayed on "
                          "credential connections");
        }
        /* Every placeholder in this line: each must be its own secret's,
         * for this host, in its header, in its format. */
        for (unsigned k = 0; k < set->n; k++) {
            const struct secret *s = &set->s[k];
            if (!s->len || !memmem(f.value.p, f.value.n, s->placeholder, s->len)) {
                if (s->len && memmem(f.name.p, f.name.n, s->placeholder, s->len))
                    return refuse(r, 403, (int)k, "the placeholder of %s is in a header name", s->name);
                continue;
            }
            if (!for_host(s, host, port))
                return refuse(r, 403, (int)k, "the placeholder of %s was sent to %s, which does "
                              "not get it (it is for %s:%u)", s->name, host, s->host, s->port);
            if (!name_is(&f, s->header))
                return refuse(r, 403, (int)k, "the placeholder of %s is in the %.*s header: it is "
                              "replaced only in %s", s->name, (int)(f.name.n > 60 ? 60 : f.name.n),
                              f.name.p, s->header);
            if (!is_formatted(s, f.value.p, f.value.n))
                return refuse(r, 403, (int)k, "the %s header holds the placeholder of %s but not "
                              "as '%s'", s->header, s->name, s->format);
            if (inject & (1u << k))
                return refuse(r, 403, (int)k, "the %s header is sent twice", s->header);
            inject |= 1u << k;
        }
    }
    if (!host_seen)
        return refuse(r, 400, -1, "no Host header");
    for (unsigned k = 0; k < set->n; k++) {
        const struct secret *s = &set->s[k];
        if (!(inject & (1u << k)))
            continue;
        if (!secret_in_scope(s, q.method, q.target, strlen(q.target)))
            return refuse(r, 403, (int)k, "%s is not for %s %.200s on %s (outside its methods "
                          "or paths)", s->name, q.method, q.target, host);
        if (!s->value)
            return refuse(r, 500, (int)k, "the value of %s is not here", s->name);
        if (r->secret < 0)
            r->secret = (int)k;
    }
    r->injected = inject;
    return build_head(buf, &q, first_line, set, inject, r);
}

void cred_request_free(struct cred_request *r)
{
    if (r->out_head) {
        /* It held a real value. */
        explicit_bzero(r->out_head, r->out_len);
        free(r->out_head);
    }
    r->out_head = NULL;
    r->out_len = 0;
}
