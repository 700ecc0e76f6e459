/* libFuzzer target: hostile bytes for the exec protocol (vmm/agent_client/agent_client).
 * The first byte picks a mode:
 *   0-1  the decoder (replies / requests) fed in chunks whose sizes come
 *        from the second byte; every message it yields must respect its
 *        type's limit and re-encode to exactly the bytes that came in
 *        (one canonical form, so nothing the decoder accepts is ambiguous)
 *   2    agent_exec over a socketpair whose far end holds the input as the
 *        "agent's" replies: it must end with a result or an error, and a
 *        result must be consistent
 *   3    agent_file_get the same way, against a size cap
 *   4    agent_exec as in 2 with stdout and stderr as pipes, which it
 *        splices the output into (a thread drains them), and a small
 *        output cap, so copied, cut and dropped payloads all occur
 *   5    agent_reseed the same way, with a short bound: it must end
 *        (answer, error or timeout), and an answer is RESEEDED (err 0) or
 *        an ERROR of the reseed's own steps with an errno airlock can
 *        print
 *   6    agent_list the same way: every entry it hands out has a clean
 *        one-component name, a known kind, permission bits only, and a
 *        target exactly when it is a symlink
 *   7    agent_stat the same way: an answer is the path's own entry ("")
 *   8    agent_credentials the same way, with a short bound: it must end,
 *        0 for DONE only, and a failure always comes with its line
 *   9    the input as a CREDENTIALS payload, straight into agent_cred_parse:
 *        one it accepts must hold only entries and a PEM the rules allow,
 *        and re-encode to exactly the input (mode 1 gets there too, but
 *        only through a valid header)
 *   10   agent_mount as in 8: it must end, 0 for DONE only, and a failure
 *        always comes with its line
 *   11   the input as a MOUNT payload, straight into agent_mount_parse: one
 *        it accepts names a disk past the root, known flags and a clean
 *        absolute folder outside /proc, /sys, /dev, and re-encodes to
 *        exactly the input
 *   12   the input as an EXEC payload, straight into agent_exec_parse: one
 *        it accepts keeps the process section's rules (counts within
 *        their limits, no gid -1, resources 0..15 once each, soft <= hard,
 *        a size only with a terminal) and the container section's
 *        (protocol 15: a clean name, a serial or none, at most 64 binds of
 *        clean absolute paths, none of it without NEW or JOIN) and
 *        re-encodes to exactly the input (modes 1's EXEC, WINSIZE and
 *        CONTAINER_END frames get the same checks)
 *   13   the input as a WATCH payload, straight into agent_watch_parse:
 *        one it accepts has known flags and an absolute path, and
 *        re-encodes to exactly the input
 *   14   the input as an EVENT payload, straight into agent_event_parse:
 *        one it accepts has a known kind, only the folder flag (never on
 *        an overflow), absolute paths (empty only where allowed, a
 *        destination only on a rename), and re-encodes to exactly the input
 *   15   agent_watch_begin then agent_watch_next to the end, as in 8: it
 *        must end, and every event it hands out passed 14's checks and
 *        lies beneath the path watched, whole names only
 *        (modes 0 and 1 give WATCH and EVENT frames 13's and 14's checks)
 * Seeds: tests/fuzz/agent_seed.c writes one or more per mode. */
#include <assert.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/agent_conn.h"

static uint8_t frame[AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD];
static const char *av[AGENT_MAX_ARGS + 1], *ev[AGENT_MAX_ENVS + 1];
static const char *cv[AGENT_CRED_MAX_ENVS + 1];

/* A CREDENTIALS payload the decoder took: each entry and the PEM as the
 * rules say, and the encoder gives back exactly those bytes. */
static void check_cred(const uint8_t *p, size_t len)
{
    struct agent_cred c;
    assert(agent_cred_parse(p, len, &c, cv) == 0);
    assert(c.envc <= AGENT_CRED_MAX_ENVS && c.env[c.envc] == NULL);
    for (uint32_t i = 0; i < c.envc; i++) {
        assert(agent_cred_entry_ok(c.env[i], strlen(c.env[i])));
        for (uint32_t j = 0; j < i; j++)
            assert(!agent_cred_same_name(c.env[i], c.env[j]));
    }
    assert(agent_cred_pem_ok(c.pem, c.pem_len) && !memchr(c.pem, 0, c.pem_len));
    ssize_t n = agent_encode_credentials(frame, sizeof(frame), &c);
    assert(n == (ssize_t)(AGENT_HDR_SIZE + len));
    assert(memcmp(frame + AGENT_HDR_SIZE, p, len) == 0);
}

