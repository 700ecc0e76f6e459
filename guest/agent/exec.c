/* EXEC: fork the command into its own session with the asked limits and
 * credentials, then multiplex its pipes and the host's stream with poll
 * until it exits (or its time is up and its whole process group is
 * killed).  The reply order is STARTED, output, EXIT — or a single ERROR
 * when it never started, reported from the child through a CLOEXEC pipe. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent/agent.h"
#include "guest/agent/keep.h"

/* How long output may still flow after the command exited (a background
 * process outside its group may hold the pipes). */
#define DRAIN_MS 1000

static const char *argv_buf[AGENT_MAX_ARGS + 1];
static const char *env_buf[AGENT_MAX_ENVS + 1];

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the child ---- */

static void child_fail(int errfd, uint32_t op, int err)
{
    uint32_t rep[2] = {(uint32_t)err, op};
    ssize_t n = write(errfd, rep, sizeof(rep));
    (void)n;
    _exit(127);
}

static int set_limit(int res, uint64_t v)
{
    if (v == AGENT_RLIM_KEEP)
        return 0;
    struct rlimit rl = {.rlim_cur = v, .rlim_max = v};
    return setrlimit(res, &rl);
}

/* The fixed three (soft = hard), then the list, which may name any
 * resource with its own soft and hard (an OCI process's rlimits): 0 or
 * -1 with errno. */
static int set_limits(const struct agent_exec_req *r)
{
    if (set_limit(RLIMIT_NPROC, r->rlim_nproc) || set_limit(RLIMIT_FSIZE, r->rlim_fsize) ||
        set_limit(RLIMIT_NOFILE, r->rlim_nofile))
        return -1;
    for (uint32_t i = 0; i < r->nrlimits; i++) {
        struct rlimit rl = {.rlim_cur = r->rlimits[i].soft, .rlim_max = r->rlimits[i].hard};
        if (setrlimit((int)r->rlimits[i].resource, &rl))
            return -1;
    }
    return 0;
}

/* setgroups with the request's list (none when it is empty), then the
 * gid and the uid; an unprivileged agent runs commands as itself and
 * refuses anything else. */
static int set_creds(const struct agent_exec_req *r, uid_t uid, gid_t gid)
{
    if (geteuid() == 0) {
        gid_t groups[AGENT_MAX_GROUPS];
        for (uint32_t i = 0; i < r->ngroups; i++)
            groups[i] = r->groups[i];
        return setgroups(r->ngroups, groups) || setgid(gid) || setuid(uid) ? errno : 0;
    }
    if ((r->uid != AGENT_ID_DEFAULT && r->uid != geteuid()) ||
        (r->gid != AGENT_ID_DEFAULT && r->gid != getegid()) || r->ngroups)
        return EPERM; /* an unprivileged agent (host tests) */
    return 0;
}

/* AGENT_EXEC_F_SCRIPT (proto.h): a script execve would refuse goes into
 * a memfd the shell reads with `.` as fd SCRIPT_FD (a shell's
 * redirections name fds 0-9 only); argv (a copy, 3 entries + NULL) then
 * names it, and *mfd is the memfd (else -1).  0 or an errno.  Before the
 * rlimits (a small RLIMIT_FSIZE would cut the write); the caller puts
 * the memfd at SCRIPT_FD, the one fd besides 0-2 that crosses execve,
 * and the script's first command closes it. */
