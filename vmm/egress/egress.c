/* The VM-facing half of egress; see egress.h. */
#include "vmm/egress/egress.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h" /* agent_send_all */
#include "vmm/egress/egress_broker.h"
#include "vmm/http/http_request.h"
#include "vmm/jail/seccomp.h"

#define RELAY_BUF (64 * 1024)

struct egress_conn {
    struct egress *e;
    uint64_t id;
    int guest, remote;      /* guest: our end of the vsock socketpair */
    unsigned slot;          /* index in e->conns */
    uint64_t t0;
    struct http_request req;
    struct egress_verdict v;
    char head[HTTP_HEAD_MAX];
    size_t have;            /* bytes in head (the head, and what followed it) */
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int egress_init(struct egress *e, const struct egress_config *cfg, const struct audit *audit,
                int broker)
{
    memset(e, 0, sizeof(*e));
    e->handoff[0] = e->handoff[1] = -1;
    e->cfg = cfg;
    e->audit = audit;
    e->broker = broker;
    e->starts = calloc(cfg->rate_per_min ? cfg->rate_per_min : 1, sizeof(*e->starts));
    if (!e->starts)
        return -ENOMEM;
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->idle, NULL);
    return 0;
}

static void answer(struct egress_conn *c, int status, const char *reason)
{
    char out[512];
    size_t n = http_response_format(out, sizeof(out), status, reason);
    agent_send_all(c->guest, out, n);
}

/* Reads until a complete head (1), a malformed one (-status), or the guest
 * gave up or ran out of time (0). */
static int read_head(struct egress_conn *c)
{
    uint64_t deadline = now_ms() + EGRESS_HEAD_TIMEOUT_MS;
    for (;;) {
        int rc = http_request_parse(c->head, c->have, &c->req);
        if (rc)
            return rc;
        uint64_t now = now_ms();
        struct pollfd p = {.fd = c->guest, .events = POLLIN};
        if (now >= deadline || poll(&p, 1, (int)(deadline - now)) <= 0)
            return 0;
        ssize_t n = recv(c->guest, c->head + c->have, sizeof(c->head) - c->have, 0);
        if (n <= 0)
            return 0;
        c->have += (size_t)n;
    }
}

/* A relay slot, or the limit that refused it (static text). */
static const char *take_slot(struct egress *e)
{
    const char *why = NULL;
    uint64_t now = now_ms();
    pthread_mutex_lock(&e->lock);
    unsigned cap = e->cfg->rate_per_min;
    /* Sliding window: the oldest of the last `cap` starts must be a minute old. */
    if (e->stopping)
        why = "the VM is stopping";
    else if (e->active >= e->cfg->max_conns)
        why = "too many egress connections open at once (--egress-max-conns)";
    else if (e->starts_n == cap && now - e->starts[e->starts_head] < 60000)
        why = "too many egress connections per minute (--egress-rate)";
    if (!why) {
        e->active++;
        e->starts[e->starts_head] = now;
        e->starts_head = (e->starts_head + 1) % cap;
        if (e->starts_n < cap)
            e->starts_n++;
    }
    pthread_mutex_unlock(&e->lock);
    return why;
}

static void record_attempt(struct egress_conn *c, const char *decision, int status,
                           const char *reason)
{
    struct audit_rec r;
    audit_begin(c->e->audit, &r, "egress");
    audit_u64(&r, "conn", c->id);
    audit_str(&r, "decision", decision);
    audit_str(&r, "kind", c->req.kind == HTTP_REQ_CONNECT ? "connect" : "http");
    audit_str(&r, "method", c->req.method);
    audit_str(&r, "host", c->req.host);
    audit_u64(&r, "port", c->req.port);
    if (c->v.addr[0])
        audit_str(&r, "address", c->v.addr);
    if (c->v.credential)
        audit_bool(&r, "credential", true);
    if (status == 200)
        audit_str(&r, "rule", c->v.rule);
    else
        audit_str(&r, "reason", reason);
    audit_u64(&r, "status", (uint64_t)status);
    audit_u64(&r, "decision_ms", now_ms() - c->t0);
    audit_end(c->e->audit, &r);
    if (status != 200 && !c->e->cfg->quiet)
        fprintf(stderr, "airlock: egress %s: %s\n", status == 403 ? "denied" : "refused", reason);
}

