/* `airlock serve`: the sandbox daemon (vmm/sandbox/).  It listens on a Unix
 * socket (mode 0600: whoever can connect can run code in every sandbox
 * and reach what their allowlists allow), serves each client connection
 * on a thread of its own, and supervises the sandboxes' VM processes,
 * which die with it (PR_SET_PDEATHSIG, vmm/sandbox/vm_proc.c). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/cli/commands.h"
#include "vmm/cli/serve_listen.h"
#include "vmm/e2b/e2b.h"
#include "vmm/jail/daemon_lock.h"
#include "vmm/sandbox/api_auth.h"
#include "vmm/sandbox/api_routes.h"
#include "vmm/sandbox/daemon_state.h"
#include "vmm/sandbox/sandbox_record.h"
#include "vmm/sandbox/vm_proc.h"
#include "vmm/util/exit_codes.h"
#include "vmm/util/parse.h"
#include "vmm/util/spawner.h"
#include "vmm/util/user_dirs.h"
#include "vmm/volume/volume_hold.h"

#define SERVE_DEFAULT_MAX_SANDBOXES 16
#define SERVE_MAX_CONNS 128 /* client connections at once; more get 503 */

static struct api_server srv;
static atomic_uint conns;

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "airlock: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see airlock serve --help)\n");
    return EXIT_AIRLOCK_ERROR;
}

static void serve_usage(void)
{
    printf("usage: airlock serve [--socket PATH] [--listen IP:PORT --token-file F]\n"
           "                     [--pool IMAGE=N[,mem=MiB][,cpus=N]]... [--cache DIR]\n"
           "                     [--audit FILE] [--max-sandboxes N] [--max-mem MiB]\n"
           "                     [--state DIR] [--on-exit pause|kill] [--mount-root DIR]...\n"
           "                     [--seccomp kill|trap|off]\n"
           "\n"
           "Keeps sandboxes (VMs that live across commands) and serves the HTTP/1.1 + JSON\n"
           "API that makes and drives them, on a Unix socket (mode 0600).\n"
           "\n"
           "  --socket PATH       where to listen (default /run/airlock/airlock.sock as root,\n"
           "                      $XDG_RUNTIME_DIR/airlock.sock otherwise)\n"
           "  --listen IP:PORT    serve the API on a TCP port too (numbers only, e.g.\n"
           "                      127.0.0.1:8080); every request there must carry\n"
           "                      'Authorization: Bearer TOKEN'\n"
           "  --token-file F      the token: one line of 16 to 512 printable bytes, in a file\n"
           "                      only its owner may read\n"
           "  --pool IMAGE=N      keep N sandboxes of IMAGE (small, python or a path) ready,\n"
           "                      restored from a snapshot made once; mem and cpus give\n"
           "                      their shape (256 MiB, 1 vCPU); a create of exactly that\n"
           "                      shape without egress rules takes one\n"
           "  --cache DIR         where pool snapshots are kept (default /var/cache/airlock\n"
           "                      as root, else ~/.cache/airlock)\n"
           "  --audit FILE        append every sandbox's audit records (JSON lines: exec,\n"
           "                      exit, limit, egress) to FILE\n"
           "  --max-sandboxes N   sandboxes at once (default %d, at most %d)\n"
           "  --max-mem MiB       guest RAM of all sandboxes together (default: no limit)\n"
           "  --state DIR         what outlives the daemon (default /var/lib/airlock as root,\n"
           "                      else $XDG_STATE_HOME/airlock); one daemon per folder; its\n"
           "                      volumes/ holds the named volumes (docs/volumes.md)\n"
           "  --on-exit pause|kill what SIGTERM does to the sandboxes (default pause)\n"
           "  --mount-root DIR    a create's \"mounts\" sources must lie under DIR (repeatable,\n"
           "                      at most 16; links that lead out and '..' refused).  Without\n"
           "                      it, a client on the Unix socket may mount any folder the\n"
           "                      daemon can read, and a client over TCP none (docs/mounts.md)\n"
           "  --seccomp MODE      once started, the daemon runs under its own seccomp\n"
           "                      allowlist with only the capabilities it needs\n"
           "                      (docs/security.md): kill (default: a syscall off the list\n"
           "                      kills the daemon, and its VMs with it), trap (names the\n"
           "                      syscall on stderr, then exits 125), off (debugging)\n"
           "\n"
           "Paths (docs/sandboxes.md): GET /v1/version, GET /v1/pool, GET /v1/metrics\n"
           "(Prometheus), GET /v1/events (JSON lines), GET|POST /v1/sandboxes,\n"
           "GET|PATCH|DELETE /v1/sandboxes/ID, and under it commands[/CID[/output|/stdin|\n"
           "/signal]], files, directory, stat, archive, watch, audit, snapshot, pause, resume;\n"
           "GET|DELETE /v1/snapshots[/SID]; GET|POST /v1/volumes, GET|DELETE /v1/volumes/NAME.\n"
           "E2B's API too, on the same listeners: its SDKs take the token as their API key\n"
           "(docs/e2b.md).  SIGTERM or SIGINT pauses every sandbox\n"
           "into --state and ends the daemon (--on-exit kill: destroys them all instead); a\n"
           "daemon started on the same --state lists them paused.  When the daemon dies\n"
           "otherwise, its VMs die with it; what was paused stays.\n",
           SERVE_DEFAULT_MAX_SANDBOXES, SANDBOX_MAX);
}

