/* The broker's changeable policy and its handed-out connections; see
 * egress_live.h.  Everything here runs in the broker process. */
#include "vmm/egress/egress_live.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/egress/egress.h"
#include "vmm/egress/egress_rules.h"

/* A policy and the decisions still using it. */
struct held {
    unsigned refs; /* decisions holding it, +1 while it is the one in force */
    struct egress_policy p;
};

/* A socket handed to the VM side, and what admitted it. */
struct tracked {
    int fd; /* our duplicate; -1: a free slot */
    uint64_t conn;
    uint16_t port;
    char host[EGRESS_HOST_MAX + 1];
    struct sockaddr_storage sa;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct held *current;
static const struct secret_set *pinned;
static bool changeable;
static struct tracked conns[EGRESS_MAX_THREADS];

static struct held *held_of(const struct egress_policy *p)
{
    return (struct held *)((char *)p - offsetof(struct held, p));
}

/* Under the lock. */
static void drop(struct held *h)
{
    if (--h->refs == 0)
        free(h);
}

int egress_live_init(const struct egress_policy *initial, const struct secret_set *secrets,
                     bool may_change)
{
    struct held *h = malloc(sizeof(*h));
    if (!h)
        return -ENOMEM;
    h->refs = 1;
    h->p = *initial;
    /* Once per broker; again only in the unit tests, which start over. */
    pthread_mutex_lock(&lock);
    static bool once;
    if (current)
        drop(current);
    current = h;
    pinned = secrets;
    changeable = may_change;
    for (unsigned i = 0; i < EGRESS_MAX_THREADS; i++) {
        if (once && conns[i].fd >= 0)
            close(conns[i].fd);
        conns[i].fd = -1;
    }
    once = true;
    pthread_mutex_unlock(&lock);
    return 0;
}

const struct egress_policy *egress_live_hold(void)
{
    pthread_mutex_lock(&lock);
    struct held *h = current;
    h->refs++;
    pthread_mutex_unlock(&lock);
    return &h->p;
}

void egress_live_release(const struct egress_policy *p)
{
    pthread_mutex_lock(&lock);
    drop(held_of(p));
    pthread_mutex_unlock(&lock);
}

/* What egress_decide_and_connect would decide for this address now,
 * without the lookup: a name needs its name rule first (a CIDR rule alone
 * never admits a name: broker.c's first step), then the address check. */
static bool admits(const struct egress_policy *p, const char *host, uint16_t port,
                   const struct sockaddr *sa, const char **why)
{
    *why = "egress is off (no --allow or --allow-ip rules)";
    if (!p->n)
        return false;
    bool literal = egress_host_is_ip(host);
    const struct egress_rule *name_rule = literal ? NULL : egress_match_name(p, host, port);
    *why = "not on the allowlist";
    if (!literal && !name_rule)
        return false;
    return egress_check_addr(p, name_rule, sa, port, why) != NULL;
}

/* The verdict's address text back into a sockaddr with port. */
static bool sockaddr_of(const char *addr, uint16_t port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons(port);
        return true;
    }
    if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(port);
        return true;
    }
    return false;
}

/* Under the lock: forgets the connections the VM side has ended (it shut
 * them down both ways: POLLHUP), or that broke. */
static void sweep(void)
{
    struct pollfd p[EGRESS_MAX_THREADS];
    unsigned idx[EGRESS_MAX_THREADS], n = 0;
    for (unsigned i = 0; i < EGRESS_MAX_THREADS; i++)
        if (conns[i].fd >= 0) {
            p[n] = (struct pollfd){.fd = conns[i].fd, .events = 0};
            idx[n++] = i;
        }
    if (!n || poll(p, n, 0) <= 0)
        return;
    for (unsigned k = 0; k < n; k++)
        if (p[k].revents & (POLLHUP | POLLERR | POLLNVAL)) {
            close(conns[idx[k]].fd);
            conns[idx[k]].fd = -1;
        }
}