/* A MOUNT payload the decoder took: within the rules, and the encoder
 * gives back exactly those bytes. */
static void check_mount(const uint8_t *p, size_t len)
{
    struct agent_msg m;
    assert(agent_mount_parse(p, len, &m) == 0);
    assert(m.u.mount.device >= 1 && m.u.mount.device <= AGENT_MOUNT_MAX_DEVICE);
    assert(!(m.u.mount.flags & ~AGENT_MOUNT_F_ALL));
    const char *path = m.u.mount.path;
    size_t pl = strlen(path);
    assert(agent_mount_path_ok(path, pl) && path[0] == '/' && !strstr(path, "/../") &&
           !strstr(path, "//") && path[pl - 1] != '/' && strncmp(path, "/proc/", 6) &&
           strcmp(path, "/proc") && strncmp(path, "/dev/", 5) && strcmp(path, "/dev"));
    ssize_t n = agent_encode_mount(frame, sizeof(frame), m.u.mount.device, m.u.mount.flags, path);
    assert(n == (ssize_t)(AGENT_HDR_SIZE + len));
    assert(memcmp(frame + AGENT_HDR_SIZE, p, len) == 0);
}

/* A WATCH payload the decoder took: within the rules, and the encoder
 * gives back exactly those bytes. */
static void check_watch(const uint8_t *p, size_t len)
{
    struct agent_msg m;
    assert(agent_watch_parse(p, len, &m) == 0);
    assert(!(m.u.watch.flags & ~AGENT_WATCH_F_ALL) && m.u.watch.path[0] == '/');
    ssize_t n = agent_encode_watch(frame, sizeof(frame), m.u.watch.path, m.u.watch.flags);
    assert(n == (ssize_t)(AGENT_HDR_SIZE + len));
    assert(memcmp(frame + AGENT_HDR_SIZE, p, len) == 0);
}

/* An event as the rules allow it (proto.h). */
static void check_event_fields(const struct agent_event *e)
{
    assert(e->kind <= AGENT_EVENT_OVERFLOW && !(e->flags & ~AGENT_EVENT_F_DIR));
    assert(strlen(e->path) < AGENT_MAX_PATH && strlen(e->to) < AGENT_MAX_PATH);
    assert(e->path[0] == '/' || (!e->path[0] && e->kind == AGENT_EVENT_OVERFLOW));
    assert(!e->to[0] || (e->to[0] == '/' && e->kind == AGENT_EVENT_RENAME));
    assert(e->kind != AGENT_EVENT_OVERFLOW || !e->flags);
}

/* An EVENT payload the decoder took: within the rules, and the encoder
 * gives back exactly those bytes. */
static void check_event(const uint8_t *p, size_t len)
{
    struct agent_msg m;
    assert(agent_event_parse(p, len, &m) == 0);
    check_event_fields(&m.u.event);
    ssize_t n = agent_encode_event(frame, sizeof(frame), &m.u.event);
    assert(n == (ssize_t)(AGENT_HDR_SIZE + len));
    assert(memcmp(frame + AGENT_HDR_SIZE, p, len) == 0);
}

/* An EXEC payload the decoder took: its process section within the rules
 * (proto.h), and the encoder gives back exactly those bytes. */