/* Bytes both ways until both directions ended, a cap, or idleness. */
static const char *relay(struct egress_conn *c, uint64_t *out_bytes, uint64_t *in_bytes)
{
    char *buf[2] = {malloc(RELAY_BUF), malloc(RELAY_BUF)};
    size_t len[2] = {0, 0}, off[2] = {0, 0};
    int from[2] = {c->guest, c->remote}, to[2] = {c->remote, c->guest};
    bool eof[2] = {false, false}, shut[2] = {false, false};
    uint64_t *count[2] = {out_bytes, in_bytes};
    const char *end = "closed";
    if (!buf[0] || !buf[1]) {
        end = "out of memory";
        goto out;
    }
    /* What followed the head in the first reads goes first.  A forwarded
     * request sends its body and nothing more (http_request.h): `left`
     * counts what the guest may still send; CONNECT tunnels everything. */
    bool forward = c->req.kind == HTTP_REQ_FORWARD;
    uint64_t left = forward ? c->req.body_len : UINT64_MAX;
    size_t extra = c->have - c->req.head_len;
    if (extra > left)
        extra = (size_t)left;
    left -= extra;
    if (forward) {
        if (agent_send_all(c->remote, c->req.origin_head, c->req.origin_head_len)) {
            end = "the server closed";
            goto out;
        }
    }
    memcpy(buf[0], c->head + c->req.head_len, extra);
    len[0] = extra;
    *out_bytes += extra;
    for (;;) {
        struct pollfd p[4];
        int np = 0, idx[4];
        if (left == 0 && len[0] == 0 && !shut[0]) {
            /* The request is all sent: the guest's further bytes stay
             * unread, and the server keeps its side open for the answer
             * (no half-close: some servers take it as an abort). */
            eof[0] = shut[0] = true;
        }
        for (int d = 0; d < 2; d++) {
            if (!eof[d] && len[d] == 0) { /* room to read */
                p[np] = (struct pollfd){.fd = from[d], .events = POLLIN};
                idx[np++] = d;
            }
            if (len[d] > off[d]) { /* bytes to write */
                p[np] = (struct pollfd){.fd = to[d], .events = POLLOUT};
                idx[np++] = d + 2;
            }
        }
        if (np == 0)
            break; /* both directions drained and ended */
        int n = poll(p, (nfds_t)np, EGRESS_IDLE_TIMEOUT_MS);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            end = n == 0 ? "idle timeout" : "poll failed";
            break;
        }
        for (int i = 0; i < np; i++) {
            if (!p[i].revents)
                continue;
            int d = idx[i] & 1;
            if (idx[i] < 2) {
                size_t room = d == 0 && left < RELAY_BUF ? (size_t)left : RELAY_BUF;
                ssize_t r = recv(from[d], buf[d], room, 0);
                if (r < 0 && (errno == EINTR || errno == EAGAIN))
                    continue;
                if (r <= 0) {
                    eof[d] = true;
                } else {
                    len[d] = (size_t)r;
                    off[d] = 0;
                    *count[d] += (uint64_t)r;
                    if (d == 0 && left != UINT64_MAX)
                        left -= (uint64_t)r;
                }
            } else {
                ssize_t w = send(to[d], buf[d] + off[d], len[d] - off[d], MSG_NOSIGNAL);
                if (w < 0 && (errno == EINTR || errno == EAGAIN))
                    continue;
                if (w <= 0) {
                    end = d == 0 ? "the server closed" : "the guest closed";
                    goto out;
                }
                off[d] += (size_t)w;
                if (off[d] == len[d])
                    len[d] = off[d] = 0;
            }
        }
        for (int d = 0; d < 2; d++) {
            if (*count[d] > c->e->cfg->max_bytes) {
                end = d == 0 ? "byte limit (guest to server, --egress-max-mib)"
                             : "byte limit (server to guest, --egress-max-mib)";
                goto out;
            }
            /* A direction that ended and drained: pass the half-close on. */
            if (eof[d] && len[d] == 0 && !shut[d]) {
                shutdown(to[d], SHUT_WR);
                shut[d] = true;
            }
        }
        if (shut[0] && shut[1])
            break;
    }