#define SCRIPT_FD 3
static int script_by_fd(const struct agent_exec_req *r, const char **av, int *mfd)
{
    static const char head[] = "exec 3<&- ; ";
    *mfd = -1;
    av[0] = r->argv[0];
    av[1] = r->argv[1];
    av[2] = r->argv[2];
    av[3] = NULL;
    size_t len = strlen(r->argv[2]);
    if (len < AGENT_SCRIPT_INLINE_MAX)
        return 0;
    int fd = *mfd = memfd_create("airlock-cmd", MFD_CLOEXEC);
    if (fd < 0)
        return errno;
    const char *parts[2] = {head, r->argv[2]};
    size_t lens[2] = {sizeof(head) - 1, len};
    for (int i = 0; i < 2; i++)
        for (size_t off = 0; off < lens[i];) {
            ssize_t n = write(fd, parts[i] + off, lens[i] - off);
            if (n < 0 && errno != EINTR)
                return errno;
            off += n > 0 ? (size_t)n : 0;
        }
    av[2] = ". /proc/self/fd/3";
    return 0;
}

/* Never returns.  With a terminal, in, out and err are all its slave. */
static void child_run(const struct agent_exec_req *r, int in, int out, int err, int errfd)
{
    /* The agent ignores SIGPIPE; an ignored disposition survives execve. */
    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    uid_t uid = r->uid == AGENT_ID_DEFAULT ? AGENT_NOBODY : r->uid;
    gid_t gid = r->gid == AGENT_ID_DEFAULT ? AGENT_NOBODY : r->gid;
    /* Own session and process group, so a timeout can kill all of it. */
    setsid();
    int e;
    if ((e = agent_pidns_child(r)))
        child_fail(errfd, r->ctr_name ? AGENT_OP_CONTAINER : AGENT_OP_SPAWN, e);
    if ((e = agent_lnx_apply(r)))
        child_fail(errfd, AGENT_OP_LINUX, e);
    if ((r->flags & AGENT_EXEC_F_TTY) && (e = agent_pty_take(in, uid, gid)))
        child_fail(errfd, AGENT_OP_SPAWN, e);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        child_fail(errfd, AGENT_OP_SPAWN, errno);
    const char *av[4];
    int mfd = -1;
    if ((r->flags & AGENT_EXEC_F_SCRIPT) && (e = script_by_fd(r, av, &mfd)))
        child_fail(errfd, AGENT_OP_SPAWN, e);
    /* The agent shields itself from the OOM killer (main.c); the command
     * must stay the killer's first choice, so it gets the default back,
     * or what its container's config asks (AGENT_LNX_F_OOM). */
    int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (oom >= 0) {
        char adj[16];
        int n = snprintf(adj, sizeof(adj), "%d",
                         r->lnx_flags & AGENT_LNX_F_OOM ? (int)r->oom_score_adj : 0);
        ssize_t w = write(oom, adj, (size_t)n);
        close(oom);
        if (w < 0 && (r->lnx_flags & AGENT_LNX_F_OOM))
            child_fail(errfd, AGENT_OP_LINUX, errno);
    }
    if (set_limits(r))
        child_fail(errfd, AGENT_OP_RLIMIT, errno);
    if ((e = agent_caps_bound(r)) || (e = set_creds(r, uid, gid)) || (e = agent_caps_set(r)))
        child_fail(errfd, AGENT_OP_CRED, e);
    /* After setuid, so the directory is checked as the command's user. */
    if (chdir(r->cwd && *r->cwd ? r->cwd : "/"))
        child_fail(errfd, AGENT_OP_CHDIR, errno);
    if ((r->flags & AGENT_EXEC_F_NO_NEW_PRIVS) && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        child_fail(errfd, AGENT_OP_CRED, errno);
    /* Only 0-2 and errfd are meant to cross execve; errfd is CLOEXEC. */
    close_range(3, ~0u, CLOSE_RANGE_CLOEXEC);
    if (mfd >= 0) { /* errfd moves out of SCRIPT_FD's way first */
        int moved = errfd == SCRIPT_FD ? fcntl(errfd, F_DUPFD_CLOEXEC, SCRIPT_FD + 1) : errfd;
        if (moved < 0 || dup2(mfd, SCRIPT_FD) < 0)
            child_fail(errfd, AGENT_OP_SPAWN, errno);
        errfd = moved;
    }
    child_fail(errfd, AGENT_OP_EXEC,
               agent_exec_search(r->flags & AGENT_EXEC_F_SCRIPT ? av : r->argv, r->envp));
}

/* ---- the parent ---- */

struct run {
    pid_t pid;
    int pidfd;
    int in, out, err;              /* our ends; -1 once closed */
    int pty;                       /* with a terminal: its master (in and out
                                    * are dups of it, err is -1); else -1 */
    uint8_t pend[AGENT_MAX_CHUNK]; /* stdin from the host not yet written */
    size_t pend_len, pend_off;
    int in_eof;                    /* close stdin once pend is written */
    uint32_t in_pass;              /* a STDIN payload still in the socket, for stdin_splice */
    int in_room;                   /* the stdin pipe had room when last tried */
    int exited, status, timed_out;
    int pidns_init;                /* PID 1 of a PID namespace (AGENT_PIDNS_NEW) */
    struct sig_hold hold;          /* its signals it cannot take yet */
    int64_t deadline, drain_until;
    /* With AGENT_EXEC_F_KEEP: where the next connection is handed over
     * (-1 without), the output sent lately, and the stdin taken in all. */
    int keep_fd;
    struct keep_ring ring;
    uint64_t stdin_got;
};

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Forwards one chunk of a pipe as STDOUT/STDERR, read straight into the
 * frame after its header (the output's one copy inside the agent).  Not
 * splice from the pipe into the socket: vsock has no sendpage, so the
 * kernel sends each pipe page as its own 4 KiB packet, and measured that
 * way (lab, 256 MiB x 3, interleaved) the stream ran at 27.7 MB/s against
 * 29.6 for read + one send of the whole frame (64 KiB packets). */
static int pump(struct aconn *c, struct run *r, int *fd, uint16_t type)
{
    static uint8_t f[AGENT_HDR_SIZE + AGENT_MAX_CHUNK];
    ssize_t n = read(*fd, f + AGENT_HDR_SIZE, AGENT_MAX_CHUNK);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0) {
        close_fd(fd);
        return 0;
    }
    ssize_t len = agent_encode_in_place(f, sizeof(f), type, (size_t)n);
    if (len >= 0 && r->keep_fd >= 0) /* before the send: one cut short is replayed */
        keep_ring_add(&r->ring, type, f + AGENT_HDR_SIZE, (size_t)n);
    return len < 0 ? (int)len : agent_send_all(c->rd.fd, f, (size_t)len);
}

static void stdin_flush(struct run *r)
{
    while (r->in >= 0 && r->pend_off < r->pend_len) {
        ssize_t n = write(r->in, r->pend + r->pend_off, r->pend_len - r->pend_off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN) /* EPIPE: the command closed its stdin */
                close_fd(&r->in);
            return;
        }
        r->pend_off += (size_t)n;
    }
    if (r->pend_off >= r->pend_len && r->in_eof && r->in >= 0) {
        /* A terminal is not closed by its input's end: it gets VEOF. */
        if (r->pty >= 0)
            agent_pty_eof(r->in);
        close_fd(&r->in);
    }
}