static void check_exec(const uint8_t *p, size_t len)
{
    struct agent_exec_req r;
    assert(agent_exec_parse(p, len, &r, av, ev) == 0);
    assert(r.argv[r.argc] == NULL && r.envp[r.envc] == NULL);
    assert(r.ngroups <= AGENT_MAX_GROUPS && r.nrlimits <= AGENT_MAX_RLIMITS);
    assert((r.flags & AGENT_EXEC_F_TTY) || (!r.tty_rows && !r.tty_cols));
    for (uint32_t i = 0; i < r.ngroups; i++)
        assert(r.groups[i] != UINT32_MAX);
    uint32_t seen = 0;
    for (uint32_t i = 0; i < r.nrlimits; i++) {
        assert(r.rlimits[i].resource < AGENT_RLIMIT_NUM);
        assert(!(seen & (1u << r.rlimits[i].resource)));
        assert(r.rlimits[i].soft <= r.rlimits[i].hard);
        seen |= 1u << r.rlimits[i].resource;
    }
    /* the container section (protocol 15) */
    if (!(r.flags & AGENT_EXEC_F_CONTAINER)) {
        assert(!r.ctr_name && !r.ctr_serial && !r.nbinds);
    } else {
        assert(agent_ctr_name_ok(r.ctr_name, strlen(r.ctr_name)));
        size_t sl = strlen(r.ctr_serial);
        assert(!sl || agent_ctr_serial_ok(r.ctr_serial, sl));
        assert(r.pidns == AGENT_PIDNS_NEW || (r.pidns == AGENT_PIDNS_JOIN && !sl && !r.nbinds));
        assert(r.nbinds <= AGENT_CTR_MAX_BINDS);
        for (uint32_t i = 0; i < r.nbinds; i++) {
            const struct agent_bind *b = &r.binds[i];
            assert(!(b->flags & ~AGENT_BIND_F_ALL) && b->source[0] == '/' && b->target[0] == '/');
            assert(!strstr(b->source, "/../") && !strstr(b->target, "/../") &&
                   strncmp(b->source, AGENT_CTR_DIR "/", sizeof(AGENT_CTR_DIR)) &&
                   strncmp(b->target, "/proc/", 6) && strcmp(b->target, "/proc"));
        }
    }
    /* the linux section (protocol 16): only with a new container */
    if (!(r.flags & AGENT_EXEC_F_LINUX)) {
        assert(!r.lnx_flags && !r.nmasked && !r.nreadonly && !r.nsysctl && !r.ndevices && !r.ntmpfs);
    } else {
        assert(r.pidns == AGENT_PIDNS_NEW && !(r.lnx_flags & ~AGENT_LNX_F_ALL));
        assert(r.oom_score_adj >= -1000 && r.oom_score_adj <= 1000);
        assert(r.propagation <= AGENT_LNX_PROP_LAST);
        for (uint32_t i = 0; i < r.nsysctl; i++)
            assert(!strchr(r.sysctl[i].key, '/') && !strchr(r.sysctl[i].value, '\n'));
        for (uint32_t i = 0; i < r.ntmpfs; i++)
            assert(!(r.tmpfs[i].flags & ~AGENT_LNX_TMPFS_FLAGS) && !strchr(r.tmpfs[i].options, ' ') &&
                   r.tmpfs[i].target[0] == '/' && strncmp(r.tmpfs[i].target, "/proc/", 6));
        for (uint32_t i = 0; i < r.ndevices; i++)
            assert(r.devices[i].path[0] == '/' && strncmp(r.devices[i].path, "/proc/", 6) &&
                   strncmp(r.devices[i].path, "/sys/", 5) && !strstr(r.devices[i].path, "/../"));
    }
    ssize_t n = agent_encode_exec(frame, sizeof(frame), &r);
    assert(n == (ssize_t)(AGENT_HDR_SIZE + len));
    assert(memcmp(frame + AGENT_HDR_SIZE, p, len) == 0);
}

/* Re-encodes a decoded message; it must reproduce `raw` byte for byte. */
static void check_canonical(const struct agent_msg *m, const uint8_t *raw, size_t raw_len)
{
    ssize_t n;
    if (m->type == AGENT_EXEC) {
        check_exec(m->payload, m->len);
        struct agent_exec_req r;
        assert(agent_exec_parse(m->payload, m->len, &r, av, ev) == 0);
        n = agent_encode_exec(frame, sizeof(frame), &r);
    } else if (m->type == AGENT_WINSIZE) {
        n = agent_encode_winsize(frame, sizeof(frame), m->u.winsize.rows, m->u.winsize.cols);
    } else if (m->type == AGENT_CREDENTIALS) {
        check_cred(m->payload, m->len);
        struct agent_cred c;
        assert(agent_cred_parse(m->payload, m->len, &c, cv) == 0);
        n = agent_encode_credentials(frame, sizeof(frame), &c);
    } else if (m->type == AGENT_WATCH || m->type == AGENT_EVENT) {
        (m->type == AGENT_WATCH ? check_watch : check_event)(m->payload, m->len);
        n = agent_encode(frame, sizeof(frame), m->type, m->payload, m->len);
    } else if (m->type == AGENT_CONTAINER_END) {
        assert(agent_ctr_name_ok(m->u.ctr_end.name, strlen(m->u.ctr_end.name)));
        n = agent_encode_container_end(frame, sizeof(frame), m->u.ctr_end.name);
    } else if (m->type == AGENT_MOUNT) {
        check_mount(m->payload, m->len);
        n = agent_encode_mount(frame, sizeof(frame), m->u.mount.device, m->u.mount.flags,
                               m->u.mount.path);
    } else {
        n = agent_encode(frame, sizeof(frame), m->type, m->payload, m->len);
    }
    assert(n == (ssize_t)raw_len);
    assert(memcmp(frame, raw, raw_len) == 0);
}

