/* The credential path: TLS both ways, requests judged, responses
 * scrubbed; see credential_proxy.h. */
#include "vmm/egress/credential_proxy.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "vmm/egress/credential_request.h"
#include "vmm/http/http_chunked.h"
#include "vmm/http/http_response.h"

#define IO_BUF (64 * 1024)
#define IN_CAP (HTTP_RESPONSE_HEAD_MAX + IO_BUF)
#define OUT_CAP (HTTP_CHUNK_HEADER_MAX + IO_BUF + SCRUB_LEN_MAX + 2)

/* ---- one connection ----------------------------------------------------- */

struct inbuf {
    char b[IN_CAP];
    size_t off, len; /* unread bytes: b[off, off + len) */
};

struct cred_conn {
    struct cred_proxy *p;
    char host[EGRESS_HOST_MAX + 1];
    uint16_t port;
    uint64_t id;
    int gfd, ufd;
    SSL *g, *u;
    char upstream_err[512]; /* the upstream handshake failed: why */
    struct inbuf gin, uin;
    char out[OUT_CAP];
    uint64_t bytes_out, bytes_in; /* of the current request and response bodies */
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* More bytes into in (compacted first); >0, or 0 at EOF / error. */
static int fill(SSL *ssl, struct inbuf *in)
{
    if (in->off && in->len)
        memmove(in->b, in->b + in->off, in->len);
    in->off = 0;
    if (in->len == sizeof(in->b))
        return 0;
    int n = SSL_read(ssl, in->b + in->len, (int)(sizeof(in->b) - in->len));
    if (n <= 0)
        return 0;
    in->len += (size_t)n;
    return n;
}

static void consume(struct inbuf *in, size_t n)
{
    in->off += n;
    in->len -= n;
    if (!in->len)
        in->off = 0;
}

static int send_all(SSL *ssl, const char *p, size_t n)
{
    while (n) {
        int w = SSL_write(ssl, p, (int)(n > INT32_MAX ? INT32_MAX : n));
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void answer(struct cred_conn *c, int status, const char *reason)
{
    char buf[512];
    size_t n = http_response_format(buf, sizeof(buf), status, reason);
    send_all(c->g, buf, n);
}

static void record(struct cred_conn *c, const struct cred_request *r, const char *decision,
                   int status, const char *reason, uint64_t t0)
{
    const struct secret_set *set = c->p->set;
    struct audit_rec a;
    audit_begin(c->p->audit, &a, "credential");
    audit_u64(&a, "conn", c->id);
    audit_str(&a, "decision", decision);
    if (r->injected) {
        const char *names[SECRET_MAX];
        size_t n = 0;
        for (unsigned i = 0; i < set->n; i++)
            if (r->injected & (1u << i))
                names[n++] = set->s[i].name;
        audit_strv(&a, "secrets", names, n);
    } else if (r->secret >= 0) {
        audit_strv(&a, "secrets", (const char *const[]){set->s[r->secret].name}, 1);
    }
    audit_str(&a, "host", c->host);
    audit_u64(&a, "port", c->port);
    audit_str(&a, "method", r->method);
    audit_str(&a, "path", r->target);
    audit_u64(&a, "status", (uint64_t)status);
    if (reason)
        audit_str(&a, "reason", reason);
    audit_u64(&a, "bytes_out", c->bytes_out);
    audit_u64(&a, "bytes_in", c->bytes_in);
    audit_u64(&a, "duration_ms", now_ms() - t0);
    audit_end(c->p->audit, &a);
}

/* Reads a request head from the guest and judges it: 1 with *r, or 0
 * when the guest closed or went quiet. */
static int read_request(struct cred_conn *c, struct cred_request *r)
{
    for (;;) {
        size_t len = c->gin.len < HTTP_HEAD_MAX ? c->gin.len : HTTP_HEAD_MAX;
        int rc = cred_request_judge(c->gin.b + c->gin.off, len, c->p->set, c->host, c->port, r);
        if (rc)
            return 1;
        if (c->gin.len >= HTTP_HEAD_MAX || !fill(c->g, &c->gin))
            return 0;
    }
}

/* The first secret whose placeholder is in p[0, n), or -1. */
static int placeholder_in_body(const struct cred_conn *c, const char *p, size_t n)
{
    for (unsigned i = 0; i < c->p->set->n; i++)
        if (memmem(p, n, c->p->set->s[i].placeholder, c->p->set->s[i].len))
            return (int)i;
    return -1;
}

/* The request body (Content-Length bytes) to the upstream, through the
 * placeholder detector.  A placeholder there is a refusal: the upstream
 * never gets the body's last bytes (the detector holds back a
 * placeholder's length), so it has no complete request to act on.
 * 0; -1 the connection failed; -2 a placeholder (*which). */
static int send_body(struct cred_conn *c, uint64_t left, int *which)
{
    struct scrub det;
    int rc = scrub_init(&det, c->p->detect, c->p->set->n) ? -1 : 0;
    while (left && !rc) {
        if (!c->gin.len && !fill(c->g, &c->gin)) {
            rc = -1;
            break;
        }
        size_t n = c->gin.len < left ? c->gin.len : (size_t)left;
        if (n > IO_BUF)
            n = IO_BUF;
        size_t out = scrub_feed(&det, c->gin.b + c->gin.off, n, c->out, sizeof(c->out));
        consume(&c->gin, n);
        left -= n;
        for (unsigned i = 0; i < c->p->set->n && !rc; i++)
            if (det.hits[i]) {
                *which = (int)i;
                rc = -2;
            }
        /* Counting patterns hold nothing back: the detector sees a
         * placeholder before its last byte is sent, and we stop there.
         * bytes_out counts what went, not the piece withheld. */
        if (!rc && (out == SCRUB_NO_ROOM || send_all(c->u, c->out, out)))
            rc = -1;
        if (!rc)
            c->bytes_out += out;
    }
    scrub_free(&det);
    return rc;
}

/* Scrubbed bytes at o[0, n) to the guest, as one chunk when `chunk`;
 * o has HTTP_CHUNK_HEADER_MAX bytes of room before it and 2 after. */
static int emit(struct cred_conn *c, char *o, size_t n, bool chunk)
{
    if (n == SCRUB_NO_ROOM)
        return -1;
    if (!n)
        return 0;
    if (chunk) {
        char line[HTTP_CHUNK_HEADER_MAX];
        size_t l = http_chunk_header(line, n);
        o -= l;
        memcpy(o, line, l);
        memcpy(o + l + n, HTTP_CHUNK_END, 2);
        n += l + 2;
    }
    return send_all(c->g, o, n);
}

/* Response body bytes through the scrubber to the guest. */
static int relay_scrubbed(struct cred_conn *c, struct scrub *s, const char *p, size_t n, bool chunk)
{
    char *o = c->out + HTTP_CHUNK_HEADER_MAX;
    size_t room = sizeof(c->out) - HTTP_CHUNK_HEADER_MAX - 2;
    while (n) {
        size_t take = n > IO_BUF ? IO_BUF : n;
        c->bytes_in += take;
        if (emit(c, o, scrub_feed(s, p, take, o, room), chunk))
            return -1;
        p += take;
        n -= take;
    }
    return 0;
}

/* The body ended: what the scrubber held back, and the last chunk. */
static int flush_scrubbed(struct cred_conn *c, struct scrub *s, bool chunk)
{
    char *o = c->out + HTTP_CHUNK_HEADER_MAX;
    if (emit(c, o, scrub_flush(s, o, sizeof(c->out) - HTTP_CHUNK_HEADER_MAX - 2), chunk))
        return -1;
    return chunk ? send_all(c->g, HTTP_CHUNK_LAST, sizeof(HTTP_CHUNK_LAST) - 1) : 0;
}

/* A response head, scrubbed whole (a reflected request header), to the
 * guest: same length out as in. */
static int relay_head(struct cred_conn *c, size_t head_len)
{
    struct scrub s;
    size_t cap = head_len + SCRUB_LEN_MAX;
    char *head = malloc(cap);
    int rc = head && !scrub_init(&s, c->p->scrub, c->p->nscrub) ? 0 : -1;
    if (!rc) {
        size_t n = scrub_feed(&s, c->uin.b + c->uin.off, head_len, head, cap), m = 0;
        if (n != SCRUB_NO_ROOM)
            m = scrub_flush(&s, head + n, cap - n);
        rc = n == SCRUB_NO_ROOM || m == SCRUB_NO_ROOM ? -1 : send_all(c->g, head, n + m);
        scrub_free(&s);
    }
    free(head);
    consume(&c->uin, head_len);
    return rc;
}

/* A body of Content-Length bytes, or until the upstream closes. */
static const char *relay_plain_body(struct cred_conn *c, struct scrub *s, uint64_t left,
                                    bool until_close)
{
    while (left) {
        if (!c->uin.len && !fill(c->u, &c->uin)) {
            if (until_close)
                break;
            return "the upstream closed in the middle of its body";
        }
        size_t n = c->uin.len < left ? c->uin.len : (size_t)left;
        if (relay_scrubbed(c, s, c->uin.b + c->uin.off, n, false))
            return "the guest closed";
        consume(&c->uin, n);
        if (!until_close)
            left -= n;
    }
    return flush_scrubbed(c, s, false) ? "the guest closed" : NULL;
}

/* A chunked body: decoded, scrubbed as one stream (a value split across
 * two chunks is still found), sent as chunks of our own, no trailers. */
static const char *relay_chunked_body(struct cred_conn *c, struct scrub *s)
{
    struct http_chunked ch;
    http_chunked_init(&ch);
    for (;;) {
        if (!c->uin.len && !fill(c->u, &c->uin))
            return "the upstream closed in the middle of its body";
        size_t used = 0, dlen = 0;
        const char *data = NULL;
        int st = http_chunked_feed(&ch, c->uin.b + c->uin.off, c->uin.len, &used, &data, &dlen);
        if (st == HTTP_CHUNKED_BAD)
            return "the upstream's chunked body is malformed";
        if (dlen && relay_scrubbed(c, s, data, dlen, true))
            return "the guest closed";
        consume(&c->uin, used);
        if (st == HTTP_CHUNKED_DONE)
            break;
    }
    return flush_scrubbed(c, s, true) ? "the guest closed" : NULL;
}

/* One response, head and body, scrubbed.  Returns the status, with
 * *again whether the connection may carry another request; or -1 with
 * *why when the relay failed (the guest then gets a 502 unless *sent:
 * part of the response went already). */
static int relay_response(struct cred_conn *c, bool head_request, bool *again, const char **why,
                          bool *sent)
{
    struct http_response resp;
    *sent = false;
    for (;;) {
        int rc;
        while ((rc = http_response_parse(c->uin.b + c->uin.off, c->uin.len, &resp)) == 0)
            if (!fill(c->u, &c->uin))
                return *why = "the upstream closed without answering", -1;
        if (rc < 0)
            return *why = rc == -2 ? "the upstream's response head is too large"
                                   : "the upstream's response head is malformed", -1;
        if (resp.status == 101 || resp.upgrade)
            return *why = "the upstream switched protocols, which is not relayed", -1;
        enum http_body_kind kind = http_response_body(&resp, head_request);
        if (kind != HTTP_BODY_NONE && !resp.content_encoding_identity)
            return *why = "the upstream compressed its body although asked for identity: "
                          "a compressed body cannot be scrubbed", -1;
        if (relay_head(c, resp.head_len))
            return *why = "the guest closed", -1;
        *sent = true;
        if (resp.status < 200)
            continue; /* 100 Continue and friends: the final answer follows */
        *again = !resp.connection_close && kind != HTTP_BODY_UNTIL_CLOSE;
        if (kind == HTTP_BODY_NONE)
            return resp.status;
        struct scrub s;
        if (scrub_init(&s, c->p->scrub, c->p->nscrub))
            return *why = "out of memory", -1;
        *why = kind == HTTP_BODY_CHUNKED ? relay_chunked_body(c, &s)
                                         : relay_plain_body(c, &s, resp.content_length,
                                                            kind == HTTP_BODY_UNTIL_CLOSE);
        scrub_free(&s);
        return *why ? -1 : resp.status;
    }
}

static bool upstream_handshake(struct cred_conn *c)
{
    c->u = SSL_new(c->p->client);
    X509_VERIFY_PARAM *vp = c->u ? SSL_get0_param(c->u) : NULL;
    bool ip = egress_host_is_ip(c->host);
    if (!c->u || !SSL_set_fd(c->u, c->ufd) ||
        (ip ? !X509_VERIFY_PARAM_set1_ip_asc(vp, c->host)
            : (!SSL_set_tlsext_host_name(c->u, c->host) || !SSL_set1_host(c->u, c->host)))) {
        snprintf(c->upstream_err, sizeof(c->upstream_err), "cannot set up TLS to the upstream");
        return false;
    }
    if (SSL_connect(c->u) == 1)
        return true;
    long v = SSL_get_verify_result(c->u);
    unsigned long e = ERR_get_error();
    char buf[160] = "";
    if (v != X509_V_OK)
        snprintf(buf, sizeof(buf), "certificate verification failed: %s", X509_verify_cert_error_string(v));
    else if (e)
        ERR_error_string_n(e, buf, sizeof(buf));
    else
        snprintf(buf, sizeof(buf), "the connection closed");
    snprintf(c->upstream_err, sizeof(c->upstream_err), "TLS to %s:%u failed: %s", c->host, c->port, buf);
    ERR_clear_error();
    return false;
}

static void serve(struct cred_conn *c)
{
    struct timeval tv = {.tv_sec = CRED_IDLE_MS / 1000};
    setsockopt(c->gfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(c->gfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(c->ufd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(c->ufd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    int idx = cred_proxy_host(c->p, c->host, c->port);
    c->g = SSL_new(c->p->server[idx]);
    if (!c->g || !SSL_set_fd(c->g, c->gfd) || SSL_accept(c->g) != 1) {
        /* The guest's client refused our certificate (no CA in its trust
         * store), offered only h2, or named another host: its own error
         * says which; the record says it happened. */
        unsigned long e = ERR_get_error();
        char buf[200] = "the TLS handshake with the guest failed";
        if (e)
            snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ": %s", ERR_reason_error_string(e));
        struct cred_request none = {.secret = -1};
        record(c, &none, "deny", 0, buf, now_ms());
        ERR_clear_error();
        return;
    }
    bool up = upstream_handshake(c);
    for (;;) {
        struct cred_request r;
        c->bytes_out = c->bytes_in = 0;
        if (!read_request(c, &r))
            break;
        uint64_t t0 = now_ms();
        if (r.status) {
            answer(c, r.status, r.reason);
            record(c, &r, "deny", r.status, r.reason, t0);
            cred_request_free(&r);
            break;
        }
        if (!up) {
            answer(c, 502, c->upstream_err);
            record(c, &r, "deny", 502, c->upstream_err, t0);
            cred_request_free(&r);
            break;
        }
        /* A body that fits is read and searched whole before anything
         * goes upstream; a larger one streams (send_body). */
        int which = -1, b = 0;
        if (r.body_len <= IO_BUF) {
            while (c->gin.len < r.head_len + r.body_len && fill(c->g, &c->gin))
                ;
            if (c->gin.len < r.head_len + r.body_len)
                b = -1;
            else if ((which = placeholder_in_body(c, c->gin.b + c->gin.off + r.head_len,
                                                  (size_t)r.body_len)) >= 0)
                b = -2;
        }
        if (!b) {
            consume(&c->gin, r.head_len);
            b = send_all(c->u, r.out_head, r.out_len) ? -1 : send_body(c, r.body_len, &which);
        }
        cred_request_free(&r);
        if (b == -2) {
            char why[400];
            snprintf(why, sizeof(why), "the placeholder of %s is in the request body: it is "
                     "replaced only in its %s header", c->p->set->s[which].name,
                     c->p->set->s[which].header);
            r.secret = which;
            r.injected = 0;
            answer(c, 403, why);
            record(c, &r, "deny", 403, why, t0);
            break;
        }
        if (b) {
            if (r.injected)
                record(c, &r, "allow", 0, "the connection failed while sending the request", t0);
            break;
        }
        bool again = false, sent = false;
        const char *why = NULL;
        int status = relay_response(c, !strcmp(r.method, "HEAD"), &again, &why, &sent);
        if (status < 0 && !sent)
            answer(c, 502, why);
        if (r.injected || status < 0)
            record(c, &r, r.injected ? "allow" : "pass", status < 0 ? 502 : status, why, t0);
        if (status < 0 || !again || !r.keep_alive)
            break;
    }
}

static void *cred_conn_thread(void *arg)
{
    struct cred_conn *c = arg;
    serve(c);
    if (c->g)
        SSL_shutdown(c->g);
    SSL_free(c->g);
    SSL_free(c->u);
    close(c->gfd);
    close(c->ufd);
    explicit_bzero(c, sizeof(*c)); /* request heads with values passed through it */
    free(c);
    ERR_clear_error();
    return NULL;
}

int cred_proxy_start(struct cred_proxy *p, const char *host, uint16_t port, uint64_t conn,
                     int guest, int upstream)
{
    struct cred_conn *c = calloc(1, sizeof(*c));
    if (!c) {
        close(guest);
        close(upstream);
        return -ENOMEM;
    }
    c->p = p;
    snprintf(c->host, sizeof(c->host), "%s", host);
    c->port = port;
    c->id = conn;
    c->gfd = guest;
    c->ufd = upstream;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &at, cred_conn_thread, c);
    pthread_attr_destroy(&at);
    if (rc) {
        close(guest);
        close(upstream);
        free(c);
        return -rc;
    }
    return 0;
}