/* Moves what the socket holds of a STDIN payload (agent_decode_data_frame)
 * into the command's stdin pipe with splice: one kernel copy, where recv,
 * the decoder's buffer, pend and write made four.  A full pipe clears
 * in_room (poll then waits for its room, not for the socket).  Where
 * splice cannot (EINVAL), or once the command closed its stdin, the bytes
 * are received into pend (stdin_flush writes them) or dropped. */
static int stdin_splice(struct aconn *c, struct run *r)
{
    ssize_t n = -1;
    if (r->in >= 0) {
        n = splice(c->rd.fd, NULL, r->in, NULL, r->in_pass, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            r->in_room = errno != EAGAIN;
            return 0;
        }
        if (n < 0 && errno == EPIPE) {
            close_fd(&r->in); /* the command closed its stdin */
            return 0;
        }
        if (n == 0)
            return -ECONNRESET;
    }
    if (n < 0) {
        n = agent_recv_some(c->rd.fd, r->pend, r->in_pass < sizeof(r->pend) ? r->in_pass : sizeof(r->pend));
        if (n < 0)
            return (int)n;
        r->pend_off = 0;
        r->pend_len = r->in >= 0 ? (size_t)n : 0;
    }
    r->in_pass -= (uint32_t)n;
    r->stdin_got += (uint64_t)n;
    return agent_decode_skip(&c->rd.dec, (uint32_t)n);
}

