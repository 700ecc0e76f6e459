/* The spawner process; see spawner.h. */
#include "vmm/util/spawner.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What the spawner runs: the daemon's two verbs of its own binary, and
 * the e2fsprogs tools vmm/image/e2fs_tool.c runs (volumes: mke2fs and
 * e2fsck; an image import's debugfs). */
static const char *const self_verbs[] = {"sandbox-vm", "snapshot"};
static const char *const tools[] = {"e2fsck", "mke2fs", "debugfs"};

static bool listed(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, list[i]))
            return true;
    return false;
}

int spawn_parse(char *msg, size_t len, unsigned nfds, struct spawn_parsed *out, const char **why)
{
    struct spawn_head h;
    *why = NULL;
    if (len < sizeof(h))
        return *why = "shorter than its head", -EINVAL;
    memcpy(&h, msg, sizeof(h));
    if (h.magic != SPAWN_MAGIC)
        return *why = "not a spawn request", -EINVAL;
    if (h.prog != SPAWN_SELF && h.prog != SPAWN_TOOL)
        return *why = "an unknown program kind", -EINVAL;
    if (h.flags & ~SPAWN_NEW_PGRP)
        return *why = "unknown flags", -EINVAL;
    if (h.nfds > SPAWN_MAX_FDS)
        return *why = "too many fds", -E2BIG;
    if (h.nfds != nfds)
        return *why = "its fds are not the ones it names", -EINVAL;
    for (unsigned i = 0; i < h.nfds; i++) {
        if (h.target[i] >= SPAWN_MAX_TARGET)
            return *why = "an fd's number is too high", -EINVAL;
        for (unsigned j = 0; j < i; j++)
            if (h.target[j] == h.target[i])
                return *why = "two fds for one number", -EINVAL;
    }
    if (h.argc < 1 || h.argc > SPAWN_MAX_ARGS)
        return *why = "no arguments, or too many", h.argc ? -E2BIG : -EINVAL;
    if (h.arglen != len - sizeof(h))
        return *why = "its arguments' length is not the message's", -EINVAL;
    char *p = msg + sizeof(h), *end = p + h.arglen;
    for (unsigned i = 0; i < h.argc; i++) {
        char *nul = memchr(p, '\0', (size_t)(end - p));
        if (!nul)
            return *why = "an argument without its end", -EINVAL;
        out->argv[i] = p;
        p = nul + 1;
    }
    if (p != end)
        return *why = "bytes past its last argument", -EINVAL;
    out->argv[h.argc] = NULL;
    if (h.prog == SPAWN_SELF
            ? h.argc < 2 || strcmp(out->argv[0], "airlock") ||
                  !listed(out->argv[1], self_verbs, sizeof(self_verbs) / sizeof(self_verbs[0]))
            : !listed(out->argv[0], tools, sizeof(tools) / sizeof(tools[0])))
        return *why = "a program the spawner does not run", -EINVAL;
    out->prog = (enum spawn_prog)h.prog;
    out->flags = h.flags;
    out->nfds = h.nfds;
    memcpy(out->target, h.target, sizeof(h.target));
    out->argc = h.argc;
    return 0;
}

ssize_t spawn_build(char *buf, size_t cap, enum spawn_prog prog, unsigned flags,
                    char *const argv[], const uint8_t *target, unsigned nfds)
{
    struct spawn_head h = {.magic = SPAWN_MAGIC, .prog = (uint16_t)prog,
                           .flags = (uint16_t)flags, .nfds = (uint16_t)nfds};
    if (nfds > SPAWN_MAX_FDS || cap < sizeof(h))
        return -E2BIG;
    if (nfds)
        memcpy(h.target, target, nfds);
    size_t len = sizeof(h);
    for (; argv[h.argc]; h.argc++) {
        size_t n = strlen(argv[h.argc]) + 1;
        if (h.argc >= SPAWN_MAX_ARGS || n > cap - len)
            return -E2BIG;
        memcpy(buf + len, argv[h.argc], n);
        len += n;
    }
    h.arglen = (uint32_t)(len - sizeof(h));
    memcpy(buf, &h, sizeof(h));
    return (ssize_t)len;
}

/* ---- the spawner's side ---- */

static pid_t daemon_pid;

/* In the child: async-signal-safe calls only, then exec.  fds[i] moves to
 * target[i] by way of numbers above every target, so no dup2 lands on
 * one not yet moved (nor on the report pipe). */
static void child(const struct spawn_parsed *r, const int *fds, int report)
{
    int e = 0;
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != daemon_pid)
        _exit(125); /* the daemon is already gone */
    if (r->flags & SPAWN_NEW_PGRP)
        setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int high[SPAWN_MAX_FDS];
    if ((report = fcntl(report, F_DUPFD_CLOEXEC, SPAWN_MAX_TARGET)) < 0)
        _exit(125);
    for (unsigned i = 0; i < r->nfds; i++)
        if ((high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, SPAWN_MAX_TARGET)) < 0)
            goto fail;
    for (unsigned i = 0; i < r->nfds; i++)
        if (dup2(high[i], r->target[i]) < 0)
            goto fail;
    if (r->prog == SPAWN_SELF) {
        execv("/proc/self/exe", r->argv);
    } else {
        execvp(r->argv[0], r->argv);
        static const char *const sbin[] = {"/usr/sbin/", "/sbin/"};
        for (size_t i = 0; errno == ENOENT && i < sizeof(sbin) / sizeof(sbin[0]); i++) {
            char path[64];
            size_t a = strlen(sbin[i]), b = strlen(r->argv[0]);
            if (a + b >= sizeof(path))
                break;
            memcpy(path, sbin[i], a);
            memcpy(path + a, r->argv[0], b + 1);
            execv(path, r->argv);
        }
    }
