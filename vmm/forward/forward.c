/* The forwarder (forward.h): an accept thread over every listener of a VM,
 * and a thread per connection that dials the guest, says which port
 * (the hello), waits for the agent's answer and then moves bytes both
 * ways.  A thread per connection, as egress does: a dial and a hello
 * block, and the connections of one VM are few. */
#include "vmm/forward/forward.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/agent_client/forward_hello.h"

struct conn {
    struct forwarder *f;
    struct port *port;
    int cfd, vfd;             /* the client; the guest (-1 until dialled) */
    char from[64];
    struct conn *next;
    /* Attached to the device (forward_dial.attach) instead of a thread:
     * live once attach returned (until then the accept thread owns it);
     * what the forwarder ended it for (NULL: the connection ended by
     * itself); the agent's answer. */
    bool attached, live;
    uint64_t tag, t0, last_ms, last_moved;
    _Atomic uint64_t moved;
    const char *why;
    bool answered;
    int refused;              /* the guest's connect errno, or -EPROTO */
};

struct port {
    struct forward_info info;
    int lfd;
    bool closing;
    struct conn *conns;       /* open ones, under the forwarder's lock */
    struct port *next;
};

struct forwarder {
    struct forward_dial dial;
    pthread_mutex_t lock;
    pthread_cond_t gone;      /* a connection ended */
    struct port *ports;
    unsigned nports;
    unsigned nconns;          /* open, all ports */
    int wake;                 /* eventfd: the listener set changed or stop */
    bool stop;
    uint64_t next_tag;        /* attached connections' names */
    unsigned nattached;       /* attached ones open: the accept thread checks them each second */
    pthread_t accepter;
};

static void poke(struct forwarder *f)
{
    uint64_t one = 1;
    if (write(f->wake, &one, sizeof(one)) < 0) {
        /* a full counter still wakes the poll */
    }
}

static void audit_port(struct forwarder *f, const char *event, const struct port *p)
{
    struct audit_rec r;
    audit_begin(f->dial.audit, &r, event);
    audit_u64(&r, "guest_port", p->info.spec.guest_port);
    audit_str(&r, "address", p->info.address);
    audit_end(f->dial.audit, &r);
}

/* One record per connection refused, and one when an accepted one ends. */
static void audit_conn(struct forwarder *f, const struct conn *c, const char *result,
                       const char *error, uint64_t in, uint64_t out, uint64_t ms)
{
    struct audit_rec r;
    audit_begin(f->dial.audit, &r, "port_connection");
    audit_u64(&r, "guest_port", c->port->info.spec.guest_port);
    audit_str(&r, "address", c->port->info.address);
    audit_str(&r, "from", c->from);
    audit_str(&r, "result", result);
    if (error)
        audit_str(&r, "error", error);
    audit_u64(&r, "bytes_in", in);
    audit_u64(&r, "bytes_out", out);
    audit_u64(&r, "duration_ms", ms);
    audit_end(f->dial.audit, &r);
}

int forward_listen(const struct forward_spec *s, char *address, size_t addrlen, char *err,
                   size_t errlen)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    socklen_t len;
    int family = strchr(s->host_ip, ':') ? AF_INET6 : AF_INET;
    if (family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_port = htons(s->host_port);
        inet_pton(AF_INET, s->host_ip, &a->sin_addr);
        len = sizeof(*a);
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(s->host_port);
        inet_pton(AF_INET6, s->host_ip, &a->sin6_addr);
        len = sizeof(*a);
    }
    char want[64];
    forward_addr_format(s->host_ip, s->host_port, want, sizeof(want));
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 128) ||
        getsockname(fd, (struct sockaddr *)&ss, &len)) {
        int e = errno;
        snprintf(err, errlen, "cannot listen on %s: %s", want, strerror(e));
        if (fd >= 0)
            close(fd);
        return -e;
    }
    uint16_t port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                            : ((struct sockaddr_in6 *)&ss)->sin6_port);
    forward_addr_format(s->host_ip, port, address, addrlen);
    return fd;
}

