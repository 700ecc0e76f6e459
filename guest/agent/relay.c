/* The relay process (relay.h): the pair table, the byte pump and the poll
 * loop, with the supervisor that keeps it running.
 *
 * Process layout (all started from PID 1 before it listens for the host):
 *   supervisor (root, own session)  restarts the relay when it dies
 *     relay (uid/gid 65534)         one poll loop over every pair
 * The supervisor exists so PID 1's accept loop and its reap-everything
 * SIGCHLD handler stay as they are: the relay is not PID 1's child, so
 * nothing there waits for it, and the connection handlers (which wait
 * for their commands by pid) never see it either.  If the supervisor
 * itself dies, PID 1 reaps it and the relay is gone until the next boot:
 * it only forks and waits, so only a root command can kill it.
 * The relay shares uid 65534 with commands by default, so they can signal
 * or trace it; it holds nothing they lack (the vsock is open to them too,
 * and a forward only reaches 127.0.0.1, where they are), and a killed
 * relay comes back.  Both inherit PID 1's OOM shield; the relay's memory
 * is bounded (RELAY_MAX_PAIRS, RELAY_BUF). */
#include "guest/agent/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent/agent.h"

static const struct relay_service *const services[] = {&relay_egress, &relay_forward};
#define NSERVICES (sizeof(services) / sizeof(services[0]))

static struct relay_pair pairs[RELAY_MAX_PAIRS];
static int npairs;

/* Pairs of this service open now. */
static unsigned pairs_of(const struct relay_service *svc)
{
    unsigned n = 0;
    for (int i = 0; i < RELAY_MAX_PAIRS; i++)
        n += pairs[i].afd >= 0 && pairs[i].svc == svc;
    return n;
}

void relay_log(const char *what, int err)
{
    fprintf(stderr, "airlock-agent: relay: %s: %s\n", what, strerror(err));
}

double relay_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int agent_lo_up(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    memcpy(ifr.ifr_name, "lo", 3);
    int rc = 0;
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
        rc = -errno;
    } else {
        /* The kernel gives lo 127.0.0.1/8 itself when it goes up
         * (devinet.c, NETDEV_UP), so no address needs setting. */
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
            rc = -errno;
    }
    close(fd);
    return rc;
}

static void dir_free(struct relay_dir *d)
{
    if (d->has_pipe) {
        close(d->pipe[0]);
        close(d->pipe[1]);
    }
    free(d->buf);
}

void relay_close(struct relay_pair *p)
{
    close(p->afd);
    if (p->bfd >= 0)
        close(p->bfd);
    dir_free(&p->up);
    dir_free(&p->down);
    memset(p, 0, sizeof(*p));
    p->afd = p->bfd = -1;
    npairs--;
}

int relay_connect(int family, const void *addr, unsigned addrlen)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, addr, addrlen) < 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static void drain(struct relay_pair *p)
{
    uint8_t junk[4096];
    for (;;) {
        ssize_t n = recv(p->afd, junk, sizeof(junk), MSG_DONTWAIT);
        if (n > 0)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0 && errno == EINTR)
            continue;
        relay_close(p);
        return;
    }
}

static void accept_one(const struct relay_service *svc, int lfd)
{
    int afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (afd < 0) {
        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
            relay_log(svc->name, errno);
        return;
    }
    if (npairs >= RELAY_MAX_PAIRS || pairs_of(svc) >= svc->max_pairs) {
        close(afd);
        return;
    }
    struct relay_pair *p = NULL;
    for (int i = 0; i < RELAY_MAX_PAIRS && !p; i++)
        if (pairs[i].afd < 0)
            p = &pairs[i];
    p->afd = afd;
    p->bfd = -1;
    p->svc = svc;
    npairs++;
    p->up.buf = malloc(RELAY_BUF);
    p->down.buf = malloc(RELAY_BUF);
    if (!p->up.buf || !p->down.buf) {
        relay_close(p);
        return;
    }
    svc->accepted(p);
}

/* Sends what buf holds as far as it goes; -1 on a hard error. */
static int flush_buf(struct relay_dir *d, int to)
{
    while (d->len > 0) {
        ssize_t n = send(to, d->buf + d->off, d->len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            d->off += (size_t)n;
            d->len -= (size_t)n;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            return -1;
        }
    }
    if (d->len == 0)
        d->off = 0;
    return 0;
}

/* Whether d moves by splice: its pipe is made on first use; a side that
 * cannot splice (or no pipe: the fd limit) leaves d copying. */
