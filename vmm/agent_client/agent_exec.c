/* agent_exec: one command through the agent, its output to our stdout and
 * stderr, our stdin to it.  The agent is hostile: its replies go through
 * the validating decoder, must come in the order proto.h fixes, and are
 * never buffered beyond one chunk; output payloads pass from the socket to
 * where they go without the decoder's copy (spliced into pipes). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/util/exit_codes.h"

size_t agent_output_take(struct agent_output_cap *cap, size_t len)
{
    uint64_t left = cap->max - cap->used;
    size_t take = len < left ? len : (size_t)left;
    cap->used += take;
    cap->dropped += len - take;
    return take;
}

/* Counts a STDOUT/STDERR chunk of len bytes: how many of them may be
 * copied under the output cap (the rest is dropped). */
static size_t output_account(uint16_t type, uint32_t len, struct agent_output_cap *cap,
                             struct agent_exec_result *res)
{
    *(type == AGENT_STDOUT ? &res->out_bytes : &res->err_bytes) += len;
    size_t n = agent_output_take(cap, len);
    res->dropped = cap->dropped;
    return n;
}

/* A write to our stdout/stderr said EPIPE: nobody reads the output any
 * more, which ends the exec for us as SIGPIPE ends a writer (1, the
 * outcome).  Other results pass through. */
static int output_done(struct agent_exec_result *res, int rc)
{
    if (rc != -EPIPE)
        return rc;
    res->output_closed = 1;
    return 1;
}

/* One reply during an exec; 1 when the outcome is known. */
static int exec_on_msg(const struct agent_msg *m, struct agent_exec_result *res)
{
    /* STDOUT/STDERR never come here: exec_loop reads no further than a
     * frame's header, and their payloads go by pass_some. */
    switch (m->type) {
    case AGENT_STARTED:
        if (res->started)
            return -EPROTO;
        res->started = 1;
        res->pid = m->u.started.pid;
        return 0;
    case AGENT_ATTACHED:
        /* Only first on a conversation that ATTACH began, for its pid,
         * and never going back: what we received is ours already. */
        if (!res->attach_wait || m->u.attached.pid != res->pid ||
            m->u.attached.from < res->received)
            return -EPROTO;
        res->lost += m->u.attached.from - res->received;
        res->received = m->u.attached.from;
        res->stdin_got = m->u.attached.stdin_got;
        res->attach_wait = 0;
        res->attaches++;
        return 0;
    case AGENT_EXIT:
        if (!res->started || res->attach_wait)
            return -EPROTO;
        res->signaled = m->u.exit.kind == AGENT_EXIT_SIGNAL;
        res->value = (int)m->u.exit.value;
        res->timed_out = !!(m->u.exit.flags & AGENT_EXIT_F_TIMED_OUT);
        return 1;
    case AGENT_ERROR:
        /* Only instead of STARTED or ATTACHED: a started command ends
         * with EXIT. */
        if (res->attach_wait) {
            res->attach_error = (int)m->u.error.code;
            return 1;
        }
        if (res->started)
            return -EPROTO;
        res->error = (int)m->u.error.code;
        res->error_op = m->u.error.op;
        return 1;
    default:
        return -EPROTO;
    }
}

/* Our stdin on its way to the agent as STDIN frames.  A frame is `pend`
 * (a whole frame, or only its header) and then, when the bytes came by
 * splice, `priv_left` bytes waiting in a private pipe: spliced from our
 * stdin into it and from it into the socket, the bytes cross this
 * process without a copy (the kernel moves page references).  The
 * private pipe also sizes the frame: our stdin may be shared with other
 * readers, so what FIONREAD said could be gone before we read it. */
struct feed {
    int fd;              /* our stdin; -1: none or at EOF */
    uint8_t *pend;       /* AGENT_HDR_SIZE + AGENT_MAX_CHUNK */
    size_t pend_len, pend_off;
    int priv[2];         /* -1 until the first splice */
    size_t priv_left;
    int no_splice;       /* splice from fd failed (a terminal...): read it */
};

static bool feed_busy(const struct feed *f)
{
    return f->pend_off < f->pend_len || f->priv_left;
}

/* Queues the next STDIN frame, or STDIN_EOF (and fd = -1) at the end; our
 * stdin said readable.  0 or -errno. */
