/* A tiny `airlock run` over a Unix socket, for tests/agent/run-tests: drives
 * the agent through vmm/agent_client/agent_client.c exactly as the monitor will over
 * vsock, and exits with the status airlock would.
 *
 *   agent-client SOCK [-e K=V]... [-w DIR] [-u UID] [-g GID] [-t MS] [-i]
 *                     [--nproc N] [--fsize N] [--nofile N]
 *                     [--tty ROWSxCOLS [--winsize-after MS ROWSxCOLS]]
 *                     [--signal-after MS N|pN]
 *                     [-G GID]... [--nnp] [--rlimit RES:SOFT:HARD]...
 *                     [--reseed [--reseed-wait MS]] [--script FILE] -- CMD [ARG]...
 *                                --script: FILE's bytes become the last
 *                                argument (CMD is SHELL -c) with
 *                                AGENT_EXEC_F_SCRIPT, as the API's cmd
 *                                --tty: a guest terminal of that size;
 *                                --winsize-after: WINSIZE MS after the
 *                                start (agent_exec_signals' records)
 *                                --signal-after MS N|pN: SIGNAL N MS after
 *                                the start, to the command's group, or
 *                                (pN) to its process alone
 *                                --reseed: RESEED first (a zero seed, this
 *                                host's time) and no command unless the
 *                                agent answered RESEEDED, as airlock run
 *                     [--pidns new|join] [--ctr NAME [--serial ID]
 *                      [--bind SRC:DST[:ro]]...]
 *                                --pidns: EXEC's pidns; --ctr: a pod's
 *                                container NAME (AGENT_EXEC_F_CONTAINER),
 *                                its root the disk of serial ID, binds
 *   agent-client SOCK --end NAME CONTAINER_END, as the runtime sends it
 *   agent-client SOCK --put LOCAL GUEST MODE(octal)
 *   agent-client SOCK --get GUEST LOCAL
 *   agent-client SOCK --kill-after MS -- CMD [ARG]...
 *                                runs CMD, sends KILL MS after STARTED,
 *                                prints the EXIT as "signal N" / "code N"
 *   agent-client SOCK --keep-cut BYTES -- CMD [ARG]...
 *                                runs CMD with AGENT_EXEC_F_KEEP, writes
 *                                its output to stdout, hangs up once BYTES
 *                                of it arrived (what was in flight is
 *                                lost, as when a VM pauses), ATTACHes on
 *                                a new connection and goes on to the end;
 *                                prints "attached lost N, code N" to stderr
 *   agent-client SOCK --raw      stdin's bytes as they are, the agent's
 *                                replies to stdout (hostile-host tests)
 *   agent-client SOCK --credentials PEMFILE|- [NAME=VALUE]...
 *                                CREDENTIALS (PEM "-": none; none and no
 *                                entries: a clear), waits for the answer
 *                                as airlock will (agent_credentials)
 *   agent-client SOCK --watch PATH [-r] [--stall MS]
 *                                WATCH (-r: recursive) as the daemon drives
 *                                it (agent_watch_begin/_next): "watching",
 *                                then a line per event ("create d PATH",
 *                                "rename - FROM -> TO", "overflow - -"),
 *                                "end" when the path went; --stall: stop
 *                                reading for MS once the first event is
 *                                printed
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/agent_conn.h"
#include "vmm/util/exit_codes.h"
#include "vmm/util/nbfd.h"

static int connect_unix(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(a.sun_path))
        return -ENAMETOOLONG;
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static int fail(const char *what, int err)
{
    fprintf(stderr, "agent-client: %s: %s\n", what, strerror(err));
    return EXIT_AIRLOCK_ERROR;
}

static int do_put(int fd, const char *local, const char *guest, const char *mode)
{
    int in = open(local, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (in < 0 || fstat(in, &st))
        return fail(local, errno);
    int rc = agent_file_put(fd, guest, (uint32_t)strtoul(mode, NULL, 8), in, (uint64_t)st.st_size);
    close(in);
    return rc ? fail(guest, -rc) : 0;
}

static int do_get(int fd, const char *guest, const char *local)
{
    int out = open(local, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0)
        return fail(local, errno);
    int rc = agent_file_get(fd, guest, out, 1ull << 30);
    close(out);
    return rc ? fail(guest, -rc) : 0;
}

static int do_credentials(int fd, const char *pem_path, char **env, int envc)
{
    static char pem[AGENT_CRED_MAX_PEM + 2];
    size_t pem_len = 0;
    if (strcmp(pem_path, "-")) {
        int in = open(pem_path, O_RDONLY | O_CLOEXEC);
        ssize_t n = in < 0 ? -1 : read(in, pem, sizeof(pem));
        if (n < 0)
            return fail(pem_path, errno);
        close(in);
        pem_len = (size_t)n; /* past the limit: the encoder says so */
    }
    char why[256];
    int rc = agent_credentials(fd, (const char *const *)env, (unsigned)envc, pem, pem_len, why,
                               sizeof(why));
    if (rc)
        fprintf(stderr, "agent-client: %s\n", why);
    return rc ? EXIT_AIRLOCK_ERROR : 0;
}