out:
    free(buf[0]);
    free(buf[1]);
    return end;
}

static void record_end(struct egress_conn *c, const char *end, uint64_t out_b, uint64_t in_b)
{
    struct audit_rec r;
    audit_begin(c->e->audit, &r, "egress_end");
    audit_u64(&r, "conn", c->id);
    audit_str(&r, "host", c->req.host);
    audit_u64(&r, "port", c->req.port);
    audit_str(&r, "address", c->v.addr);
    audit_u64(&r, "bytes_out", out_b);
    audit_u64(&r, "bytes_in", in_b);
    audit_u64(&r, "duration_ms", now_ms() - c->t0);
    audit_str(&r, "end", end);
    audit_end(c->e->audit, &r);
    if (!strncmp(end, "byte limit", 10) && !c->e->cfg->quiet)
        fprintf(stderr, "airlock: egress to %s:%u cut: %s\n", c->req.host, c->req.port, end);
}

static void serve(struct egress_conn *c)
{
    int rc = read_head(c);
    if (rc == 0)
        return; /* the guest went away before asking anything */
    if (rc < 0) {
        const char *why = rc == -431 ? "request head too large" : rc == -405
                              ? "only CONNECT host:port and http:// requests go through this proxy"
                              : rc == -411 ? "a request body needs Content-Length (no chunked uploads)"
                              : "malformed proxy request";
        snprintf(c->req.host, sizeof(c->req.host), "%s", "");
        record_attempt(c, "deny", -rc, why);
        answer(c, -rc, why);
        return;
    }
    /* A placeholder this side can see is never going where its secret
     * goes (that is inside TLS, in the broker): refused. */
    const struct secret_set *set = &c->e->cfg->secrets;
    for (unsigned i = 0; i < set->n; i++) {
        if (!memmem(c->head, c->req.head_len, set->s[i].placeholder, set->s[i].len))
            continue;
        char why[600];
        snprintf(why, sizeof(why), "the placeholder of %s is in a %s request to %.100s: it is "
                 "replaced only inside HTTPS to %s", set->s[i].name,
                 c->req.kind == HTTP_REQ_CONNECT ? "CONNECT" : "plain HTTP", c->req.host,
                 set->s[i].host);
        record_attempt(c, "deny", 403, why);
        answer(c, 403, why);
        return;
    }
    const char *limit = take_slot(c->e);
    if (limit) {
        record_attempt(c, "deny", 429, limit);
        answer(c, 429, limit);
        return;
    }
    if (c->e->broker < 0) {
        c->v.status = 403;
        snprintf(c->v.reason, sizeof(c->v.reason), "%.100s:%u: egress is off (no --allow or --allow-ip rules)",
                 c->req.host, c->req.port);
    } else if (egress_broker_connect(c->e->broker, c->req.host, c->req.port,
                                     c->req.kind == HTTP_REQ_CONNECT, c->id, &c->v, &c->remote) < 0 &&
               c->v.status == 200) {
        c->v.status = 502;
    }
    record_attempt(c, c->v.status == 200 ? "allow" : "deny", c->v.status, c->v.reason);
    if (c->v.status != 200) {
        answer(c, c->v.status, c->v.reason);
    } else {
        if (c->req.kind == HTTP_REQ_CONNECT)
            answer(c, 200, NULL);
        uint64_t out_b = 0, in_b = 0;
        const char *end = relay(c, &out_b, &in_b);
        record_end(c, end, out_b, in_b);
    }
    pthread_mutex_lock(&c->e->lock);
    c->e->active--;
    pthread_mutex_unlock(&c->e->lock);
}

static void conn_release(struct egress_conn *c);

static void *conn_thread(void *arg)
{
    struct egress_conn *c = arg;
    serve(c);
    conn_release(c);
    return NULL;
}