int forward_handshake(int vfd, uint16_t guest_port)
{
    uint8_t hello[AGENT_FWD_HELLO_SIZE], reply[AGENT_FWD_REPLY_SIZE];
    agent_fwd_hello_encode(hello, guest_port);
    if (send(vfd, hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello))
        return -EPIPE;
    size_t got = 0;
    uint64_t end = agent_mono_ms() + FORWARD_REPLY_MS;
    while (got < sizeof(reply)) {
        uint64_t now = agent_mono_ms();
        struct pollfd p = {.fd = vfd, .events = POLLIN};
        int n = now < end ? poll(&p, 1, (int)(end - now)) : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -ETIMEDOUT;
        ssize_t r = recv(vfd, reply + got, sizeof(reply) - got, 0);
        if (r <= 0)
            return r == 0 ? -ECONNRESET : -errno;
        got += (size_t)r;
    }
    return agent_fwd_reply_decode(reply);
}

struct dir {
    uint8_t buf[FORWARD_BUF];
    size_t off, len;
    bool eof, shut;
    uint64_t moved;
};

/* Moves what it can from -> buf -> to without blocking; -1 on a hard
 * error (the pair ends).  Returns 1 when a byte moved. */
static int pump(struct dir *d, int from, int to)
{
    int moved = 0;
    if (!d->eof && d->len == 0) {
        ssize_t n = recv(from, d->buf, sizeof(d->buf), MSG_DONTWAIT);
        if (n > 0) {
            d->off = 0, d->len = (size_t)n, moved = 1;
        } else if (n == 0) {
            d->eof = true;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return -1;
        }
    }
    if (d->len) {
        ssize_t n = send(to, d->buf + d->off, d->len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            d->off += (size_t)n, d->len -= (size_t)n, d->moved += (uint64_t)n, moved = 1;
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return -1;
        }
    }
    if (d->eof && !d->len && !d->shut) {
        shutdown(to, SHUT_WR);
        d->shut = true;
    }
    return moved;
}

static const char *relay(unsigned idle, int cfd, int vfd, struct dir *up, struct dir *down)
{
    uint64_t last = agent_mono_ms();
    while (!(up->shut && down->shut)) {
        struct pollfd p[2] = {
            {.fd = cfd, .events = (short)((!up->eof && !up->len ? POLLIN : 0) | (down->len ? POLLOUT : 0))},
            {.fd = vfd, .events = (short)((!down->eof && !down->len ? POLLIN : 0) | (up->len ? POLLOUT : 0))},
        };
        uint64_t now = agent_mono_ms();
        if (now - last >= idle)
            return "idle timeout";
        int n = poll(p, 2, (int)(idle - (now - last)));
        if (n < 0 && errno != EINTR)
            return "poll failed";
        if (n <= 0)
            continue;
        if ((p[0].revents | p[1].revents) & POLLNVAL)
            return "closed";
        int a = pump(up, cfd, vfd), b = pump(down, vfd, cfd);
        if (a < 0 || b < 0)
            return "reset";
        if (a || b)
            last = agent_mono_ms();
        else if ((p[0].revents | p[1].revents) & (POLLERR | POLLHUP) && !(p[0].revents & POLLIN) &&
                 !(p[1].revents & POLLIN))
            return "reset"; /* nothing to read, nothing moves: gone */
    }
    return "closed";
}

const char *forward_pipe(int cfd, int vfd, unsigned idle_ms, uint64_t *in, uint64_t *out)
{
    struct dir *d = calloc(2, sizeof(*d));
    const char *how = d ? relay(idle_ms ? idle_ms : FORWARD_IDLE_MS_DEFAULT, cfd, vfd, &d[0], &d[1])
                        : "out of memory";
    *in = d ? d[0].moved : 0;
    *out = d ? d[1].moved : 0;
    free(d);
    return how;
}