fail:
    e = errno;
    (void)!write(report, &e, sizeof(e));
    _exit(r->prog == SPAWN_SELF ? 125 : 127);
}

static void reply(int sock, pid_t pid, int exec_errno)
{
    struct spawn_reply r = {.pid = pid, .exec_errno = exec_errno};
    (void)!send(sock, &r, sizeof(r), MSG_NOSIGNAL);
}

/* One request: its fds are ours until the child has them. */
static void serve_one(int sock, char *msg, ssize_t n, int *fds, unsigned nfds)
{
    static struct spawn_parsed r;
    const char *why;
    int rc = spawn_parse(msg, (size_t)n, nfds, &r, &why);
    if (rc) {
        fprintf(stderr, "airlock: spawner: refused a request: %s\n", why);
        reply(sock, rc, 0);
        return;
    }
    int report[2];
    if (pipe2(report, O_CLOEXEC) < 0) {
        reply(sock, -errno, 0);
        return;
    }
    /* CLONE_PARENT: the daemon's child, reaped by it (spawner.h). */
    pid_t pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, NULL, NULL, 0);
    if (pid == 0)
        child(&r, fds, report[1]);
    int e = pid < 0 ? errno : 0;
    close(report[1]);
    int exec_errno = 0;
    ssize_t got;
    while (pid > 0 && (got = read(report[0], &exec_errno, sizeof(exec_errno))) < 0 &&
           errno == EINTR)
        ;
    close(report[0]);
    reply(sock, pid < 0 ? -e : pid, exec_errno);
}

static void spawner_main(int sock)
{
    static char msg[SPAWN_MAX_MSG];
    for (;;) {
        int fds[SPAWN_MAX_FDS];
        unsigned nfds = 0;
        bool cut = false;
        struct iovec iov = {.iov_base = msg, .iov_len = sizeof(msg)};
        union {
            struct cmsghdr h;
            char space[CMSG_SPACE(SPAWN_MAX_FDS * sizeof(int))];
        } cm;
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.space,
                            .msg_controllen = sizeof(cm.space)};
        ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            _exit(0); /* the daemon is gone */
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                continue;
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k; i++) {
                int f;
                memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                if (nfds < SPAWN_MAX_FDS)
                    fds[nfds++] = f;
                else
                    close(f), cut = true;
            }
        }
        if (cut || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
            reply(sock, -EMSGSIZE, 0);
        else
            serve_one(sock, msg, n, fds, nfds);
        for (unsigned i = 0; i < nfds; i++)
            close(fds[i]);
    }
}

/* ---- the daemon's side ---- */

static int chan = -1;
static pthread_mutex_t chan_lock = PTHREAD_MUTEX_INITIALIZER;

int spawner_start(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return -errno;
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        return -e;
    }
    if (pid == 0) {
        daemon_pid = parent;
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
            _exit(0);
        prctl(PR_SET_NAME, "airlock-spawner");
        /* Only its socket and stdio: the daemon's listeners, state lock
         * and audit log stay the daemon's. */
        int s = sv[1];
        close_range(3, (unsigned)s - 1, 0);
        close_range((unsigned)s + 1, ~0U, 0);
        spawner_main(s);
    }
    close(sv[1]);
    chan = sv[0];
    return 0;
}

bool spawner_running(void)
{
    return chan >= 0;
}

pid_t spawner_spawn(enum spawn_prog prog, unsigned flags, char *const argv[], const int *fds,
                    const uint8_t *target, unsigned nfds, int *exec_errno)
{
    static char buf[SPAWN_MAX_MSG];
    if (exec_errno)
        *exec_errno = 0;
    if (chan < 0)
        return -ENOTCONN;
    if (nfds > SPAWN_MAX_FDS)
        return -E2BIG;
    pthread_mutex_lock(&chan_lock);
    ssize_t len = spawn_build(buf, sizeof(buf), prog, flags, argv, target, nfds);
    pid_t pid = -EIO;
    if (len < 0) {
        pid = (pid_t)len;
        goto out;
    }
    struct iovec iov = {.iov_base = buf, .iov_len = (size_t)len};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(SPAWN_MAX_FDS * sizeof(int))];
    } cm;
    memset(&cm, 0, sizeof(cm));
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds) {
        mh.msg_control = cm.space;
        mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
    }
    ssize_t n;
    do
        n = sendmsg(chan, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n != len) {
        pid = n < 0 ? -errno : -EIO;
        goto out;
    }
    struct spawn_reply r;
    do
        n = recv(chan, &r, sizeof(r), 0);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof(r) || r.pid == 0 || r.pid < -4095) {
        pid = -EIO; /* the spawner died, or answered nonsense */
        goto out;
    }
    pid = r.pid;
    if (exec_errno && pid > 0)
        *exec_errno = r.exec_errno;
out:
    pthread_mutex_unlock(&chan_lock);
    return pid;
}