static int feed_pull(struct feed *f)
{
    ssize_t n = -1;
    f->pend_off = f->pend_len = 0;
    if (!f->no_splice && f->priv[0] < 0 && pipe2(f->priv, O_CLOEXEC) < 0)
        f->no_splice = 1;
    if (!f->no_splice) {
        do
            n = splice(f->fd, NULL, f->priv[1], NULL, AGENT_MAX_CHUNK,
                       SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EAGAIN)
            return 0;
        if (n < 0 && errno == EINVAL)
            f->no_splice = 1;
    }
    if (f->no_splice) {
        do
            n = read(f->fd, f->pend + AGENT_HDR_SIZE, AGENT_MAX_CHUNK);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EAGAIN)
            return 0;
    }
    /* A read error on our own stdin ends it, as EOF would. */
    ssize_t fl;
    if (n <= 0) {
        f->fd = -1;
        fl = agent_encode(f->pend, AGENT_HDR_SIZE, AGENT_STDIN_EOF, NULL, 0);
    } else {
        fl = agent_encode_in_place(f->pend, AGENT_HDR_SIZE + AGENT_MAX_CHUNK, AGENT_STDIN,
                                   (size_t)n);
        if (!f->no_splice) {
            f->priv_left = (size_t)n;
            fl = AGENT_HDR_SIZE; /* the payload follows from the private pipe */
        }
    }
    if (fl < 0)
        return (int)fl;
    f->pend_len = (size_t)fl;
    return 0;
}

/* Sends what the socket takes of the queued frame without blocking: the
 * agent may be blocked sending us output.  0, or -1 when the agent no
 * longer reads (its outcome may still be readable). */
static int feed_push(struct feed *f, int sock)
{
    ssize_t n;
    if (f->pend_off < f->pend_len) {
        n = send(sock, f->pend + f->pend_off, f->pend_len - f->pend_off,
                 MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0)
            f->pend_off += (size_t)n;
    } else {
        /* The socket is non-blocking (agent_exec), so this never waits
         * for room; the private pipe holds priv_left bytes. */
        n = splice(f->priv[0], NULL, sock, NULL, f->priv_left, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n > 0)
            f->priv_left -= (size_t)n;
    }
    return n < 0 && errno != EAGAIN && errno != EINTR ? -1 : 0;
}

static void feed_close(struct feed *f)
{
    for (int i = 0; i < 2; i++)
        if (f->priv[i] >= 0)
            close(f->priv[i]);
}

/* Signals and terminal sizes for the command, on their way to the agent
 * as SIGNAL and WINSIZE frames: each record read from `fd` is a signal
 * number byte (maybe with AGENT_SIGQ_PROCESS), or AGENT_SIGQ_WINSIZE and
 * a size (agent_client.h).  A frame
 * is sent only between two STDIN frames (frames must not interleave on
 * the socket). */
struct sigq {
    int fd;              /* -1: none, or its writer closed it */
    uint8_t frame[AGENT_HDR_SIZE + (AGENT_SIGNAL_SIZE > AGENT_WINSIZE_SIZE ? AGENT_SIGNAL_SIZE
                                                                           : AGENT_WINSIZE_SIZE)];
    size_t len, off;
};

static bool sigq_busy(const struct sigq *q)
{
    return q->off < q->len;
}

/* Takes the next record from q->fd (it said readable).  A signal number
 * out of range, or a size record cut short, is dropped: the writer is
 * ours, but its bytes are not frames yet.  0 or -errno. */
static int sigq_pull(struct sigq *q)
{
    uint8_t rec[AGENT_SIGQ_WINSIZE_LEN];
    ssize_t n = read(q->fd, rec, 1);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0) {
        q->fd = -1; /* no more signals: not an error */
        return 0;
    }
    ssize_t fl;
    if (rec[0] == AGENT_SIGQ_WINSIZE) {
        /* Written whole (one write below PIPE_BUF), so the rest is there. */
        if (read(q->fd, rec + 1, AGENT_SIGQ_WINSIZE_LEN - 1) != AGENT_SIGQ_WINSIZE_LEN - 1)
            return 0;
        fl = agent_encode_winsize(q->frame, sizeof(q->frame), (uint16_t)(rec[1] | rec[2] << 8),
                                  (uint16_t)(rec[3] | rec[4] << 8));
    } else {
        fl = agent_encode_signal(q->frame, sizeof(q->frame),
                                 (rec[0] & ~AGENT_SIGQ_PROCESS) |
                                     (rec[0] & AGENT_SIGQ_PROCESS ? AGENT_SIGNAL_F_PROCESS : 0));
    }
    q->off = 0;
    q->len = fl > 0 ? (size_t)fl : 0;
    return 0;
}