/* Ends a connection that never got its thread, or whose thread is done. */
static void conn_release(struct egress_conn *c)
{
    struct egress *e = c->e;
    http_request_free(&c->req);
    pthread_mutex_lock(&e->lock);
    e->conns[c->slot] = NULL;
    close(c->guest);
    if (c->remote >= 0) {
        /* A sandbox's broker holds a copy of the socket (to cut it if the
         * allowlist changes: egress_live.h), so close() alone would not
         * end the connection; the shutdown ends it, and tells the broker. */
        shutdown(c->remote, SHUT_RDWR);
        close(c->remote);
    }
    if (--e->threads == 0)
        pthread_cond_broadcast(&e->idle);
    pthread_mutex_unlock(&e->lock);
    free(c);
}

int egress_accept(struct egress *e)
{
    int sv[2];
    struct egress_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        free(c);
        return -errno;
    }
    fcntl(sv[0], F_SETFL, O_NONBLOCK); /* the device's end */
    c->e = e;
    c->guest = sv[1];
    c->remote = -1;
    c->t0 = now_ms();
    int rc = -EBUSY;
    pthread_mutex_lock(&e->lock);
    for (unsigned i = 0; i < EGRESS_MAX_THREADS && !e->stopping && e->handoff[1] >= 0; i++) {
        if (e->conns[i])
            continue;
        c->slot = i;
        c->id = ++e->next_id;
        /* One pointer per write (atomic for a pipe), under the lock that
         * egress_stop closes the pipe under; at most 256 are ever queued,
         * far below a pipe's capacity, so this never blocks. */
        if (write(e->handoff[1], &c, sizeof(c)) != (ssize_t)sizeof(c)) {
            rc = -EAGAIN;
            break;
        }
        e->conns[i] = c;
        e->threads++;
        rc = 0;
        break;
    }
    pthread_mutex_unlock(&e->lock);
    if (rc) {
        close(sv[0]);
        close(sv[1]);
        free(c);
        return rc;
    }
    return sv[0];
}

/* The dispatcher: started before the event loop's seccomp filter goes on,
 * it installs the worker filter and starts one thread per connection, so
 * connection threads are bound by the worker list alone (a thread the loop
 * created would inherit the loop's list too, and need the union of both). */
static void *dispatcher(void *arg)
{
    struct egress *e = arg;
    if (seccomp_apply(SECCOMP_WORKER))
        return NULL; /* connections then wait in the pipe; the guest sees no answer */
    struct egress_conn *c;
    ssize_t n;
    while ((n = read(e->handoff[0], &c, sizeof(c))) == (ssize_t)sizeof(c) || (n < 0 && errno == EINTR)) {
        if (n < 0)
            continue;
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &at, conn_thread, c))
            conn_release(c);
        pthread_attr_destroy(&at);
    }
    return NULL;
}

int egress_start(struct egress *e)
{
    if (pipe2(e->handoff, O_CLOEXEC) < 0)
        return -errno;
    pthread_t t;
    int rc = pthread_create(&t, NULL, dispatcher, e);
    if (rc) {
        close(e->handoff[0]);
        close(e->handoff[1]);
        e->handoff[0] = e->handoff[1] = -1;
        return -rc;
    }
    pthread_detach(t);
    return 0;
}

void egress_stop(struct egress *e)
{
    if (!e->cfg)
        return; /* never initialised: no egress in this run */
    pthread_mutex_lock(&e->lock);
    e->stopping = true;
    if (e->handoff[1] >= 0) { /* the dispatcher ends at EOF */
        close(e->handoff[1]);
        e->handoff[1] = -1;
    }
    for (unsigned i = 0; i < EGRESS_MAX_THREADS; i++) {
        if (!e->conns[i])
            continue;
        shutdown(e->conns[i]->guest, SHUT_RDWR);
        if (e->conns[i]->remote >= 0)
            shutdown(e->conns[i]->remote, SHUT_RDWR);
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2; /* a broker lookup may still be running: do not wait for it */
    while (e->threads && pthread_cond_timedwait(&e->idle, &e->lock, &until) == 0)
        ;
    pthread_mutex_unlock(&e->lock);
}