static void fuzz_decoder(enum agent_dir dir, const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    size_t step = (size_t)data[0] % 64 + 1;
    data++;
    size--;
    struct agent_decoder d;
    if (agent_decoder_init(&d, dir))
        return;
    /* Where the current message started, for the canonical check. */
    size_t start = 0, off = 0;
    while (off < size) {
        size_t len = size - off < step ? size - off : step;
        size_t used;
        struct agent_msg m;
        int rc = agent_decode(&d, data + off, len, &used, &m);
        assert(used <= len);
        off += used;
        if (rc < 0) {
            size_t again;
            assert(agent_decode(&d, data, size, &again, &m) == rc); /* sticky */
            break;
        }
        if (rc == 1) {
            assert(m.len <= agent_type_max(dir, m.type));
            assert(m.len <= agent_dir_max(dir));
            check_canonical(&m, data + start, off - start);
            start = off;
        } else {
            assert(used == len);
        }
    }
    agent_decoder_free(&d);
}

/* Reads both pipes to EOF, so a splice into them never waits for long. */
static void *drain(void *arg)
{
    int *fds = arg;
    static char sink[65536];
    while (fds[0] >= 0 || fds[1] >= 0) {
        struct pollfd p[2] = {{.fd = fds[0], .events = POLLIN}, {.fd = fds[1], .events = POLLIN}};
        if (poll(p, 2, -1) < 0)
            continue;
        for (int i = 0; i < 2; i++) {
            if (!p[i].revents)
                continue;
            if (read(fds[i], sink, sizeof(sink)) <= 0) {
                close(fds[i]);
                fds[i] = -1;
            }
        }
    }
    return NULL;
}

static int check_entry(void *opaque, const struct agent_entry *e)
{
    ++*(int *)opaque;
    assert(agent_name_ok(e->name, strlen(e->name)));
    assert(e->kind <= AGENT_ENTRY_OTHER && !(e->mode & ~07777u));
    assert((e->kind == AGENT_ENTRY_SYMLINK) == (e->target[0] != 0));
    return 0;
}