static int sigq_push(struct sigq *q, int sock)
{
    ssize_t n = send(sock, q->frame + q->off, q->len - q->off, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0)
        q->off += (size_t)n;
    return n < 0 && errno != EAGAIN && errno != EINTR ? -1 : 0;
}

/* A STDOUT/STDERR payload still in the socket, moved without the copy
 * through the decoder (agent_decode_data_frame): `copy` bytes to fd, then
 * `drop` bytes past the output cap read and thrown away.  fd may be
 * non-blocking: what it did not take waits in rbuf (`held`), or in the
 * socket (splice), and `blocked` says to wait for fd's POLLOUT. */
struct pass {
    int fd;
    uint32_t copy, drop;
    size_t held, held_off; /* bytes of c->rbuf received, not yet written */
    int blocked;           /* fd said EAGAIN */
    int stream;       /* 0 stdout, 1 stderr */
    int no_splice[2]; /* that stream's fd is no pipe (splice said EINVAL): copy through rbuf */
    uint64_t *received; /* output payload bytes taken off the socket */
};

static bool pass_busy(const struct pass *ps)
{
    return ps->copy || ps->drop || ps->held;
}

/* Starts passing the data frame whose header the decoder just took. */
static int pass_start(struct pass *ps, uint16_t type, uint32_t len, int out_fd, int err_fd,
                      struct agent_output_cap *cap, struct agent_exec_result *res)
{
    if (!res->started || res->attach_wait || (type != AGENT_STDOUT && type != AGENT_STDERR))
        return -EPROTO;
    ps->stream = type == AGENT_STDOUT ? 0 : 1;
    ps->fd = ps->stream ? err_fd : out_fd;
    ps->copy = (uint32_t)output_account(type, len, cap, res);
    ps->drop = len - ps->copy;
    if (ps->fd < 0) {
        ps->drop = len;
        ps->copy = 0;
    }
    return 0;
}

/* Writes what fd takes of the held bytes.  0 (maybe blocked) or -errno. */
static int pass_flush(struct agent_conn *c, struct pass *ps)
{
    while (ps->held_off < ps->held) {
        ssize_t w = write(ps->fd, c->rbuf + ps->held_off, ps->held - ps->held_off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            ps->blocked = 1;
            return 0;
        }
        if (w <= 0)
            return w ? -errno : -EIO;
        ps->held_off += (size_t)w;
    }
    ps->held = ps->held_off = 0;
    return 0;
}

/* Moves what the socket holds of a passed payload (it said readable, or
 * fd said writable after `blocked`).  Into a pipe, splice: the kernel
 * moves the socket's pages into it, so the output crosses this process
 * without a copy; anything else (a file, a terminal) goes through rbuf.
 * 0 or -errno (-ECONNRESET: the agent went away mid-frame). */
static int pass_some(struct agent_conn *c, struct pass *ps)
{
    ssize_t n;
    ps->blocked = 0;
    if (ps->held)
        return pass_flush(c, ps);
    bool copying = ps->copy > 0;
    uint32_t want = copying ? ps->copy : ps->drop;
    if (copying && !ps->no_splice[ps->stream]) {
        /* SPLICE_F_NONBLOCK: a full pipe says EAGAIN instead of waiting
         * (the socket is non-blocking already, and it said readable). */
        do
            n = splice(c->rd.fd, NULL, ps->fd, NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EINVAL) {
            ps->no_splice[ps->stream] = 1;
            return 0; /* again, through rbuf */
        }
        if (n < 0 && errno == EAGAIN) {
            /* The pipe is full, or the socket had nothing after all: which
             * one, fd's POLLOUT tells (a spurious wake-up costs one try). */
            struct pollfd p = {.fd = ps->fd, .events = POLLOUT};
            ps->blocked = poll(&p, 1, 0) == 0;
            return 0;
        }
        if (n <= 0)
            return n ? -errno : -ECONNRESET;
    } else {
        n = agent_recv_some(c->rd.fd, c->rbuf, want < sizeof(c->rbuf) ? want : sizeof(c->rbuf));
        if (n < 0)
            return (int)n;
        if (copying) {
            ps->held = (size_t)n;
            ps->held_off = 0;
        }
    }
    *ps->received += (uint64_t)n;
    *(copying ? &ps->copy : &ps->drop) -= (uint32_t)n;
    int rc = agent_decode_skip(&c->rd.dec, (uint32_t)n);
    return rc ? rc : ps->held ? pass_flush(c, ps) : 0;
}

