/* The guest end of egress: a TCP listener on 127.0.0.1:AGENT_PROXY_PORT
 * that relays each connection, byte for byte, to the host over vsock
 * (CID 2, port AGENT_EGRESS_VSOCK_PORT).  The guest has no network device,
 * so this is the only way out; the host parses the HTTP proxy request
 * (CONNECT or absolute URI) and applies the allowlist.  The relay does not
 * look at the bytes: it has nothing to decide, and untrusted code could
 * open the vsock itself anyway.  It only exists so that ordinary programs
 * (HTTPS_PROXY=http://127.0.0.1:3128) can use it.
 *
 * Process layout (all started from PID 1 before it listens for the host):
 *   supervisor (root, own session)  restarts the relay when it dies
 *     relay (uid/gid 65534)         one poll loop over every pair
 * The supervisor exists so PID 1's accept loop and its reap-everything
 * SIGCHLD handler stay as they are: the relay is not PID 1's child, so
 * nothing there waits for it, and the connection handlers (which wait
 * for their commands by pid) never see it either.  If the supervisor
 * itself dies, PID 1 reaps it and egress is gone until the next boot: it
 * only forks and waits, so only a root command can kill it.
 * The relay shares uid 65534 with commands by default, so they can signal
 * or trace it; it holds nothing they lack (the vsock is open to them too),
 * and a killed relay comes back.  Both inherit PID 1's OOM shield; the
 * relay's memory is bounded (PROXY_BUF below). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "guest/agent/agent.h"
#include "guest/agent/proto.h"

/* At most this many client/host pairs at once; more are accepted and
 * closed at once (the client sees EOF, or an RST if it had sent bytes), so
 * the backlog never fills. */
#define PROXY_MAX_PAIRS 64
/* Per direction: bounds the relay's memory (64 pairs * 2 * 64 KiB = 8 MiB
 * at most, allocated only while a pair exists). */
#define PROXY_BUF (64 * 1024)

static const char bad_gateway[] =
    "HTTP/1.1 502 Bad Gateway\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 24\r\n"
    "Connection: close\r\n"
    "\r\n"
    "airlock: egress refused\n";