static void fuzz_client(int mode, const uint8_t *data, size_t size)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        return;
    /* The far end's bytes must all be queued before the helper reads:
     * a buffer bigger than any input (-max_len=65536) lets one write do. */
    int big = 1 << 20;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    if (size && write(sv[1], data, size) != (ssize_t)size)
        goto out;
    shutdown(sv[1], SHUT_WR);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (mode == 2 || mode == 4) {
        static const char *const argv[] = {"true"};
        struct agent_exec_req req;
        agent_exec_req_init(&req);
        req.argv = argv;
        req.argc = 1;
        struct agent_exec_result res;
        int out[2], err[2], rd[2];
        pthread_t t;
        if (mode == 4) {
            if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
                abort();
            rd[0] = out[0];
            rd[1] = err[0];
            if (pthread_create(&t, NULL, drain, rd))
                abort();
        }
        int rc = mode == 2 ? agent_exec(sv[0], &req, null, null, -1, UINT64_MAX, &res)
                           : agent_exec(sv[0], &req, out[1], err[1], -1, 1000, &res);
        if (mode == 4) {
            close(out[1]);
            close(err[1]);
            pthread_join(t, NULL);
            assert(rc != 0 || res.out_bytes + res.err_bytes - res.dropped <= 1000);
        }
        if (rc == 0) {
            /* A known outcome: either it never started (an errno), or it
             * did and its status is one airlock can report. */
            assert(res.error ? !res.started : res.started);
            int st = agent_result_status(&res);
            assert(st >= 0 && st <= 255 + 128);
        }
    } else if (mode == 5) {
        static const uint8_t seed[AGENT_RESEED_SEED];
        int err = -1;
        uint32_t op = 0;
        char line[256];
        /* The far end is at EOF, so the bound is never the way out here;
         * it only has to be short if that ever changes. */
        int rc = agent_reseed(sv[0], 1, seed, 50, &err, &op);
        if (rc == 0)
            assert(err == 0 ? !agent_reseed_failure(0, err, op, 50, line, sizeof(line))
                            : err >= 1 && err <= 4095 &&
                                  (op == AGENT_OP_RESEED || op == AGENT_OP_CLOCK));
        else
            assert(rc < 0 && agent_reseed_failure(rc, err, op, 50, line, sizeof(line)));
    } else if (mode == 6) {
        int n = 0;
        int rc = agent_list(sv[0], "/d", check_entry, &n);
        assert(rc <= 0);
    } else if (mode == 7) {
        struct agent_entry e;
        static char target[AGENT_MAX_PATH];
        if (agent_stat(sv[0], "/p", &e, target) == 0)
            assert(!e.name[0] && e.kind <= AGENT_ENTRY_OTHER && !(e.mode & ~07777u));
    } else if (mode == 8) {
        static const char *const env[] = {"TOKEN=ph"};
        static const char pem[] = AGENT_CRED_PEM_BEGIN "\n";
        char why[256] = "";
        int rc = agent_credentials_wait(sv[0], env, 1, pem, sizeof(pem) - 1, 50, why, sizeof(why));
        assert(rc <= 0 && (rc == 0) == (why[0] == 0));
    } else if (mode == 15) {
        struct agent_conn *c;
        if (agent_watch_begin(sv[0], "/w", AGENT_WATCH_F_RECURSIVE, 50, &c) == 0) {
            for (;;) {
                struct agent_event ev;
                int rc = agent_watch_next(c, "/w", &ev);
                if (rc == 0 && agent_reader_fill(&c->rd) == 1)
                    continue;
                if (rc != 1)
                    break;
                check_event_fields(&ev);
                assert(!ev.path[0] || agent_watch_beneath("/w", ev.path));
                assert(!ev.path[0] || !strcmp(ev.path, "/w") || !strncmp(ev.path, "/w/", 3));
                assert(!strstr(ev.path, "/../") && !strstr(ev.path, "//") &&
                       !strstr(ev.to, "/./") && !strstr(ev.to, "//"));
            }
            ac_free(c);
        }
    } else if (mode == 10) {
        char why[1200] = "";
        int rc = agent_mount(sv[0], 1, AGENT_MOUNT_F_RO, "/src", 50, why, sizeof(why));
        assert(rc <= 0 && (rc == 0) == (why[0] == 0));
    } else {
        agent_file_get(sv[0], "/f", null, 100000);
    }
    if (null >= 0)
        close(null);
out:
    close(sv[0]);
    close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int mode = data[0] % 16;
    if (mode < 2) {
        fuzz_decoder(mode == 0 ? AGENT_DIR_REPLY : AGENT_DIR_REQUEST, data + 1, size - 1);
    } else if (mode == 9) {
        if (agent_cred_parse(data + 1, size - 1, NULL, NULL) == 0)
            check_cred(data + 1, size - 1);
    } else if (mode == 11) {
        if (agent_mount_parse(data + 1, size - 1, NULL) == 0)
            check_mount(data + 1, size - 1);
    } else if (mode == 12) {
        if (agent_exec_parse(data + 1, size - 1, NULL, NULL, NULL) == 0)
            check_exec(data + 1, size - 1);
    } else if (mode == 13) {
        if (agent_watch_parse(data + 1, size - 1, NULL) == 0)
            check_watch(data + 1, size - 1);
    } else if (mode == 14) {
        if (agent_event_parse(data + 1, size - 1, NULL) == 0)
            check_event(data + 1, size - 1);
    } else {
        fuzz_client(mode, data + 1, size - 1);
    }
    return 0;
}