/* A message from the host while the command runs. */
static int on_host_msg(struct run *r, const struct agent_msg *m)
{
    switch (m->type) {
    case AGENT_STDIN:
        r->stdin_got += m->len;
        if (r->in >= 0) {
            memcpy(r->pend, m->payload, m->len);
            r->pend_len = m->len;
            r->pend_off = 0;
        }
        return 0;
    case AGENT_STDIN_EOF:
        r->in_eof = 1;
        return 0;
    case AGENT_KILL:
        kill(-r->pid, SIGKILL);
        return 0;
    case AGENT_SIGNAL:
        if (r->exited) /* its group may be gone and its number reused */
            return 0;
        if (!(m->u.signal.flags & AGENT_SIGNAL_F_PROCESS))
            kill(-r->pid, (int)m->u.signal.signo);
        else if (r->pidns_init)
            sig_hold_send(&r->hold, r->pid, (int)m->u.signal.signo, now_ms());
        else
            kill(r->pid, (int)m->u.signal.signo);
        return 0;
    case AGENT_WINSIZE:
        if (r->pty >= 0 && !r->exited)
            agent_pty_resize(r->pty, m->u.winsize.rows, m->u.winsize.cols);
        return 0;
    default:
        return -EPROTO;
    }
}

static void on_exit_seen(struct run *r)
{
    r->exited = 1;
    close_fd(&r->pidfd);
    /* Leftovers in its group go with it, and release the pipes. */
    kill(-r->pid, SIGKILL);
    r->drain_until = now_ms() + DRAIN_MS;
}

static int poll_timeout(const struct run *r)
{
    int64_t until = r->exited ? r->drain_until : r->timed_out ? -1 : r->deadline;
    int t = -1;
    if (until >= 0) {
        int64_t left = until - now_ms();
        t = left < 0 ? 0 : left > 60000 ? 60000 : (int)left;
    }
    /* Without a pidfd the exit is found by polling waitpid. */
    if (!r->exited && r->pidfd < 0 && (t < 0 || t > 50))
        t = 50;
    int hold = r->exited ? -1 : sig_hold_wait_ms(&r->hold);
    return hold >= 0 && (t < 0 || t > hold) ? hold : t;
}