/* deadline: CLOCK_MONOTONIC ms after which we stop waiting (-ETIMEDOUT);
 * stall_deadline: the same while our output takes nothing; -1: none. */
static int exec_loop(const struct agent_exec_req *req, struct agent_conn *c, int out_fd,
                     int err_fd, struct feed *in, struct sigq *sq, int64_t deadline,
                     int64_t stall_deadline, struct agent_output_cap *cap,
                     struct agent_exec_result *res)
{
    int peer_gone = 0;
    struct pass ps = {.fd = -1, .received = &res->received};
    for (;;) {
        struct agent_msg m;
        int rc = 0;
        while (!pass_busy(&ps) && (rc = agent_reader_next(&c->rd, &m)) == 1) {
            rc = exec_on_msg(&m, res);
            if (!rc && m.type == AGENT_STARTED && req->on_started)
                req->on_started(req->on_started_arg, res->pid);
            if (!rc && m.type == AGENT_ATTACHED && req->on_attached)
                req->on_attached(req->on_started_arg, res->lost);
            if (rc)
                return rc < 0 ? rc : 0;
        }
        if (rc < 0)
            return rc;
        uint16_t type;
        uint32_t len;
        if (!pass_busy(&ps) && c->rd.pos == c->rd.len &&
            (len = agent_decode_data_frame(&c->rd.dec, &type)) &&
            (rc = pass_start(&ps, type, len, out_fd, err_fd, cap, res)) < 0)
            return rc;
        /* Never block on a send: the agent may be blocked sending us
         * output, so we keep reading while our stdin waits for room.  Nor
         * on our output: while it takes nothing we wait for its POLLOUT
         * (and the socket only for room for stdin). */
        struct pollfd p[4] = {{.fd = c->rd.fd, .events = POLLIN}, {.fd = -1}, {.fd = -1},
                              {.fd = -1}};
        bool out_wait = ps.blocked;
        if (out_wait) {
            p[0].events = 0;
            p[2] = (struct pollfd){.fd = ps.fd, .events = POLLOUT};
        }
        if ((feed_busy(in) || sigq_busy(sq)) && !peer_gone)
            p[0].events |= POLLOUT;
        if (!feed_busy(in) && in->fd >= 0 && res->started && !res->attach_wait && !peer_gone)
            p[1] = (struct pollfd){.fd = in->fd, .events = POLLIN};
        if (!sigq_busy(sq) && sq->fd >= 0 && res->started && !res->attach_wait && !peer_gone)
            p[3] = (struct pollfd){.fd = sq->fd, .events = POLLIN};
        if (!p[0].events)
            p[0].fd = -1; /* a hang-up must not wake us while our output waits */
        int wait_ms = -1;
        int64_t until = out_wait && stall_deadline >= 0 ? stall_deadline : deadline;
        if (until >= 0) {
            int64_t left = until - agent_mono_ms();
            if (left <= 0) {
                res->output_stalled = out_wait;
                return -ETIMEDOUT;
            }
            wait_ms = left > INT_MAX ? INT_MAX : (int)left;
        }
        if (poll(p, 4, wait_ms) < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (out_wait ? p[2].revents != 0 : (p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            if (pass_busy(&ps)) {
                /* pass_some's -EPIPE is out_fd's or err_fd's (the socket
                 * says ECONNRESET). */
                if ((rc = output_done(res, pass_some(c, &ps))) == 1)
                    return 0;
            } else {
                rc = agent_reader_fill_frame(&c->rd);
            }
            if (rc < 0 && rc != -EAGAIN)
                return rc;
        }
        /* A signal goes first unless a STDIN frame is half sent. */
        bool feed_mid = feed_busy(in) && (in->pend_off > 0 || in->priv_left);
        if ((p[0].revents & POLLOUT) &&
            (sigq_busy(sq) && !feed_mid ? sigq_push(sq, c->rd.fd) : feed_push(in, c->rd.fd)))
            peer_gone = 1; /* the outcome may still be readable */
        if (p[1].revents && (rc = feed_pull(in)) < 0)
            return rc;
        if (p[3].revents && (rc = sigq_pull(sq)) < 0)
            return rc;
    }
}

int agent_exec(int fd, const struct agent_exec_req *req, int out_fd, int err_fd, int in_fd,
               uint64_t max_output, struct agent_exec_result *res)
{
    return agent_exec_signals(fd, req, out_fd, err_fd, in_fd, -1, max_output, res);
}

/* The conversation once the request (EXEC or ATTACH) went out, until the
 * outcome. */
static int exec_converse(int fd, const struct agent_exec_req *req, int out_fd, int err_fd,
                         int in_fd, int sig_fd, struct agent_output_cap *cap,
                         struct agent_exec_result *res)
{
    int64_t stall_deadline = req->timeout_ms ? agent_deadline_ms(req->timeout_ms) : -1;
    int64_t deadline = req->timeout_ms ? stall_deadline + req->host_grace_ms : -1;
    int rc;
    struct agent_conn *c = ac_new(fd, &rc);
    if (!c)
        return rc;
    /* Non-blocking while the command runs: a splice into the socket
     * (feed_push) must not wait for room, and only the socket's own flag
     * makes it so. */
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        rc = -errno;
    struct feed in = {.fd = in_fd, .pend = c->pend, .priv = {-1, -1}};
    struct sigq sq = {.fd = sig_fd};
    if (!rc)
        rc = exec_loop(req, c, out_fd, err_fd, &in, &sq, deadline, stall_deadline, cap, res);
    feed_close(&in);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl);
    if (rc == -ETIMEDOUT && deadline >= 0) {
        res->timed_out = res->host_timeout = 1;
        rc = 0;
    }
    res->agent_version = c->rd.version;
    ac_free(c);
    return rc;
}

int agent_exec_signals(int fd, const struct agent_exec_req *req, int out_fd, int err_fd,
                       int in_fd, int sig_fd, uint64_t max_output, struct agent_exec_result *res)
{
    struct agent_output_cap cap = {.max = max_output};
    memset(res, 0, sizeof(*res));
    struct agent_exec_req r = *req;
    r.flags = (r.flags & ~AGENT_EXEC_F_STDIN) | (in_fd >= 0 ? AGENT_EXEC_F_STDIN : 0);
    uint8_t *frame = malloc(AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD);
    if (!frame)
        return -ENOMEM;
    ssize_t len = agent_encode_exec(frame, AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD, &r);
    int rc = len < 0 ? (int)len : agent_send_all(fd, frame, (size_t)len);
    free(frame);
    return rc ? rc : exec_converse(fd, req, out_fd, err_fd, in_fd, sig_fd, &cap, res);
}

int agent_exec_attach(int fd, const struct agent_exec_req *req, int out_fd, int err_fd,
                      int in_fd, int sig_fd, uint64_t max_output, struct agent_exec_result *res)
{
    if (!res->started || !res->pid)
        return -EINVAL;
    /* The cap goes on from what the earlier conversations copied. */
    uint64_t seen = res->out_bytes + res->err_bytes;
    struct agent_output_cap cap = {.max = max_output, .used = seen - res->dropped,
                                   .dropped = res->dropped};
    uint8_t f[AGENT_HDR_SIZE + AGENT_ATTACH_SIZE];
    ssize_t len = agent_encode_attach(f, sizeof(f), res->pid, res->received);
    int rc = len < 0 ? (int)len : agent_send_all(fd, f, (size_t)len);
    if (rc)
        return rc;
    res->attach_wait = 1;
    res->attach_error = 0;
    rc = exec_converse(fd, req, out_fd, err_fd, in_fd, sig_fd, &cap, res);
    if (!rc && res->attach_wait && !res->attach_error)
        rc = -EPROTO; /* the outcome came before ATTACHED */
    return rc;
}

int agent_result_status(const struct agent_exec_result *res)
{
    if (res->error)
        return res->error_op == AGENT_OP_EXEC && res->error == ENOENT ? EXIT_NOT_FOUND
                                                                      : EXIT_CANNOT_EXECUTE;
    if (res->host_timeout) /* the guest never said; the clock did */
        return EXIT_TIMEOUT;
    if (res->output_closed)
        return 128 + SIGPIPE;
    if (!res->started)
        return EXIT_AIRLOCK_ERROR;
    if (res->timed_out)
        return EXIT_TIMEOUT;
    return res->signaled ? 128 + res->value : res->value;
}