static bool use_pipe(struct relay_dir *d)
{
    if (d->has_pipe || d->no_splice)
        return d->has_pipe && !d->no_splice;
    if (pipe2(d->pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        d->no_splice = true;
        return false;
    }
    d->has_pipe = true;
    return true;
}

/* from -> pipe -> to, as far as it goes without blocking (both sockets
 * are non-blocking, which is what makes the splice into `to` one).
 * Returns 1 when `from` cannot splice and nothing was moved yet (the
 * caller copies instead), -1 on a hard error. */
static int pump_pipe(struct relay_dir *d, int from, int to)
{
    if (flush_buf(d, to) < 0)
        return -1;
    while (!d->eof && d->piped < RELAY_BUF) {
        ssize_t n = splice(from, NULL, d->pipe[1], NULL, RELAY_BUF - d->piped,
                           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n > 0) {
            d->piped += (size_t)n;
            d->full = false;
        } else if (n == 0) {
            d->eof = true;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            /* Nothing to read, or the pipe has no free slot: with bytes
             * in it, wait until some went out before polling `from`
             * again (a full pipe leaves `from` readable: a spin). */
            d->full = d->piped > 0;
            break;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EINVAL && d->piped == 0) {
            d->no_splice = true;
            return 1;
        } else {
            return -1;
        }
    }
    while (d->len == 0 && d->piped > 0) {
        ssize_t n = splice(d->pipe[0], NULL, to, NULL, d->piped, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n > 0) {
            d->piped -= (size_t)n;
            d->full = false;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            return -1;
        }
    }
    if (d->eof && d->len == 0 && d->piped == 0 && !d->shut) {
        shutdown(to, SHUT_WR);
        d->shut = true;
    }
    return 0;
}

/* Moves bytes `from` -> pipe or buffer -> `to` as far as they go without
 * blocking.  Returns -1 when the pair must be torn down (a hard error on
 * either side: the other side then sees the close). */
static int pump(struct relay_dir *d, int from, int to)
{
    if (use_pipe(d)) {
        int rc = pump_pipe(d, from, to);
        if (rc <= 0)
            return rc;
    }
    while (!d->eof && d->off + d->len < RELAY_BUF) {
        ssize_t n = recv(from, d->buf + d->off + d->len, RELAY_BUF - d->off - d->len, MSG_DONTWAIT);
        if (n > 0) {
            d->len += (size_t)n;
        } else if (n == 0) {
            d->eof = true;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            break;
        } else if (errno != EINTR) {
            return -1;
        }
    }
    if (flush_buf(d, to) < 0)
        return -1;
    if (d->len > 0 && d->off + d->len == RELAY_BUF) {
        /* Full at the end: make room at the front for the next read. */
        memmove(d->buf, d->buf + d->off, d->len);
        d->off = 0;
    }
    if (d->eof && d->len == 0 && !d->shut) {
        shutdown(to, SHUT_WR);
        d->shut = true;
    }
    return 0;
}

/* poll events for an fd as source of `in` and sink of `out`. */
static short dir_events(const struct relay_dir *in, const struct relay_dir *out)
{
    short ev = 0;
    if (!in->eof && (in->has_pipe && !in->no_splice ? in->piped < RELAY_BUF && !in->full
                                  : in->off + in->len < RELAY_BUF))
        ev |= POLLIN;
    if (out->len > 0 || out->piped > 0)
        ev |= POLLOUT;
    return ev;
}

static void step(struct relay_pair *p)
{
    switch (p->stage) {
    case RELAY_DRAIN:
        drain(p);
        return;
    case RELAY_HELLO:
        p->svc->hello(p);
        return;
    case RELAY_CONNECTING: {
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(p->bfd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
            err = errno;
        struct sockaddr_storage peer;
        socklen_t plen = sizeof(peer);
        /* poll reports a connecting socket only once it is established,
         * failed (SO_ERROR above) or closed without an error left: the
         * last is a failure too, and waiting on it would spin. */
        if (!err && getpeername(p->bfd, (struct sockaddr *)&peer, &plen) < 0)
            err = ECONNRESET;
        if (!err)
            p->stage = RELAY_OPEN;
        p->svc->connected(p, err);
        if (err || p->afd < 0)
            return;
        break; /* bytes may already wait on either side */
    }
    case RELAY_OPEN:
        break;
    }
    if (pump(&p->up, p->afd, p->bfd) < 0 || pump(&p->down, p->bfd, p->afd) < 0) {
        relay_close(p);
        return;
    }
    if (p->up.shut && p->down.shut)
        relay_close(p);
}

/* Binding a port below 1024 is not why it starts as root (neither port
 * is); PID 1's children start as root and this is where that ends. */
static int drop_privileges(void)
{
    if (getuid() != 0)
        return 0;
    if (setgroups(0, NULL) || setgid(AGENT_NOBODY) || setuid(AGENT_NOBODY))
        return -errno;
    return 0;
}

/* The poll set of one pair: afd and bfd as its stage needs them.  An fd
 * with nothing asked of it is left out: poll would still report its
 * POLLHUP/POLLERR and spin. */
static void pair_poll(const struct relay_pair *p, struct pollfd *a, struct pollfd *b)
{
    *a = *b = (struct pollfd){.fd = -1};
    switch (p->stage) {
    case RELAY_DRAIN:
    case RELAY_HELLO:
        *a = (struct pollfd){.fd = p->afd, .events = POLLIN};
        return;
    case RELAY_CONNECTING:
        /* The accepted side's bytes wait in its socket meanwhile. */
        *b = (struct pollfd){.fd = p->bfd, .events = POLLOUT};
        return;
    case RELAY_OPEN:
        a->events = dir_events(&p->up, &p->down);
        b->events = dir_events(&p->down, &p->up);
        a->fd = a->events ? p->afd : -1;
        b->fd = b->events ? p->bfd : -1;
        return;
    }
}

/* The relay: never returns (exits on a setup error for the supervisor to
 * retry).  A service whose listener cannot be made is logged and left
 * out; the other still runs. */
static void relay_run(void)
{
    int lfd[NSERVICES];
    int live = 0;
    for (size_t s = 0; s < NSERVICES; s++) {
        lfd[s] = services[s]->listen();
        if (lfd[s] < 0)
            relay_log(services[s]->name, -lfd[s]);
        else
            live++;
    }
    if (!live)
        _exit(1);
    /* Two sockets and two pipes a pair: room for every pair (the
     * kernel's 1024 a process would not be; a pair that finds no pipe
     * copies instead). */
    struct rlimit nofile = {RELAY_NOFILE, RELAY_NOFILE};
    if (setrlimit(RLIMIT_NOFILE, &nofile) < 0)
        relay_log("RLIMIT_NOFILE", errno);
    int rc = drop_privileges();
    if (rc < 0) {
        relay_log("drop privileges", -rc);
        _exit(1);
    }
    for (int i = 0; i < RELAY_MAX_PAIRS; i++)
        pairs[i].afd = pairs[i].bfd = -1;

    /* Only the fds something is asked of, packed: poll's cost follows
     * its length, and most of the table is usually free. */
    static struct pollfd pfd[NSERVICES + 2 * RELAY_MAX_PAIRS];
    static short owner[NSERVICES + 2 * RELAY_MAX_PAIRS]; /* the pair of pfd[k] */
    for (;;) {
        bool timed = false; /* a pair with a deadline: wake each second */
        unsigned n = 0;
        for (size_t s = 0; s < NSERVICES; s++)
            pfd[n++] = (struct pollfd){.fd = lfd[s], .events = POLLIN};
        for (int i = 0; i < RELAY_MAX_PAIRS; i++) {
            if (pairs[i].afd < 0)
                continue;
            struct pollfd a, b;
            pair_poll(&pairs[i], &a, &b);
            if (a.fd >= 0)
                owner[n] = (short)i, pfd[n++] = a;
            if (b.fd >= 0)
                owner[n] = (short)i, pfd[n++] = b;
            timed |= pairs[i].deadline > 0;
        }
        if (poll(pfd, n, timed ? 1000 : -1) < 0) {
            if (errno != EINTR) {
                relay_log("poll", errno);
                _exit(1);
            }
            continue;
        }
        /* A pair's entries are next to each other: it steps once. */
        for (unsigned k = NSERVICES; k < n; k++) {
            int i = owner[k];
            short rev = pfd[k].revents;
            while (k + 1 < n && owner[k + 1] == i)
                rev |= pfd[++k].revents;
            if (rev && pairs[i].afd >= 0)
                step(&pairs[i]);
        }
        if (timed) {
            double now = relay_now();
            for (int i = 0; i < RELAY_MAX_PAIRS; i++)
                if (pairs[i].afd >= 0 && pairs[i].deadline > 0 && now > pairs[i].deadline)
                    relay_close(&pairs[i]);
        }
        /* Accept last, so a new pair is first polled, not stepped blind. */
        for (size_t s = 0; s < NSERVICES; s++)
            if (pfd[s].revents & POLLIN)
                accept_one(services[s], lfd[s]);
    }
}

/* Keeps one relay running.  A relay that dies young (a port taken, say)
 * is restarted after a delay that doubles up to a minute, so a permanent
 * failure costs a log line a minute, not a loop. */
static void supervise(void)
{
    unsigned delay = 1;
    for (;;) {
        double start = relay_now();
        pid_t pid = fork();
        if (pid == 0) {
            prctl(PR_SET_NAME, "airlock-relay");
            relay_run();
            _exit(1);
        }
        if (pid < 0) {
            relay_log("fork", errno);
        } else {
            int st;
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            fprintf(stderr, "airlock-agent: relay %s %d; restarting\n",
                    WIFSIGNALED(st) ? "killed by signal" : "exited",
                    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        }
        if (relay_now() - start > 10)
            delay = 1;
        sleep(delay);
        if (delay < 60)
            delay *= 2;
    }
}

int agent_relay_start(void)
{
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid > 0)
        return 0;
    /* Out of PID 1's session and with default signals: the supervisor
     * waits for its relay itself, and MSG_NOSIGNAL covers SIGPIPE. */
    setsid();
    prctl(PR_SET_NAME, "airlock-proxy");
    signal(SIGCHLD, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    supervise();
    _exit(1);
}