/* Whether a sandbox of a daemon before us lives on in the state folder. */
static bool sandbox_kept(const char *id, void *state_dir)
{
    char p[PATH_MAX + 128];
    struct stat st;
    snprintf(p, sizeof(p), "%.4000s/%s/%.64s", (const char *)state_dir, DAEMON_STATE_SANDBOXES,
             id);
    return !stat(p, &st) && S_ISDIR(st.st_mode);
}

static void *api_conn_thread(void *arg)
{
    struct api_conn *c = arg;
    struct timeval tv = {.tv_sec = API_IO_TIMEOUT_S};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    while (!c->close && !c->broken && api_read_request(c) == 1) {
        if (e2b_request(c)) /* E2B's API: its own keys and tokens (vmm/e2b/e2b.h) */
            e2b_handle(&srv, c, c->token);
        else if (c->token && !api_token_ok(c, c->token))
            api_unauthorized(c);
        else
            api_handle(&srv, c);
        api_request_done(c);
    }
    close(c->fd);
    free(c);
    atomic_fetch_sub(&conns, 1);
    return NULL;
}

/* token: what each request on this listener must carry (NULL: none). */
static void accept_one(int lfd, const char *token)
{
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    struct api_conn *c = calloc(1, sizeof(*c));
    if (!c) {
        close(fd);
        return;
    }
    c->fd = fd;
    c->token = token;
    if (atomic_fetch_add(&conns, 1) >= SERVE_MAX_CONNS) {
        c->close = true;
        api_error(c, 503, NULL, "too many client connections (%d)", SERVE_MAX_CONNS);
        atomic_fetch_sub(&conns, 1);
        close(fd);
        free(c);
        return;
    }
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, api_conn_thread, c)) {
        atomic_fetch_sub(&conns, 1);
        close(fd);
        free(c);
    }
    pthread_attr_destroy(&at);
}