static void conn_end(struct forwarder *f, struct conn *c)
{
    pthread_mutex_lock(&f->lock);
    for (struct conn **pp = &c->port->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    c->port->info.conns--;
    f->nconns--;
    if (c->attached)
        f->nattached--;
    pthread_cond_broadcast(&f->gone);
    pthread_mutex_unlock(&f->lock);
    if (!c->live) /* a live attached one's socket is the device's to close */
        close(c->cfd);
    if (c->vfd >= 0)
        close(c->vfd);
    free(c);
}

/* ---- attached connections (forward_dial.attach) ----------------------- */

static int fwd_conn_answer(void *arg, const uint8_t *reply)
{
    struct conn *c = arg;
    int rc = agent_fwd_reply_decode(reply);
    pthread_mutex_lock(&c->f->lock);
    c->answered = true;
    c->refused = rc;
    pthread_mutex_unlock(&c->f->lock);
    return rc;
}

static void fwd_conn_ended(void *arg, enum forward_end how, uint64_t in, uint64_t out)
{
    struct conn *c = arg;
    struct forwarder *f = c->f;
    pthread_mutex_lock(&f->lock);
    const char *why = c->why;
    int refused = c->refused;
    pthread_mutex_unlock(&f->lock);
    uint64_t ms = agent_mono_ms() - c->t0;
    char err[96];
    switch (how) {
    case FORWARD_END_CLOSED:
        audit_conn(f, c, "closed", why, in, out, ms);
        break;
    case FORWARD_END_RESET:
        if (!why && !c->answered)
            why = "the guest's forward service closed the connection";
        audit_conn(f, c, c->answered ? "closed" : "refused", why ? why : "reset", in, out, ms);
        break;
    case FORWARD_END_REFUSED:
        snprintf(err, sizeof(err), "%s%s", refused > 0 ? "guest: " : "",
                 strerror(refused > 0 ? refused : -refused));
        audit_conn(f, c, "refused", err, 0, 0, ms);
        break;
    case FORWARD_END_NO_ANSWER:
        audit_conn(f, c, "refused", "the guest's forward service does not answer", 0, 0, ms);
        break;
    }
    conn_end(f, c);
}

/* Hands c (registered, not yet live) to the device; called without the
 * lock.  After a successful attach c may end (and be freed) at any time
 * on the device's thread: it is found again by its tag only. */
static void attach_conn(struct forwarder *f, struct conn *c)
{
    uint64_t tag = c->tag;
    struct forward_attach a = {
        .pre_len = AGENT_FWD_HELLO_SIZE, .reply_len = AGENT_FWD_REPLY_SIZE, .tag = tag,
        .answer = fwd_conn_answer, .ended = fwd_conn_ended, .conn = c, .moved = &c->moved,
    };
    agent_fwd_hello_encode(a.pre, c->port->info.spec.guest_port);
    int fl = fcntl(c->cfd, F_GETFL);
    int rc = fl < 0 || fcntl(c->cfd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
    /* live before the device may end it: conn_end must then leave the
     * socket to the device. */
    if (!rc) {
        pthread_mutex_lock(&f->lock);
        c->live = true;
        pthread_mutex_unlock(&f->lock);
        rc = f->dial.attach(f->dial.opaque, c->cfd, &a);
    }
    if (rc) {
        pthread_mutex_lock(&f->lock);
        c->live = false;
        pthread_mutex_unlock(&f->lock);
        char why[96];
        snprintf(why, sizeof(why), "the guest's vsock does not take it: %s", strerror(-rc));
        audit_conn(f, c, "refused", why, 0, 0, 0);
        conn_end(f, c);
        return;
    }
    /* The port may have begun to close meanwhile: port_end only ends
     * connections it found live. */
    bool closing = false;
    pthread_mutex_lock(&f->lock);
    for (struct port *p = f->ports; p && !closing; p = p->next)
        for (struct conn *k = p->conns; k; k = k->next)
            if (k->tag == tag && k->attached) {
                closing = p->closing;
                break;
            }
    pthread_mutex_unlock(&f->lock);
    if (closing)
        f->dial.detach(f->dial.opaque, tag);
}

/* Each second while attached connections are open: the agent's answer
 * within FORWARD_REPLY_MS, and the idle timeout (the device counts the
 * bytes; here is the clock).  Called without the lock. */
static void attached_check(struct forwarder *f)
{
    uint64_t tags[FORWARD_MAX_CONNS_VM];
    unsigned n = 0;
    unsigned idle = f->dial.idle_ms ? f->dial.idle_ms : FORWARD_IDLE_MS_DEFAULT;
    uint64_t now = agent_mono_ms();
    pthread_mutex_lock(&f->lock);
    for (struct port *p = f->ports; p; p = p->next)
        for (struct conn *c = p->conns; c; c = c->next) {
            if (!c->attached || c->why || n == FORWARD_MAX_CONNS_VM)
                continue;
            uint64_t moved = atomic_load_explicit(&c->moved, memory_order_relaxed);
            if (moved != c->last_moved) {
                c->last_moved = moved;
                c->last_ms = now;
            }
            if (!c->answered && now - c->t0 >= FORWARD_REPLY_MS)
                c->why = "the guest's forward service did not answer in time";
            else if (now - c->last_ms >= idle)
                c->why = "idle timeout";
            if (c->why)
                tags[n++] = c->tag;
        }
    pthread_mutex_unlock(&f->lock);
    for (unsigned i = 0; i < n; i++)
        f->dial.detach(f->dial.opaque, tags[i]);
}

static void *conn_main(void *arg)
{
    struct conn *c = arg;
    struct forwarder *f = c->f;
    /* The port outlives its connections (forwarder_remove waits). */
    struct port *p = c->port;
    uint64_t t0 = agent_mono_ms();
    int vfd = f->dial.dial(f->dial.opaque);
    if (vfd < 0) {
        audit_conn(f, c, "refused", "the guest's forward service does not answer", 0, 0,
                   agent_mono_ms() - t0);
        conn_end(f, c);
        return NULL;
    }
    pthread_mutex_lock(&f->lock);
    c->vfd = vfd;
    bool closing = p->closing;
    pthread_mutex_unlock(&f->lock);
    int rc = closing ? -ECANCELED : forward_handshake(vfd, p->info.spec.guest_port);
    if (rc) {
        char why[96];
        snprintf(why, sizeof(why), "%s%s", rc > 0 ? "guest: " : "", strerror(rc > 0 ? rc : -rc));
        audit_conn(f, c, "refused", why, 0, 0, agent_mono_ms() - t0);
        conn_end(f, c);
        return NULL;
    }
    uint64_t in, out;
    const char *how = forward_pipe(c->cfd, vfd, f->dial.idle_ms, &in, &out);
    audit_conn(f, c, "closed", strcmp(how, "closed") ? how : NULL, in, out, agent_mono_ms() - t0);
    conn_end(f, c);
    return NULL;
}

/* Called with the lock held, for a port still published.  A connection
 * to hand to the device (forward_dial.attach) is returned, for the caller
 * to attach once it let go of the lock. */
static struct conn *accept_on(struct forwarder *f, struct port *p)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    int cfd = accept4(p->lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
    if (cfd < 0)
        return NULL;
    struct conn *c = calloc(1, sizeof(*c));
    if (!c) {
        close(cfd);
        return NULL;
    }
    c->f = f;
    c->port = p;
    c->cfd = cfd;
    c->vfd = -1;
    char ip[INET6_ADDRSTRLEN] = "?";
    uint16_t port = 0;
    if (ss.ss_family == AF_INET) {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof(ip));
        port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    } else if (ss.ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, ip, sizeof(ip));
        port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    forward_addr_format(ip, port, c->from, sizeof(c->from));
    if (p->info.conns >= FORWARD_MAX_CONNS || f->nconns >= FORWARD_MAX_CONNS_VM) {
        char why[80];
        snprintf(why, sizeof(why), "at most %u connections at once (%u through all ports)",
                 FORWARD_MAX_CONNS, FORWARD_MAX_CONNS_VM);
        audit_conn(f, c, "refused", why, 0, 0, 0);
        close(cfd);
        free(c);
        return NULL;
    }
    p->info.conns++;
    p->info.total++;
    f->nconns++;
    c->next = p->conns;
    p->conns = c;
    if (f->dial.attach) {
        c->attached = true;
        c->tag = ++f->next_tag;
        c->t0 = c->last_ms = agent_mono_ms();
        f->nattached++;
        return c;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* glibc carves each thread's static TLS (about 200 KiB in this
     * binary) out of this size: 512 KiB leaves the thread a stack of its
     * own however that grows, and is only address space until touched. */
    pthread_attr_setstacksize(&attr, 512 * 1024);
    pthread_t t;
    int e = pthread_create(&t, &attr, conn_main, c);
    if (e) {
        char why[96];
        snprintf(why, sizeof(why), "no thread for it: %s", strerror(e));
        audit_conn(f, c, "refused", why, 0, 0, 0);
        p->conns = c->next;
        p->info.conns--;
        f->nconns--;
        close(cfd);
        free(c);
    }
    pthread_attr_destroy(&attr);
    return NULL;
}

static void *accept_main(void *arg)
{
    struct forwarder *f = arg;
    for (;;) {
        struct pollfd pfd[1 + FORWARD_MAX_PORTS];
        struct port *who[FORWARD_MAX_PORTS];
        unsigned n = 0;
        pthread_mutex_lock(&f->lock);
        if (f->stop) {
            pthread_mutex_unlock(&f->lock);
            return NULL;
        }
        pfd[0] = (struct pollfd){.fd = f->wake, .events = POLLIN};
        for (struct port *p = f->ports; p && n < FORWARD_MAX_PORTS; p = p->next)
            if (!p->closing) {
                who[n] = p;
                pfd[1 + n++] = (struct pollfd){.fd = p->lfd, .events = POLLIN};
            }
        bool check = f->nattached > 0;
        pthread_mutex_unlock(&f->lock);
        int rc = poll(pfd, 1 + n, check ? 1000 : -1);
        if (check)
            attached_check(f);
        if (rc <= 0)
            continue;
        if (pfd[0].revents) {
            uint64_t v;
            if (read(f->wake, &v, sizeof(v)) < 0) {
                /* nothing to drain */
            }
            continue; /* the set changed: ports may be gone */
        }
        /* A port may have ended since the poll began: only those still
         * listed and open are accepted on. */
        struct conn *todo[FORWARD_MAX_PORTS];
        unsigned ntodo = 0;
        pthread_mutex_lock(&f->lock);
        for (unsigned i = 0; i < n; i++) {
            if (!(pfd[1 + i].revents & POLLIN))
                continue;
            for (struct port *p = f->ports; p; p = p->next)
                if (p == who[i] && !p->closing) {
                    struct conn *c = accept_on(f, p);
                    if (c)
                        todo[ntodo++] = c;
                }
        }
        pthread_mutex_unlock(&f->lock);
        for (unsigned i = 0; i < ntodo; i++)
            attach_conn(f, todo[i]);
    }
}

int forwarder_new(const struct forward_dial *dial, struct forwarder **out)
{
    struct forwarder *f = calloc(1, sizeof(*f));
    if (!f)
        return -ENOMEM;
    f->dial = *dial;
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->gone, NULL);
    f->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int rc = f->wake < 0 ? -errno : -pthread_create(&f->accepter, NULL, accept_main, f);
    if (rc) {
        if (f->wake >= 0)
            close(f->wake);
        free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int forwarder_adopt(struct forwarder *f, const struct forward_spec *s, int listen_fd,
                    const char *address, char *err, size_t errlen)
{
    pthread_mutex_lock(&f->lock);
    int rc = 0;
    for (struct port *p = f->ports; p && !rc; p = p->next)
        if (p->info.spec.guest_port == s->guest_port && !p->closing) {
            snprintf(err, errlen, "guest port %u is published already, on %s", s->guest_port,
                     p->info.address);
            rc = -EEXIST;
        }
    if (!rc && f->nports >= FORWARD_MAX_PORTS) {
        snprintf(err, errlen, "at most %u published ports per VM", FORWARD_MAX_PORTS);
        rc = -ENOSPC;
    }
    struct port *p = rc ? NULL : calloc(1, sizeof(*p));
    if (!rc && !p) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    }
    if (rc) {
        pthread_mutex_unlock(&f->lock);
        close(listen_fd);
        return rc;
    }
    p->info.spec = *s;
    snprintf(p->info.address, sizeof(p->info.address), "%s", address);
    const char *colon = strrchr(address, ':');
    p->info.spec.host_port = colon ? (uint16_t)atoi(colon + 1) : s->host_port;
    p->lfd = listen_fd;
    struct port **tail = &f->ports;
    while (*tail)
        tail = &(*tail)->next;
    *tail = p;
    f->nports++;
    pthread_mutex_unlock(&f->lock);
    audit_port(f, "port_published", p);
    poke(f);
    return 0;
}

int forwarder_add(struct forwarder *f, const struct forward_spec *s, struct forward_info *info,
                  char *err, size_t errlen)
{
    char address[64];
    int fd = forward_listen(s, address, sizeof(address), err, errlen);
    if (fd < 0)
        return fd;
    int rc = forwarder_adopt(f, s, fd, address, err, errlen);
    if (!rc && info) {
        memset(info, 0, sizeof(*info));
        info->spec = *s;
        snprintf(info->address, sizeof(info->address), "%s", address);
        const char *colon = strrchr(address, ':');
        info->spec.host_port = (uint16_t)atoi(colon + 1);
    }
    return rc;
}

/* Takes p out (the lock is held): no new connection, every open one shut
 * down, and back when the last has ended. */
static void port_end(struct forwarder *f, struct port *p)
{
    p->closing = true;
    poke(f);
    uint64_t tags[FORWARD_MAX_CONNS];
    unsigned n = 0;
    for (struct conn *c = p->conns; c; c = c->next) {
        if (c->attached) {
            /* One not yet live is ended by attach_conn, which sees the
             * port closing. */
            if (c->live && n < FORWARD_MAX_CONNS)
                tags[n++] = c->tag;
            continue;
        }
        shutdown(c->cfd, SHUT_RDWR);
        if (c->vfd >= 0)
            shutdown(c->vfd, SHUT_RDWR);
    }
    if (n) {
        /* The device's ended takes the lock. */
        pthread_mutex_unlock(&f->lock);
        for (unsigned i = 0; i < n; i++)
            f->dial.detach(f->dial.opaque, tags[i]);
        pthread_mutex_lock(&f->lock);
    }
    while (p->info.conns)
        pthread_cond_wait(&f->gone, &f->lock);
    for (struct port **pp = &f->ports; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    f->nports--;
}

int forwarder_remove(struct forwarder *f, uint16_t guest_port)
{
    pthread_mutex_lock(&f->lock);
    struct port *p = f->ports;
    while (p && (p->info.spec.guest_port != guest_port || p->closing))
        p = p->next;
    if (!p) {
        pthread_mutex_unlock(&f->lock);
        return -ENOENT;
    }
    port_end(f, p);
    pthread_mutex_unlock(&f->lock);
    /* The accept thread may still hold the fd in a poll it was woken
     * from; it re-reads the set before polling again. */
    audit_port(f, "port_unpublished", p);
    close(p->lfd);
    free(p);
    return 0;
}

size_t forwarder_list(struct forwarder *f, struct forward_info *out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&f->lock);
    for (struct port *p = f->ports; p; p = p->next, n++)
        if (n < max)
            out[n] = p->info;
    pthread_mutex_unlock(&f->lock);
    return n;
}

unsigned forwarder_conns(struct forwarder *f)
{
    pthread_mutex_lock(&f->lock);
    unsigned n = f->nconns;
    pthread_mutex_unlock(&f->lock);
    return n;
}

void forwarder_free(struct forwarder *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->lock);
    f->stop = true;
    pthread_mutex_unlock(&f->lock);
    poke(f);
    pthread_join(f->accepter, NULL);
    while (f->ports)
        forwarder_remove(f, f->ports->info.spec.guest_port);
    close(f->wake);
    pthread_cond_destroy(&f->gone);
    pthread_mutex_destroy(&f->lock);
    free(f);
}