static void plog(const char *what, int err)
{
    fprintf(stderr, "airlock-agent: proxy: %s: %s\n", what, strerror(err));
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

/* One direction of a pair: bytes read from `from`, waiting for `to`. */
struct dir {
    uint8_t *buf;
    size_t off, len;
    bool eof;  /* `from` has reached EOF: no more reads */
    bool shut; /* EOF passed on: shutdown(to, SHUT_WR) done */
};

struct pair {
    int cfd;          /* the TCP client; -1 = free slot */
    int vfd;          /* the vsock to the host */
    bool connecting;  /* vsock connect not finished yet */
    double drain_until; /* refused: 502 sent, reading the client to EOF */
    struct dir up;    /* client -> host */
    struct dir down;  /* host -> client */
};

static struct pair pairs[PROXY_MAX_PAIRS];
static int npairs;

static void pair_close(struct pair *p)
{
    close(p->cfd);
    close(p->vfd);
    free(p->up.buf);
    free(p->down.buf);
    memset(p, 0, sizeof(*p));
    p->cfd = p->vfd = -1;
    npairs--;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* How long a refused client may take to close after its 502. */
#define PROXY_DRAIN_S 2.0

/* The host refused (or never answered) the vsock connect: tell the client
 * in HTTP, since it speaks it.  The reply is far below a socket buffer, so
 * one non-blocking send is enough.  The client is then read to EOF (or for
 * PROXY_DRAIN_S) before the close: closing with its request unread would
 * send an RST, which can reach the client before it has read the 502. */
static void pair_refuse(struct pair *p)
{
    close(p->vfd);
    p->vfd = -1;
    p->connecting = false;
    ssize_t n = send(p->cfd, bad_gateway, sizeof(bad_gateway) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 || shutdown(p->cfd, SHUT_WR) < 0) {
        pair_close(p);
        return;
    }
    p->drain_until = now_s() + PROXY_DRAIN_S;
}

static void pair_drain(struct pair *p)
{
    uint8_t junk[4096];
    for (;;) {
        ssize_t n = recv(p->cfd, junk, sizeof(junk), MSG_DONTWAIT);
        if (n > 0)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0 && errno == EINTR)
            continue;
        pair_close(p);
        return;
    }
}

static int vsock_connect_host(void)
{
    int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_vm a = {.svm_family = AF_VSOCK,
                            .svm_cid = VMADDR_CID_HOST,
                            .svm_port = AGENT_EGRESS_VSOCK_PORT};
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static void accept_one(int lfd)
{
    int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (cfd < 0) {
        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
            plog("accept", errno);
        return;
    }
    if (npairs >= PROXY_MAX_PAIRS) {
        close(cfd);
        return;
    }
    struct pair *p = NULL;
    for (int i = 0; i < PROXY_MAX_PAIRS && !p; i++)
        if (pairs[i].cfd < 0)
            p = &pairs[i];
    p->cfd = cfd;
    p->vfd = -1;
    npairs++;
    p->up.buf = malloc(PROXY_BUF);
    p->down.buf = malloc(PROXY_BUF);
    if (!p->up.buf || !p->down.buf) {
        pair_close(p);
        return;
    }
    int vfd = vsock_connect_host();
    if (vfd < 0) {
        pair_refuse(p);
        return;
    }
    p->vfd = vfd;
    p->connecting = true;
}

/* Moves bytes `from` -> buffer -> `to` as far as they go without
 * blocking.  Returns -1 when the pair must be torn down (a hard error on
 * either side: the other side then sees the close). */
static int dir_pump(struct dir *d, int from, int to)
{
    while (!d->eof && d->off + d->len < PROXY_BUF) {
        ssize_t n = recv(from, d->buf + d->off + d->len, PROXY_BUF - d->off - d->len, MSG_DONTWAIT);
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
    else if (d->off + d->len == PROXY_BUF) {
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

/* poll events for `fd` as source of `in` and sink of `out`. */
static short dir_events(const struct dir *in, const struct dir *out)
{
    short ev = 0;
    if (!in->eof && in->off + in->len < PROXY_BUF)
        ev |= POLLIN;
    if (out->len > 0)
        ev |= POLLOUT;
    return ev;
}

static void pair_step(struct pair *p)
{
    if (p->drain_until > 0) {
        pair_drain(p);
        return;
    }
    if (p->connecting) {
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(p->vfd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
            err = errno;
        if (err) {
            pair_refuse(p);
            return;
        }
        struct sockaddr_vm peer;
        socklen_t plen = sizeof(peer);
        /* poll reports a connecting vsock only once it is established,
         * failed (SO_ERROR above) or closed without an error left: the
         * last is a failure too, and waiting on it would spin. */
        if (getpeername(p->vfd, (struct sockaddr *)&peer, &plen) < 0) {
            pair_refuse(p);
            return;
        }
        p->connecting = false;
    }
    if (dir_pump(&p->up, p->cfd, p->vfd) < 0 || dir_pump(&p->down, p->vfd, p->cfd) < 0) {
        pair_close(p);
        return;
    }
    if (p->up.shut && p->down.shut)
        pair_close(p);
}

static int listen_loopback(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons(AGENT_PROXY_PORT),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64)) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/* Binding a port below 1024 is not why it starts as root (3128 is not);
 * PID 1's children start as root and this is where that ends. */
static int drop_privileges(void)
{
    if (getuid() != 0)
        return 0;
    if (setgroups(0, NULL) || setgid(AGENT_NOBODY) || setuid(AGENT_NOBODY))
        return -errno;
    return 0;
}

/* The relay: never returns (exits on a setup error for the supervisor to
 * retry). */
static void relay_run(void)
{
    int lfd = listen_loopback();
    if (lfd < 0) {
        plog("listen 127.0.0.1", -lfd);
        _exit(1);
    }
    int rc = drop_privileges();
    if (rc < 0) {
        plog("drop privileges", -rc);
        _exit(1);
    }
    for (int i = 0; i < PROXY_MAX_PAIRS; i++)
        pairs[i].cfd = pairs[i].vfd = -1;

    struct pollfd pfd[1 + 2 * PROXY_MAX_PAIRS];
    for (;;) {
        pfd[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (int i = 0; i < PROXY_MAX_PAIRS; i++) {
            struct pair *p = &pairs[i];
            struct pollfd *c = &pfd[1 + 2 * i], *v = c + 1;
            *c = *v = (struct pollfd){.fd = -1};
            if (p->cfd < 0)
                continue;
            if (p->drain_until > 0) {
                *c = (struct pollfd){.fd = p->cfd, .events = POLLIN};
                continue;
            }
            if (p->connecting) {
                /* Client bytes wait in its socket until the host answers. */
                *v = (struct pollfd){.fd = p->vfd, .events = POLLOUT};
                continue;
            }
            c->events = dir_events(&p->up, &p->down);
            v->events = dir_events(&p->down, &p->up);
            /* An fd with nothing asked of it is left out: poll would
             * still report its POLLHUP/POLLERR and spin. */
            c->fd = c->events ? p->cfd : -1;
            v->fd = v->events ? p->vfd : -1;
        }
        /* Only refused clients have a deadline: check them each second. */
        bool draining = false;
        for (int i = 0; i < PROXY_MAX_PAIRS; i++)
            draining |= pairs[i].cfd >= 0 && pairs[i].drain_until > 0;
        if (poll(pfd, 1 + 2 * PROXY_MAX_PAIRS, draining ? 1000 : -1) < 0) {
            if (errno != EINTR) {
                plog("poll", errno);
                _exit(1);
            }
            continue;
        }
        double now = draining ? now_s() : 0;
        for (int i = 0; i < PROXY_MAX_PAIRS; i++) {
            struct pair *p = &pairs[i];
            if (p->cfd < 0)
                continue;
            if (pfd[1 + 2 * i].revents || pfd[2 + 2 * i].revents)
                pair_step(p);
            if (p->cfd >= 0 && p->drain_until > 0 && now > p->drain_until)
                pair_close(p);
        }
        /* Accept last, so a new pair is first polled, not stepped blind. */
        if (pfd[0].revents & POLLIN)
            accept_one(lfd);
    }
}

/* Keeps one relay running.  A relay that dies young (its port taken, say)
 * is restarted after a delay that doubles up to a minute, so a permanent
 * failure costs a log line a minute, not a loop. */
static void supervise(void)
{
    unsigned delay = 1;
    for (;;) {
        double start = now_s();
        pid_t pid = fork();
        if (pid == 0) {
            prctl(PR_SET_NAME, "airlock-relay");
            relay_run();
            _exit(1);
        }
        if (pid < 0) {
            plog("fork", errno);
        } else {
            int st;
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            fprintf(stderr, "airlock-agent: proxy: relay %s %d; restarting\n",
                    WIFSIGNALED(st) ? "killed by signal" : "exited",
                    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        }
        if (now_s() - start > 10)
            delay = 1;
        sleep(delay);
        if (delay < 60)
            delay *= 2;
    }
}

int agent_proxy_start(void)
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