static int do_raw(int fd)
{
    char b[65536];
    ssize_t n;
    while ((n = read(0, b, sizeof(b))) > 0)
        if (write(fd, b, (size_t)n) != n)
            break;
    shutdown(fd, SHUT_WR);
    while ((n = read(fd, b, sizeof(b))) > 0)
        if (write(1, b, (size_t)n) != n)
            break;
    return 0;
}

/* Reads messages until one of type `want` (or EXIT/ERROR) arrives. */
static int wait_for(int fd, struct agent_decoder *d, uint16_t want, struct agent_msg *m)
{
    static uint8_t b[65536];
    static size_t pos, len;
    for (;;) {
        size_t used;
        int rc = agent_decode(d, b + pos, len - pos, &used, m);
        pos += used;
        if (rc < 0)
            return rc;
        if (rc == 1 && (m->type == want || m->type == AGENT_EXIT || m->type == AGENT_ERROR))
            return 0;
        if (rc == 1)
            continue;
        ssize_t n = read(fd, b, sizeof(b));
        if (n <= 0)
            return -ECONNRESET;
        pos = 0;
        len = (size_t)n;
    }
}

static int do_kill_after(int fd, unsigned ms, char **cmd, int n)
{
    static uint8_t f[AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD];
    struct agent_exec_req req;
    agent_exec_req_init(&req);
    req.argv = (const char *const *)cmd;
    req.argc = (uint32_t)n;
    ssize_t fl = agent_encode_exec(f, sizeof(f), &req);
    if (fl < 0 || write(fd, f, (size_t)fl) != fl)
        return fail("send exec", EIO);
    struct agent_decoder d;
    struct agent_msg m;
    if (agent_decoder_init(&d, AGENT_DIR_REPLY) || wait_for(fd, &d, AGENT_STARTED, &m) ||
        m.type != AGENT_STARTED)
        return fail("no STARTED", EPROTO);
    usleep(ms * 1000);
    fl = agent_encode(f, sizeof(f), AGENT_KILL, NULL, 0);
    if (fl < 0 || write(fd, f, (size_t)fl) != fl)
        return fail("send kill", EIO);
    if (wait_for(fd, &d, AGENT_EXIT, &m) || m.type != AGENT_EXIT)
        return fail("no EXIT", EPROTO);
    printf("%s %u\n", m.u.exit.kind == AGENT_EXIT_SIGNAL ? "signal" : "code", m.u.exit.value);
    agent_decoder_free(&d);
    return 0;
}