static int run_loop(struct aconn *c, struct run *r)
{
    r->in_room = 1;
    for (;;) {
        if (r->exited && ((r->out < 0 && r->err < 0) || now_ms() >= r->drain_until))
            return 0;
        /* The host's stream is read only when stdin has room: that is the
         * back-pressure, and output keeps flowing meanwhile.  Each chunk
         * goes to the pipe before the next is decoded, and whether we
         * wait for the host is decided after the last write: deciding it
         * before (with a chunk still pending) and then emptying the
         * chunk left poll() waiting on neither the host nor stdin. */
        int want_host, rc;
        uint16_t type;
        uint32_t len;
        for (;;) {
            stdin_flush(r);
            want_host = r->pend_off >= r->pend_len && !r->exited && !r->in_pass;
            struct agent_msg m;
            if (!want_host || (rc = agent_reader_next(&c->rd, &m)) == 0)
                break;
            if (rc < 0 || (rc = on_host_msg(r, &m)) < 0)
                return rc;
        }
        /* A STDIN frame whose header is all we read: its payload goes
         * from the socket to the pipe (stdin_splice). */
        if (want_host && c->rd.pos == c->rd.len && (len = agent_decode_data_frame(&c->rd.dec, &type))) {
            if (type != AGENT_STDIN)
                return -EPROTO;
            r->in_pass = len;
            want_host = 0;
        }
        int passing = r->in_pass && r->pend_off >= r->pend_len && !r->exited;
        int to_pipe = r->pend_off < r->pend_len || (passing && r->in >= 0 && !r->in_room);
        struct pollfd p[5] = {
            {.fd = want_host || (passing && !to_pipe) ? c->rd.fd : -1, .events = POLLIN},
            {.fd = r->out, .events = POLLIN},
            {.fd = r->err, .events = POLLIN},
            {.fd = to_pipe ? r->in : -1, .events = POLLOUT},
            {.fd = r->exited ? -1 : r->pidfd, .events = POLLIN},
        };
        if (poll(p, 5, poll_timeout(r)) < 0 && errno != EINTR)
            return -errno;
        if (p[3].revents)
            r->in_room = 1;
        if (p[0].revents && (rc = passing ? stdin_splice(c, r) : agent_reader_fill_frame(&c->rd)) < 0)
            return rc;
        if (p[1].revents && (rc = pump(c, r, &r->out, AGENT_STDOUT)) < 0)
            return rc;
        if (p[2].revents && (rc = pump(c, r, &r->err, AGENT_STDERR)) < 0)
            return rc;
        if (!r->exited && waitpid(r->pid, &r->status, WNOHANG) == r->pid)
            on_exit_seen(r);
        if (!r->exited)
            sig_hold_retry(&r->hold, r->pid, now_ms());
        if (!r->exited && !r->timed_out && r->deadline >= 0 && now_ms() >= r->deadline) {
            kill(-r->pid, SIGKILL);
            r->timed_out = 1;
        }
    }
}

/* Waits for the child's verdict on its exec: 0 when it ran, else errno. */
static int exec_verdict(int errfd, uint32_t *op)
{
    uint32_t rep[2];
    ssize_t n;
    do
        n = read(errfd, rep, sizeof(rep));
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof(rep))
        return 0;
    *op = rep[1];
    return rep[0] ? (int)rep[0] : EIO;
}

/* A terminal as the command's stdio: its slave in in[0] (the child puts
 * it on 0-2), the master as r->pty, and dups of it as our in[1] and
 * out[0], which the loop closes on their own (STDIN_EOF, the slave's
 * hang-up) while WINSIZE still has the master.  0 or an errno. */
static int make_tty(const struct agent_exec_req *req, struct run *r, int in[2], int out[2])
{
    int e = agent_pty_open(req->tty_rows, req->tty_cols, &r->pty, &in[0]);
    if (e)
        return e;
    in[1] = fcntl(r->pty, F_DUPFD_CLOEXEC, 0);
    out[0] = fcntl(r->pty, F_DUPFD_CLOEXEC, 0);
    return in[1] < 0 || out[0] < 0 ? errno : 0;
}

static int make_pipes(int in[2], int out[2], int err[2])
{
    return pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) ? errno : 0;
}