int cmd_serve(int argc, char **argv)
{
    static const struct option opts[] = {
        {"socket", required_argument, NULL, 's'},
        {"max-sandboxes", required_argument, NULL, 'n'},
        {"max-mem", required_argument, NULL, 'm'},
        {"listen", required_argument, NULL, 'l'},
        {"token-file", required_argument, NULL, 't'},
        {"pool", required_argument, NULL, 'p'},
        {"cache", required_argument, NULL, 'c'},
        {"audit", required_argument, NULL, 'a'},
        {"state", required_argument, NULL, 'S'},
        {"on-exit", required_argument, NULL, 'x'},
        {"mount-root", required_argument, NULL, 'R'},
        {"seccomp", required_argument, NULL, 'C'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    char sock[PATH_MAX] = "";
    const char *listen_spec = NULL, *token_file = NULL, *audit_path = NULL;
    static char token[API_TOKEN_MAX + 1];
    char why[512];
    uint64_t max = SERVE_DEFAULT_MAX_SANDBOXES, max_mem = 0;
    enum seccomp_mode filter = SECCOMP_MODE_KILL;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (!*optarg || strlen(optarg) >= sizeof(sock))
                return usage_error("--socket '%.200s': want a path", optarg);
            snprintf(sock, sizeof(sock), "%s", optarg);
            break;
        case 'n':
            if (parse_uint(optarg, SANDBOX_MAX, &max) || max < 1 || max > SANDBOX_MAX)
                return usage_error("--max-sandboxes '%.64s': want a whole number, 1 to 256",
                                   optarg);
            break;
        case 'm':
            if (parse_uint(optarg, 1ull << 30, &max_mem) || max_mem < 8)
                return usage_error("--max-mem '%.64s': want whole MiB, at least 8", optarg);
            break;
        case 'l':
            listen_spec = optarg;
            break;
        case 't':
            token_file = optarg;
            break;
        case 'p':
            if (pool_add(&srv.pool, optarg, why, sizeof(why))) {
                fprintf(stderr, "airlock: %s\n", why);
                return EXIT_AIRLOCK_ERROR;
            }
            break;
        case 'a':
            audit_path = optarg;
            break;
        case 'c':
            if (*optarg != '/' || strlen(optarg) >= sizeof(srv.pool.cache_dir))
                return usage_error("--cache '%.200s': want an absolute path", optarg);
            snprintf(srv.pool.cache_dir, sizeof(srv.pool.cache_dir), "%s", optarg);
            break;
        case 'S':
            if (!*optarg || strlen(optarg) >= sizeof(srv.state_dir) - 64)
                return usage_error("--state '%.200s': want a folder's path", optarg);
            snprintf(srv.state_dir, sizeof(srv.state_dir), "%s", optarg);
            break;
        case 'x':
            if (strcmp(optarg, "pause") && strcmp(optarg, "kill"))
                return usage_error("--on-exit '%.64s': want pause or kill", optarg);
            srv.on_exit_kill = !strcmp(optarg, "kill");
            break;
        case 'R':
            if (mount_roots_add(&srv.mount_roots, optarg, why, sizeof(why))) {
                fprintf(stderr, "airlock: %s (see airlock serve --help)\n", why);
                return EXIT_AIRLOCK_ERROR;
            }
            break;
        case 'C':
            if (seccomp_parse_mode(optarg, &filter))
                return usage_error("--seccomp '%.64s': want kill, trap or off", optarg);
            break;
        case 'h':
            serve_usage();
            return 0;
        case ':':
            return usage_error("%s needs a value", argv[optind - 1]);
        default:
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%.200s'", argv[optind]);
    if (listen_spec && !token_file)
        return usage_error("--listen %.200s needs --token-file: a TCP port has no peer "
                           "credentials to guard it", listen_spec);
    if (token_file && !listen_spec)
        return usage_error("--token-file %.200s: only --listen takes a token", token_file);
    api_server_init(&srv, (unsigned)max, max_mem);
    if (audit_path &&
        (srv.audit_fd = open(audit_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY,
                             0600)) < 0) {
        fprintf(stderr, "airlock: --audit %s: %s\n", audit_path, strerror(errno));
        return EXIT_AIRLOCK_ERROR;
    }
    if (!srv.pool.cache_dir[0])
        user_dir(USER_DIR_CACHE, srv.pool.cache_dir, sizeof(srv.pool.cache_dir));
    if (!srv.state_dir[0])
        user_dir(USER_DIR_STATE, srv.state_dir, sizeof(srv.state_dir));
    if (token_file && api_token_load(token_file, token, sizeof(token), why, sizeof(why))) {
        fprintf(stderr, "airlock: %s\n", why);
        return EXIT_AIRLOCK_ERROR;
    }
    int e;
    if (!sock[0] && (e = serve_default_socket(sock, sizeof(sock)))) {
        fprintf(stderr, "airlock: no socket path: XDG_RUNTIME_DIR is not set (give --socket "
                        "PATH)\n");
        return EXIT_AIRLOCK_ERROR;
    }
    if ((srv.state_lock_fd = daemon_state_open(srv.state_dir, why, sizeof(why))) < 0 ||
        volume_store_open(&srv.volumes, srv.state_dir, why, sizeof(why))) {
        fprintf(stderr, "airlock: %s\n", why);
        return EXIT_AIRLOCK_ERROR;
    }
    /* A sandbox that held a volume when a daemon before us died, and was
     * not kept (sandboxes/ID), is gone: its holds go too. */
    volume_prune_sandboxes(&srv.volumes, sandbox_kept, srv.state_dir);
    /* Each sandbox's folder (its agent socket, its VM's log) goes in a
     * private folder beside the socket, made for this daemon. */
    char dir[PATH_MAX - 32];
    snprintf(dir, sizeof(dir), "%.*s", (int)sizeof(dir) - 1, sock);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else
        slash[slash == dir] = '\0'; /* "/x.sock" -> "/" */
    snprintf(srv.run_dir, sizeof(srv.run_dir), "%s/airlock-serve.XXXXXX", dir);
    /* Signals come through a signalfd to the main thread; every thread
     * made from here on inherits the mask. */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN); /* a client or a pipe gone is an error return */
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
    /* The spawner (vmm/util/spawner.h) forks and execs every child of
     * ours: forked now, from this thread (which lives as long as the
     * daemon: the children die with it), before any other thread and
     * before the filter and the capability drop below, none of which it
     * shares. */
    if ((e = spawner_start())) {
        fprintf(stderr, "airlock: cannot start the daemon's spawner: %s\n", strerror(-e));
        return EXIT_AIRLOCK_ERROR;
    }
    bool loopback = true;
    int tfd = listen_spec ? serve_listen_tcp(listen_spec, &loopback) : -1;
    if (listen_spec && tfd < 0)
        return EXIT_AIRLOCK_ERROR;
    int lfd = serve_listen_unix(sock);
    if (lfd < 0)
        return EXIT_AIRLOCK_ERROR;
    if (sfd < 0 || !mkdtemp(srv.run_dir)) {
        fprintf(stderr, "airlock: cannot start the daemon (%s): %s\n", srv.run_dir,
                strerror(errno));
        unlink(sock);
        return EXIT_AIRLOCK_ERROR;
    }
    /* Everything the daemon opens by name from here on lies in folders
     * it has (state, cache, run_dir) or in /proc; it binds no new
     * listener but a published port's.  Locked down now, before the
     * first thread (docs/security.md, "The daemon"). */
    if (daemon_lock(filter, why, sizeof(why))) {
        fprintf(stderr, "airlock: %s\n", why);
        unlink(sock);
        rmdir(srv.run_dir);
        return EXIT_AIRLOCK_ERROR;
    }
    snapshots_init(&srv.snaps, srv.run_dir);
    unsigned saved = sandbox_records_load(&srv);
    if (saved)
        fprintf(stderr, "airlock: %u paused sandbox%s from %s\n", saved, saved == 1 ? "" : "es",
                srv.state_dir);
    if ((e = pool_start(&srv.pool, &srv.reg, srv.run_dir))) {
        fprintf(stderr, "airlock: cannot start the pool: %s\n", strerror(-e));
        unlink(sock);
        return EXIT_AIRLOCK_ERROR;
    }
    fprintf(stderr, "airlock: serving on %s\n", sock);
    if (listen_spec)
        fprintf(stderr, "airlock: serving on %s too (bearer token; plain HTTP%s)\n", listen_spec,
                loopback ? "" : ": anyone on the path sees the token, put TLS in front");
    int status = 0;
    for (;;) {
        struct pollfd p[3] = {{.fd = lfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN},
                              {.fd = tfd, .events = POLLIN}};
        int n = poll(p, 3, 1000);
        if (n < 0 && errno != EINTR)
            break;
        if (p[1].revents) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                status = 128 + (int)si.ssi_signo;
            break;
        }
        if (p[0].revents)
            accept_one(lfd, NULL);
        if (p[2].revents)
            accept_one(tfd, token);
        api_supervise(&srv);
    }
    /* No new clients; every sandbox goes, then the socket and the folder. */
    close(lfd);
    if (tfd >= 0)
        close(tfd);
    unlink(sock);
    api_stop_all(&srv);
    rmdir(srv.run_dir);
    fprintf(stderr, "airlock: stopped serving on %s\n", sock);
    return status == 128 + SIGTERM || status == 128 + SIGINT ? 0 : status;
}