static int do_keep_cut(const char *sock, int fd, uint64_t cut, char **cmd, int n)
{
    static uint8_t f[AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD];
    struct agent_exec_req req;
    agent_exec_req_init(&req);
    req.argv = (const char *const *)cmd;
    req.argc = (uint32_t)n;
    req.flags |= AGENT_EXEC_F_KEEP;
    ssize_t fl = agent_encode_exec(f, sizeof(f), &req);
    if (fl < 0 || write(fd, f, (size_t)fl) != fl)
        return fail("send exec", EIO);
    struct agent_decoder d;
    struct agent_msg m;
    struct agent_exec_result res = {0};
    if (agent_decoder_init(&d, AGENT_DIR_REPLY))
        return fail("decoder", ENOMEM);
    if (wait_for(fd, &d, AGENT_STARTED, &m) || m.type != AGENT_STARTED)
        return fail("no STARTED", EPROTO);
    res.started = 1;
    res.pid = m.u.started.pid;
    /* Output as it comes until `cut` bytes arrived; then the hang-up. */
    while (res.received < cut) {
        if (wait_for(fd, &d, AGENT_STDOUT, &m) || m.type == AGENT_ERROR)
            return fail("no output", EPROTO);
        if (m.type == AGENT_EXIT)
            return fail("the command ended before the cut", EPROTO);
        if (m.type == AGENT_STDOUT && write(1, m.payload, m.len) == (ssize_t)m.len) {
            res.received += m.len;
            res.out_bytes += m.len;
        }
    }
    agent_decoder_free(&d);
    close(fd);
    if ((fd = connect_unix(sock)) < 0)
        return fail(sock, -fd);
    int rc = agent_exec_attach(fd, &req, 1, 2, -1, -1, UINT64_MAX, &res);
    if (rc || res.attach_error)
        return fail("attach", rc ? -rc : res.attach_error);
    fprintf(stderr, "attached lost %llu, code %d\n", (unsigned long long)res.lost,
            agent_result_status(&res));
    return agent_result_status(&res);
}

static int do_watch(int fd, const char *path, int recursive, unsigned stall_ms)
{
    static const char *const kinds[] = {"create", "write", "remove", "rename", "chmod",
                                        "overflow"};
    struct agent_conn *c;
    int rc = agent_watch_begin(fd, path, recursive ? AGENT_WATCH_F_RECURSIVE : 0, 30000, &c);
    if (rc)
        return fail(path, -rc);
    printf("watching\n");
    fflush(stdout);
    for (int events = 0;;) {
        struct agent_event ev;
        rc = agent_watch_next(c, path, &ev);
        if (rc == 0 && (rc = agent_reader_fill(&c->rd)) == 1)
            continue;
        if (rc < 0 || rc == 2)
            break;
        printf("%s %s %s%s%s\n", kinds[ev.kind], ev.flags & AGENT_EVENT_F_DIR ? "d" : "-",
               ev.path[0] ? ev.path : "-", ev.to[0] ? " -> " : "", ev.to);
        fflush(stdout);
        if (stall_ms && events++ == 0)
            usleep(stall_ms * 1000); /* the agent's queue fills meanwhile */
    }
    ac_free(c);
    if (rc < 0)
        return fail("watch", -rc);
    printf("end\n");
    return 0;
}

static uint64_t num(const char *s)
{
    return strtoull(s, NULL, 0);
}

/* "ROWSxCOLS" */
static int size_arg(const char *s, uint16_t *rows, uint16_t *cols)
{
    unsigned r, c;
    if (sscanf(s, "%ux%u", &r, &c) != 2 || r > 65535 || c > 65535)
        return -1;
    *rows = (uint16_t)r;
    *cols = (uint16_t)c;
    return 0;
}

/* A pipe for agent_exec_signals whose writer, a child, sends one record
 * (len bytes) `ms` after we start: the read end, or -1. */