static int spawn(const struct agent_exec_req *req, struct run *r, uint32_t *op)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, ep[2] = {-1, -1};
    int tty = !!(req->flags & AGENT_EXEC_F_TTY);
    *op = AGENT_OP_SPAWN;
    int rc = tty ? make_tty(req, r, in, out) : make_pipes(in, out, err);
    if (!rc && pipe2(ep, O_CLOEXEC))
        rc = errno;
    if (!rc)
        rc = agent_pidns_enter(req, op);
    if (rc) {
        /* nothing forked */
    } else if ((r->pid = fork()) < 0) {
        rc = errno;
    } else if (r->pid == 0) {
        child_run(req, in[0], tty ? in[0] : out[1], tty ? in[0] : err[1], ep[1]);
    } else {
        close_fd(&ep[1]);
        if ((rc = exec_verdict(ep[0], op)))
            waitpid(r->pid, NULL, 0);
    }
    agent_pidns_record(req, rc ? 0 : r->pid); /* undoes a container's set-up when rc */
    close_fd(&in[0]);
    close_fd(&out[1]);
    close_fd(&err[1]);
    close_fd(&ep[0]);
    close_fd(&ep[1]);
    r->in = in[1];
    r->out = out[0];
    r->err = err[0];
    if (rc) {
        close_fd(&r->in);
        close_fd(&r->out);
        close_fd(&r->err);
        close_fd(&r->pty);
        return rc;
    }
    /* Pipes of 1 MiB (Linux's default pipe-max-size; 64 KiB otherwise):
     * the command runs ahead while a chunk is on its way, and a read takes
     * a whole AGENT_MAX_CHUNK.  Best effort: a smaller pipe still works
     * (and a terminal has its own buffer). */
    fcntl(r->in, F_SETPIPE_SZ, 1 << 20);
    fcntl(r->out, F_SETPIPE_SZ, 1 << 20);
    fcntl(r->err, F_SETPIPE_SZ, 1 << 20);
    /* Non-blocking stdin: a command that does not read must not stall us.
     * (A terminal's dups share the master's flag: its reads say EAGAIN
     * too, which pump takes.) */
    fcntl(r->in, F_SETFL, O_NONBLOCK);
    if (!(req->flags & AGENT_EXEC_F_STDIN))
        close_fd(&r->in);
    return 0;
}

/* What a run holds once its command is reaped: its fds and replay. */
static void run_release(struct run *r)
{
    close_fd(&r->keep_fd);
    keep_ring_free(&r->ring);
    close_fd(&r->pidfd);
    close_fd(&r->in);
    close_fd(&r->out);
    close_fd(&r->err);
    close_fd(&r->pty);
}

/* EXIT, once the command ended and its output was sent. */
static int send_exit(struct aconn *c, struct run *r)
{
    uint32_t kind = WIFSIGNALED(r->status) ? AGENT_EXIT_SIGNAL : AGENT_EXIT_CODE;
    uint32_t value = WIFSIGNALED(r->status) ? (uint32_t)WTERMSIG(r->status)
                                            : (uint32_t)WEXITSTATUS(r->status);
    uint8_t f[AGENT_HDR_SIZE + AGENT_EXIT_SIZE];
    if (agent_encode_exit(f, sizeof(f), kind, value, r->timed_out ? AGENT_EXIT_F_TIMED_OUT : 0) < 0)
        return -EINVAL;
    return aconn_send(c, AGENT_EXIT, f + AGENT_HDR_SIZE, AGENT_EXIT_SIZE);
}

/* The connection failed (reset, closed), as opposed to a request that
 * broke the protocol, which ends a kept command as any other. */
static int conn_lost(int rc)
{
    return rc != -EPROTO && rc != -EBADMSG && rc != -EMSGSIZE && rc != -EPROTONOSUPPORT &&
           rc != -EINVAL && rc != -ENOMEM;
}

/* A kept command whose connection ended: waits (nothing read from the
 * command meanwhile, so its output waits in the pipes) until an ATTACH
 * hands the next one over, then ATTACHED and the output the host missed.
 * 0, or -errno (the command then goes). */