int egress_live_admit(const struct egress_policy *p, const char *host, uint16_t port,
                      const char *addr, uint64_t conn, int fd, char *why, size_t cap)
{
    struct sockaddr_storage ss;
    if (!sockaddr_of(addr, port, &ss)) { /* cannot happen: the broker wrote it */
        snprintf(why, cap, "%.100s:%u: no address to check", host, port);
        return -EACCES;
    }
    int rc = 0;
    pthread_mutex_lock(&lock);
    const char *reason;
    if (&current->p != p && !admits(&current->p, host, port, (struct sockaddr *)&ss, &reason)) {
        snprintf(why, cap, "%.100s:%u: %s (the allowlist changed while it was connected to)",
                 host, port, reason);
        rc = -EACCES;
    } else if (changeable) {
        unsigned slot = EGRESS_MAX_THREADS;
        for (int pass = 0; pass < 2 && slot == EGRESS_MAX_THREADS; pass++) {
            if (pass)
                sweep();
            for (unsigned i = 0; i < EGRESS_MAX_THREADS && slot == EGRESS_MAX_THREADS; i++)
                if (conns[i].fd < 0)
                    slot = i;
        }
        int dup = slot < EGRESS_MAX_THREADS ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
        if (dup < 0) {
            snprintf(why, cap, "%.100s:%u: too many egress connections open", host, port);
            rc = -EMFILE;
        } else {
            struct tracked *t = &conns[slot];
            t->fd = dup;
            t->conn = conn;
            t->port = port;
            snprintf(t->host, sizeof(t->host), "%s", host);
            t->sa = ss;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* The secrets' hosts, in every allowlist (as `airlock run` adds them at
 * start: vmm/cli/cmd_run.c). */
static int add_pinned(struct egress_policy *p, char *err, size_t cap)
{
    for (unsigned i = 0; pinned && i < pinned->n; i++) {
        const struct secret *s = &pinned->s[i];
        char rule[EGRESS_HOST_MAX + 16], why[200];
        secret_host_port(s, rule, sizeof(rule));
        if (egress_match_name(p, s->host, s->port))
            continue;
        if (egress_policy_add_host(p, rule, why, sizeof(why))) {
            snprintf(err, cap, "with the host of secret %.40s: %.120s", s->name, why);
            return -E2BIG;
        }
    }
    return 0;
}

/* h becomes the policy in force; each tracked connection it does not
 * admit is cut.  Their ids into a. */
static void replace(struct held *h, struct egress_rules_answer *a)
{
    pthread_mutex_lock(&lock);
    struct held *old = current;
    current = h;
    sweep();
    for (unsigned i = 0; i < EGRESS_MAX_THREADS; i++) {
        struct tracked *t = &conns[i];
        const char *why;
        if (t->fd < 0 || admits(&h->p, t->host, t->port, (struct sockaddr *)&t->sa, &why))
            continue;
        shutdown(t->fd, SHUT_RDWR); /* the VM side's copy too: it is one socket */
        close(t->fd);
        t->fd = -1;
        a->cut[a->ncut++] = t->conn;
    }
    a->nrules = h->p.n;
    drop(old);
    pthread_mutex_unlock(&lock);
}

/* One request: the answer to send. */
static void handle(const char *msg, ssize_t n, bool whole, struct egress_rules_answer *a)
{
    memset(a, 0, sizeof(*a));
    struct held *h = malloc(sizeof(*h));
    if (!h) {
        a->rc = -ENOMEM;
        snprintf(a->err, sizeof(a->err), "out of memory");
        return;
    }
    h->refs = 1;
    if (!whole) {
        a->rc = -EINVAL;
        snprintf(a->err, sizeof(a->err), "longer than an allowlist can be");
    } else if (egress_rules_decode(msg, (size_t)n, &h->p, a->err, sizeof(a->err))) {
        a->rc = -EINVAL;
    } else {
        a->rc = add_pinned(&h->p, a->err, sizeof(a->err));
    }
    if (a->rc) {
        free(h);
        return;
    }
    replace(h, a);
}

static void *serve(void *arg)
{
    int fd = (int)(intptr_t)arg;
    static char msg[EGRESS_RULES_MSG_MAX];
    static struct egress_rules_answer a;
    for (;;) {
        /* No control buffer: fds sent along are closed by the kernel. */
        struct iovec iov = {.iov_base = msg, .iov_len = sizeof(msg)};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        ssize_t n = recvmsg(fd, &mh, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* the daemon is gone: the policy stays as it is */
        handle(msg, n, !(mh.msg_flags & MSG_TRUNC), &a);
        if (send(fd, &a, sizeof(a), MSG_NOSIGNAL) < 0 && errno != EINTR)
            break;
    }
    close(fd);
    return NULL;
}

int egress_live_serve(int fd)
{
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int e = pthread_create(&t, &at, serve, (void *)(intptr_t)fd);
    pthread_attr_destroy(&at);
    return -e;
}