static int record_later(unsigned ms, const uint8_t *rec, size_t len)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        usleep(ms * 1000);
        _exit(write(p[1], rec, len) == (ssize_t)len ? 0 : 1);
    }
    close(p[1]);
    return pid < 0 ? (close(p[0]), -1) : p[0];
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return fail("usage", EINVAL);
    int fd = connect_unix(argv[1]);
    if (fd < 0)
        return fail(argv[1], -fd);
    if (!strcmp(argv[2], "--put") && argc == 6)
        return do_put(fd, argv[3], argv[4], argv[5]);
    if (!strcmp(argv[2], "--kill-after") && argc > 5 && !strcmp(argv[4], "--"))
        return do_kill_after(fd, (unsigned)strtoul(argv[3], NULL, 10), argv + 5, argc - 5);
    if (!strcmp(argv[2], "--keep-cut") && argc > 5 && !strcmp(argv[4], "--"))
        return do_keep_cut(argv[1], fd, num(argv[3]), argv + 5, argc - 5);
    if (!strcmp(argv[2], "--raw"))
        return do_raw(fd);
    if (!strcmp(argv[2], "--credentials") && argc >= 4)
        return do_credentials(fd, argv[3], argv + 4, argc - 4);
    if (!strcmp(argv[2], "--get") && argc == 5)
        return do_get(fd, argv[3], argv[4]);
    if (!strcmp(argv[2], "--end") && argc == 4) {
        char why[256];
        int rc = agent_container_end(fd, argv[3], AGENT_CONTAINER_END_WAIT_MS, why, sizeof(why));
        if (rc)
            fprintf(stderr, "agent-client: %s\n", why);
        return rc ? EXIT_AIRLOCK_ERROR : 0;
    }
    if (!strcmp(argv[2], "--watch") && argc >= 4) {
        int recursive = argc > 4 && !strcmp(argv[4], "-r");
        int at = 4 + recursive;
        if (argc != at && (argc != at + 2 || strcmp(argv[at], "--stall")))
            return fail("usage: --watch PATH [-r] [--stall MS]", EINVAL);
        return do_watch(fd, argv[3], recursive, argc == at ? 0 : (unsigned)num(argv[at + 1]));
    }

    static const char *env[AGENT_MAX_ENVS];
    struct agent_exec_req req;
    agent_exec_req_init(&req);
    req.envp = env;
    int use_stdin = 0, reseed = 0, i, sig_fd = -1;
    char *script = NULL;
    unsigned reseed_wait = AGENT_RESEED_WAIT_MS;
    for (i = 2; i < argc && strcmp(argv[i], "--"); i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "-i")) {
            use_stdin = 1;
            continue;
        }
        if (!strcmp(o, "--reseed")) {
            reseed = 1;
            continue;
        }
        if (!strcmp(o, "--nnp")) {
            req.flags |= AGENT_EXEC_F_NO_NEW_PRIVS;
            continue;
        }
        if (!v)
            return fail(o, EINVAL);
        i++;
        if (!strcmp(o, "--reseed-wait"))
            reseed_wait = (unsigned)num(v);
        else if (!strcmp(o, "-e") && req.envc < AGENT_MAX_ENVS)
            env[req.envc++] = v;
        else if (!strcmp(o, "-w"))
            req.cwd = v;
        else if (!strcmp(o, "--script") && !script) {
            FILE *f = fopen(v, "r");
            size_t n = 0;
            if (!f || !(script = calloc(AGENT_MAX_ARGV_BYTES + 1, 1)) ||
                (n = fread(script, 1, AGENT_MAX_ARGV_BYTES, f)) == AGENT_MAX_ARGV_BYTES)
                return fail(v, f ? EFBIG : errno);
            fclose(f);
            req.flags |= AGENT_EXEC_F_SCRIPT;
        }
        else if (!strcmp(o, "-u"))
            req.uid = (uint32_t)num(v);
        else if (!strcmp(o, "-g"))
            req.gid = (uint32_t)num(v);
        else if (!strcmp(o, "-t"))
            req.timeout_ms = (uint32_t)num(v);
        else if (!strcmp(o, "--nproc"))
            req.rlim_nproc = num(v);
        else if (!strcmp(o, "--fsize"))
            req.rlim_fsize = num(v);
        else if (!strcmp(o, "--nofile"))
            req.rlim_nofile = num(v);
        else if (!strcmp(o, "--tty") && !size_arg(v, &req.tty_rows, &req.tty_cols))
            req.flags |= AGENT_EXEC_F_TTY;
        else if (!strcmp(o, "-G") && req.ngroups < AGENT_MAX_GROUPS)
            req.groups[req.ngroups++] = (uint32_t)num(v);
        else if (!strcmp(o, "--rlimit") && req.nrlimits < AGENT_MAX_RLIMITS) {
            struct agent_rlimit *l = &req.rlimits[req.nrlimits++];
            unsigned long long res, soft, hard;
            if (sscanf(v, "%llu:%llu:%llu", &res, &soft, &hard) != 3)
                return fail(o, EINVAL);
            *l = (struct agent_rlimit){(uint32_t)res, soft, hard};
        } else if (!strcmp(o, "--winsize-after") && i + 1 < argc) {
            uint16_t rows, cols;
            uint8_t rec[AGENT_SIGQ_WINSIZE_LEN];
            if (size_arg(argv[++i], &rows, &cols))
                return fail(o, EINVAL);
            agent_sigq_winsize(rec, rows, cols);
            if ((sig_fd = record_later((unsigned)num(v), rec, sizeof(rec))) < 0)
                return fail(o, EINVAL);
        } else if (!strcmp(o, "--signal-after") && i + 1 < argc) {
            /* N: to the group; pN: to the process alone */
            const char *sig = argv[++i];
            uint8_t rec = (uint8_t)num(sig + (*sig == 'p'));
            if (*sig == 'p')
                rec |= AGENT_SIGQ_PROCESS;
            if ((sig_fd = record_later((unsigned)num(v), &rec, 1)) < 0)
                return fail(o, EINVAL);
        } else if (!strcmp(o, "--pidns"))
            req.pidns = !strcmp(v, "new") ? AGENT_PIDNS_NEW : AGENT_PIDNS_JOIN;
        else if (!strcmp(o, "--ctr")) {
            req.ctr_name = v;
            req.flags |= AGENT_EXEC_F_CONTAINER;
        } else if (!strcmp(o, "--serial"))
            req.ctr_serial = v;
        else if (!strcmp(o, "--bind") && req.nbinds < AGENT_CTR_MAX_BINDS) {
            /* SRC:DST[:ro], split in place (argv is ours) */
            struct agent_bind *b = &req.binds[req.nbinds++];
            char *dst = strchr(argv[i], ':'), *ro = dst ? strchr(dst + 1, ':') : NULL;
            if (!dst || (ro && strcmp(ro, ":ro")))
                return fail(o, EINVAL);
            *dst++ = '\0';
            if (ro)
                *ro = '\0';
            *b = (struct agent_bind){argv[i], dst, ro ? AGENT_BIND_F_RO : 0};
        } else
            return fail(o, EINVAL);
    }
    if (i + 1 >= argc)
        return fail("no command after --", EINVAL);
    req.argv = (const char *const *)argv + i + 1;
    req.argc = (uint32_t)(argc - i - 1);
    const char *with_script[3];
    if (script) {
        if (req.argc != 2)
            return fail("--script: want SHELL -c after --", EINVAL);
        with_script[0] = req.argv[0];
        with_script[1] = req.argv[1];
        with_script[2] = script;
        req.argv = with_script;
        req.argc = 3;
    }
    if (reseed) {
        static const uint8_t seed[AGENT_RESEED_SEED];
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        int err;
        uint32_t op;
        int rs = agent_reseed(fd, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec,
                              seed, reseed_wait, &err, &op);
        char why[256];
        if (agent_reseed_failure(rs, err, op, reseed_wait, why, sizeof(why))) {
            fprintf(stderr, "agent-client: %s\n", why);
            return EXIT_AIRLOCK_ERROR;
        }
    }
    struct agent_exec_result res;
    /* As airlock run does (vmm/cli/cmd_run.c): a pipe or terminal is written
     * through its non-blocking twin. */
    int out = nbfd_twin(1), err = nbfd_twin(2);
    int rc = agent_exec_signals(fd, &req, out < 0 ? 1 : out, err < 0 ? 2 : err,
                                use_stdin ? 0 : -1, sig_fd, UINT64_MAX, &res);
    if (rc)
        return fail("exec", -rc);
    if (res.error)
        fprintf(stderr, "agent-client: %s: %s (step %u)\n", argv[i + 1], strerror(res.error),
                res.error_op);
    return agent_result_status(&res);
}