static int reattach(struct aconn *c, struct run *r)
{
    for (;;) {
        close(c->rd.fd);
        agent_reader_free(&c->rd);
        uint64_t have;
        int fd = keep_accept(r->keep_fd, &have);
        if (fd < 0)
            return fd;
        if (agent_reader_init(&c->rd, fd, AGENT_DIR_REQUEST, c->rbuf, sizeof(c->rbuf)) < 0) {
            close(fd);
            return -ENOMEM;
        }
        /* A STDIN frame cut off with the old connection is gone; what
         * the host sent of it is not in stdin_got. */
        r->in_pass = 0;
        uint64_t from = have < r->ring.first ? r->ring.first : have;
        if (have > r->ring.total) {
            aconn_send_error(c, EINVAL, AGENT_OP_PROTO);
            continue; /* a host that claims more than was sent: not this one */
        }
        uint8_t f[AGENT_HDR_SIZE + AGENT_ATTACHED_SIZE];
        ssize_t len = agent_encode_attached(f, sizeof(f), (uint32_t)r->pid, from, r->stdin_got);
        int rc = len < 0 ? (int)len : agent_send_all(c->rd.fd, f, (size_t)len);
        if (!rc)
            rc = keep_ring_replay(&r->ring, c, have, &from);
        if (!rc)
            return 0;
        if (!conn_lost(rc))
            return rc; /* lost again at once: wait for the next */
    }
}

int agent_do_exec(struct aconn *c, const struct agent_msg *m)
{
    static struct run r;
    struct agent_exec_req req;
    if (agent_exec_parse(m->payload, m->len, &req, argv_buf, env_buf))
        return aconn_send_error(c, EPROTO, AGENT_OP_PROTO) ? -EPIPE : -EPROTO;
    /* CREDENTIALS' entries after the request's own, read here as root. */
    int terr = agent_trust_env(env_buf, &req.envc);
    if (terr)
        return aconn_send_error(c, -terr, terr == -E2BIG ? AGENT_OP_EXEC : AGENT_OP_FILE);
    memset(&r, 0, sizeof(r));
    r.pidfd = r.pty = -1;
    r.pidns_init = req.pidns == AGENT_PIDNS_NEW;
    r.deadline = req.timeout_ms ? now_ms() + req.timeout_ms : -1;
    uint32_t op;
    int err = spawn(&req, &r, &op);
    if (err)
        return aconn_send_error(c, err, op);
    r.pidfd = pidfd_open(r.pid, 0);
    r.keep_fd = -1;
    int rc = 0;
    if ((req.flags & AGENT_EXEC_F_KEEP) &&
        ((rc = keep_ring_init(&r.ring)) || (rc = r.keep_fd = keep_listen(r.pid)) < 0)) {
        kill(-r.pid, SIGKILL);
        waitpid(r.pid, NULL, 0);
        run_release(&r);
        return aconn_send_error(c, -rc, AGENT_OP_SPAWN);
    }
    uint8_t started[AGENT_STARTED_SIZE] = {r.pid, r.pid >> 8, r.pid >> 16, r.pid >> 24};
    rc = aconn_send(c, AGENT_STARTED, started, sizeof(started));
    for (;;) {
        if (!rc)
            rc = run_loop(c, &r);
        if (!rc)
            rc = send_exit(c, &r);
        /* A kept command's connection ended: it waits for the next. */
        if (rc < 0 && r.keep_fd >= 0 && conn_lost(rc) && !(rc = reattach(c, &r)))
            continue;
        break;
    }
    if (!r.exited) {
        /* The host went away or broke the protocol: the command goes too. */
        kill(-r.pid, SIGKILL);
        waitpid(r.pid, &r.status, 0);
    }
    run_release(&r);
    /* Stdin the command never took, half a frame of it still unread: the
     * stream cannot go on from the middle of a frame, so the connection
     * ends after EXIT (airlock opens one per request anyway). */
    return rc ? rc : r.in_pass ? -ECONNABORTED : 0;
}

int agent_do_attach(struct aconn *c, const struct agent_msg *m)
{
    int rc = keep_hand_over(m->u.attach.pid, m->u.attach.have, c->rd.fd);
    if (rc)
        return aconn_send_error(c, -rc, AGENT_OP_EXEC);
    /* The connection is the command's now: this process says no more. */
    return -EALREADY;
}
