/* `airlock run -- CMD`: a fresh VM per command.  It boots the default
 * kernel with the image as a copy-on-write root and the guest agent as
 * PID 1, connects to the agent over vsock, runs CMD there with our stdout
 * and stderr (and stdin with -i), and exits with CMD's status; the VM and
 * every write it made are gone afterwards. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "devices/virtio/vsock.h"
#include "guest/agent/proto.h"
#include "vmm/agent_client.h"
#include "vmm/audit.h"
#include "vmm/egress.h"
#include "vmm/egress_broker.h"
#include "vmm/run_copy.h"
#include "vmm/commands.h"
#include "vmm/exit_codes.h"
#include "vmm/console.h"
#include "vmm/limits.h"
#include "vmm/seccomp.h"

#define RUN_MAX_ENV 256
#define RUN_DEFAULT_ENVS 8 /* PATH, HOME and the proxy variables below */
#define RUN_MAX_COPIES 32
#define RUN_COPY_OUT_MAX (1ULL << 30) /* a guest cannot make us write more */
#define RUN_AGENT_WAIT_MS 120000 /* boot + agent start, generous for the lab */
#define RUN_CMDLINE "console=ttyS0 reboot=k panic=-1 quiet loglevel=0 root=/dev/vda rw " \
                    "init=/sbin/airlock-agent"
/* Per-command limits unless the flags say otherwise: enough for builds and
 * test runners, low enough that a fork or fd bomb fails inside the guest
 * (they bind the unprivileged default user; root ignores RLIMIT_NPROC). */
#define RUN_DEFAULT_NPROC  1024
#define RUN_DEFAULT_NOFILE 4096
/* Output and disk a command may produce unless the flags say otherwise:
 * roomy for builds and test logs, small next to a host's disk. */
#define RUN_DEFAULT_MAX_OUTPUT_MIB 1024
#define RUN_DEFAULT_DISK_CAP_MIB   1024
/* What every command gets unless -e sets the same name: the guest's
 * proxy (the agent's relay to airlock's egress filter) under both the
 * lower- and upper-case names that curl, pip, requests and wget read. */
static const char *const run_default_env[RUN_DEFAULT_ENVS] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME=/tmp",
    "http_proxy=http://127.0.0.1:3128",  "https_proxy=http://127.0.0.1:3128",
    "HTTP_PROXY=http://127.0.0.1:3128",  "HTTPS_PROXY=http://127.0.0.1:3128",
    "no_proxy=localhost,127.0.0.1,::1",  "NO_PROXY=localhost,127.0.0.1,::1",
};


struct run_ctx {
    struct agent_exec_req req;
    struct run_copy copy_in[RUN_MAX_COPIES], copy_out[RUN_MAX_COPIES];
    unsigned ncopy_in, ncopy_out;
    const char *env[RUN_MAX_ENV + RUN_DEFAULT_ENVS + 1];
    unsigned nenv;
    bool with_stdin;
    uint64_t max_output; /* bytes of stdout + stderr together */
    struct audit audit;
    struct egress_config egress_cfg;
    struct egress egress;
    int broker;
    struct vm *vm;
    struct virtio_vsock *vsock;
    struct vdev *vdev;
    pthread_t thread;
    char kernel[PATH_MAX], image_spec[PATH_MAX + 32], cmdline[2048];
};

/* Appends the defaults whose names -e did not set (a command sees the
 * first of two same-named variables, so the user's must be the only one). */
static void env_add_defaults(struct run_ctx *r)
{
    for (unsigned i = 0; i < RUN_DEFAULT_ENVS; i++) {
        size_t klen = strcspn(run_default_env[i], "=") + 1;
        bool set = false;
        for (unsigned j = 0; j < r->nenv && !set; j++)
            set = !strncmp(r->env[j], run_default_env[i], klen);
        if (!set)
            r->env[r->nenv++] = run_default_env[i];
    }
}

static int usage_error(const char *msg)
{
    fprintf(stderr, "airlock: %s (see airlock run --help)\n", msg);
    return EXIT_AIRLOCK_ERROR;
}

/* "--allow-ip '10.1.2.3/8': address has bits set below its prefix": the
 * option, what the user gave, what is wrong with it. */
static int bad_arg(const char *opt, const char *val, const char *why)
{
    char msg[512];
    snprintf(msg, sizeof(msg), "%s '%.64s': %s", opt, val, why);
    return usage_error(msg);
}

/* "--nproc '0': want 1 to 4194304 processes". */
static int bad_value(const char *opt, const char *val, const char *want)
{
    char why[256];
    snprintf(why, sizeof(why), "want %s", want);
    return bad_arg(opt, val, why);
}

static void run_usage(void)
{
    printf("usage: airlock run [options] -- CMD [ARGS...]\n"
           "\n"
           "Runs CMD in a fresh microVM (the default kernel, the image as a copy-on-write\n"
           "root, the guest agent as PID 1) and exits with its status: 128+N if signal N\n"
           "killed it, 124 on --timeout, 126 if it cannot run, 127 if not found, 125 for\n"
           "airlock's own errors.  The VM and all its writes are gone afterwards.\n"
           "\n"
           "  --timeout SEC     kill CMD's process group after SEC seconds (exit 124)\n"
           "  -e K=V            set an environment variable (repeatable)\n"
           "  -w DIR            working directory in the guest (default /)\n"
           "  --user UID[:GID]  run as this user (default 65534, nobody)\n"
           "  -i                pass our stdin to CMD\n"
           "  --nproc N         RLIMIT_NPROC for CMD's user (default 1024)\n"
           "  --nofile N        RLIMIT_NOFILE (default 4096)\n"
           "  --fsize MiB       RLIMIT_FSIZE, the largest file CMD may write (default: none)\n"
           "  --max-output MiB  stdout and stderr together beyond this are dropped and\n"
           "                    reported; CMD keeps running (default 1024)\n"
           "  --disk-cap MiB    the root image's copy-on-write overlay: writes beyond it\n"
           "                    fail in the guest with I/O errors (default 1024)\n"
           "  --console-rate KIB_PER_S, --console-max MiB  console limits (with --console;\n"
           "                    defaults 1024 and 64, 0: none)\n"
           "  --allow HOST[:PORT]     let CMD reach HOST (\"*.example.com\": its subdomains)\n"
           "                    through the guest's proxy; PORT 443 unless given, * any\n"
           "  --allow-ip CIDR[:PORT] let CMD reach these addresses (also loopback/private)\n"
           "  --egress-max-conns N   egress connections open at once (default 16)\n"
           "  --egress-max-mib N     bytes each way per connection, MiB (default 1024)\n"
           "  --egress-rate N        new egress connections per minute (default 120)\n"
           "  --audit FILE      append JSON-lines records: exec, exit, every egress attempt\n"
           "  --quiet           do not report denied egress on stderr\n"
           "  --mem MiB, --cpus N, --disk SPEC (extra disks, /dev/vdb on)\n"
           "  --image PATH      root image (default: python.ext4 beside the kernel;\n"
           "                    small: the busybox rootfs.ext4)\n"
           "  --kernel PATH     guest kernel (default: guest/vmlinux beside airlock)\n"
           "  --console FILE    keep the guest's console in FILE (debugging)\n"
           "  --vsock-uds PATH  also let host programs reach guest ports as with boot:\n"
           "                    connect to the Unix socket PATH, write \"CONNECT <port>\\n\";\n"
           "                    the guest reaching CID 2 port P (not airlock's own) gets PATH_P\n"
           "  --seccomp MODE    kill (default), trap (name a forbidden syscall), off\n"
           JAIL_USAGE
           "  --append STR      extra kernel command-line arguments\n"
           "  --copy-in HOST:GUEST   copy a host file into the guest before CMD\n"
           "  --copy-out GUEST:HOST  copy a guest file out after CMD (at most 1 GiB)\n");
}

/* guest/ beside the airlock binary: build/airlock -> build/guest/NAME. */
static void default_path(char *out, size_t cap, const char *name)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[n > 0 ? n : 0] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    if (snprintf(out, cap, "%s/guest/%s", slash ? self : ".", name) >= (int)cap)
        snprintf(out, cap, "guest/%s", name); /* absurdly deep: relative is all we can do */
}

static int parse_user(const char *s, struct agent_exec_req *req)
{
    char *colon = strchr(s, ':');
    uint64_t uid, gid;
    if (colon) {
        *colon = 0;
        if (parse_uint(colon + 1, 0xfffffffe, &gid))
            return -EINVAL;
    }
    if (parse_uint(s, 0xfffffffe, &uid))
        return -EINVAL;
    req->uid = (uint32_t)uid;
    req->gid = colon ? (uint32_t)gid : (uint32_t)uid;
    return 0;
}

/* One attempt: a socketpair whose far end the device connects to the
 * agent's port.  Returns our end once the device said "OK", or -errno
 * (-EAGAIN: not listening yet, try again). */
static int agent_dial(struct run_ctx *r)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -errno;
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    pthread_mutex_lock(&r->vdev->transport.lock);
    int rc = virtio_vsock_connect_guest(r->vsock, &r->vdev->transport, sv[0], AGENT_VSOCK_PORT);
    pthread_mutex_unlock(&r->vdev->transport.lock);
    if (rc) {
        close(sv[0]);
        close(sv[1]);
        return -EAGAIN; /* the guest's driver is not up yet */
    }
    /* "OK <port>\n" when the agent accepted; EOF when the guest reset us. */
    char line[32];
    size_t len = 0;
    while (len < sizeof(line)) {
        struct pollfd p = {.fd = sv[1], .events = POLLIN};
        if (poll(&p, 1, 5000) <= 0 || read(sv[1], line + len, 1) != 1)
            break;
        if (line[len++] == '\n')
            return strncmp(line, "OK ", 3) == 0 ? sv[1] : (close(sv[1]), -EPROTO);
    }
    close(sv[1]);
    return -EAGAIN;
}

/* A connection to the agent, waiting for it to listen (it starts as PID 1
 * while we are already running).  fd or -errno. */
static int agent_connect(struct run_ctx *r)
{
    int fd = -EAGAIN;
    for (unsigned waited = 0; fd == -EAGAIN && waited < RUN_AGENT_WAIT_MS; waited += 20) {
        if (vm_stopping(r->vm))
            return -ECANCELED;
        fd = agent_dial(r);
        if (fd == -EAGAIN)
            usleep(20000);
    }
    if (fd < 0 && fd != -ECANCELED)
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "the guest agent did not answer on vsock port %d",
                AGENT_VSOCK_PORT);
    return fd;
}

/* Each copy on its own connection: one request, one answer. */
static int copy_in(struct run_ctx *r, const struct run_copy *c)
{
    int in = c->fd;
    int fd = agent_connect(r);
    int rc = fd < 0 ? fd : agent_file_put(fd, c->guest, c->st.st_mode & 0777, in, (uint64_t)c->st.st_size);
    if (fd >= 0)
        close(fd);
    close(in);
    if (rc && fd >= 0)
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "--copy-in %s: %s", c->arg, strerror(-rc));
    return rc ? -1 : 0;
}

static int copy_out(struct run_ctx *r, const struct run_copy *c)
{
    int out = c->fd;
    if (ftruncate(out, 0) < 0) {
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "--copy-out %s: %s", c->arg, strerror(errno));
        close(out);
        return -1;
    }
    int fd = agent_connect(r);
    int rc = fd < 0 ? fd : agent_file_get(fd, c->guest, out, RUN_COPY_OUT_MAX);
    if (fd >= 0)
        close(fd);
    close(out);
    if (rc && fd >= 0)
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "--copy-out %s: %s", c->arg, strerror(-rc));
    return rc ? -1 : 0;
}

static void audit_exec(struct run_ctx *r)
{
    struct audit_rec a;
    audit_begin(&r->audit, &a, "exec");
    audit_strv(&a, "argv", r->req.argv, r->req.argc);
    audit_str(&a, "cwd", r->req.cwd && *r->req.cwd ? r->req.cwd : "/");
    audit_u64(&a, "uid", r->req.uid == AGENT_ID_DEFAULT ? AGENT_NOBODY : r->req.uid);
    audit_u64(&a, "gid", r->req.gid == AGENT_ID_DEFAULT ? AGENT_NOBODY : r->req.gid);
    audit_end(&r->audit, &a);
}

static void audit_exit(struct run_ctx *r, int rc, const struct agent_exec_result *res,
                       uint64_t ms)
{
    struct audit_rec a;
    audit_begin(&r->audit, &a, "exit");
    if (rc) {
        audit_str(&a, "error", strerror(-rc));
        audit_u64(&a, "status", EXIT_AIRLOCK_ERROR);
    } else {
        audit_u64(&a, "status", (uint64_t)agent_result_status(res));
        if (res->signaled)
            audit_u64(&a, "signal", (uint64_t)res->value);
        audit_bool(&a, "timed_out", res->timed_out);
    }
    audit_u64(&a, "duration_ms", ms);
    audit_u64(&a, "stdout_bytes", res->out_bytes);
    audit_u64(&a, "stderr_bytes", res->err_bytes);
    audit_end(&r->audit, &a);
}

static void *run_thread(void *arg)
{
    struct run_ctx *r = arg;
    int e = seccomp_apply(SECCOMP_WORKER);
    if (e) {
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "cannot install the seccomp filter: %s", strerror(-e));
        return NULL;
    }
    for (unsigned i = 0; i < r->ncopy_in; i++)
        if (copy_in(r, &r->copy_in[i]))
            return NULL;
    int fd = agent_connect(r);
    if (fd < 0)
        return NULL;
    struct agent_exec_result res = {0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    audit_exec(r);
    int rc = agent_exec(fd, &r->req, STDOUT_FILENO, STDERR_FILENO,
                        r->with_stdin ? STDIN_FILENO : -1, r->max_output, &res);
    close(fd);
    if (res.dropped)
        limit_report("output", r->max_output, res.dropped,
                     "output cap reached: %llu bytes dropped (--max-output %llu)",
                     (unsigned long long)res.dropped, (unsigned long long)(r->max_output >> 20));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    audit_exit(r, rc, &res, (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
    if (rc) {
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "lost the guest agent: %s", strerror(-rc));
        return NULL;
    }
    for (unsigned i = 0; i < r->ncopy_out; i++)
        if (copy_out(r, &r->copy_out[i]))
            return NULL;
    egress_stop(&r->egress); /* their end records are written before we report */
    vm_stop(r->vm, agent_result_status(&res), "%s", "");
    return NULL;
}

static int run_serve_port(void *opaque, uint32_t port)
{
    struct run_ctx *r = opaque;
    return port == AGENT_EGRESS_VSOCK_PORT ? egress_accept(&r->egress) : -ENOENT;
}

static int run_started(void *opaque, struct vm *vm, struct virtio_vsock *vsock, struct vdev *vdev)
{
    struct run_ctx *r = opaque;
    r->vm = vm;
    r->vsock = vsock;
    r->vdev = vdev;
    int e = egress_start(&r->egress);
    return e ? e : pthread_create(&r->thread, NULL, run_thread, r);
}

enum { RO_TIMEOUT = 1, RO_USER, RO_MEM, RO_CPUS, RO_DISK, RO_IMAGE, RO_KERNEL, RO_CONSOLE, RO_APPEND,
       RO_COPY_IN, RO_COPY_OUT, RO_NPROC, RO_NOFILE, RO_FSIZE, RO_ALLOW, RO_ALLOW_IP, RO_AUDIT,
       RO_QUIET, RO_EG_CONNS, RO_EG_MIB, RO_EG_RATE, RO_SECCOMP, RO_VSOCK_UDS, RO_HELP };
enum { RO_JAIL = 300 }; /* .. RO_JAIL + JAIL_NOPTS - 1: the jail's flags (vmm/jail.h) */
enum { RO_MAX_OUTPUT = 200, RO_DISK_CAP, RO_CONSOLE_RATE, RO_CONSOLE_MAX };

int cmd_run(int argc, char **argv)
{
    static struct run_ctx r;
    static const struct option longopts[] = {
        {"timeout", required_argument, NULL, RO_TIMEOUT}, {"user", required_argument, NULL, RO_USER},
        {"mem", required_argument, NULL, RO_MEM},         {"cpus", required_argument, NULL, RO_CPUS},
        {"disk", required_argument, NULL, RO_DISK},       {"image", required_argument, NULL, RO_IMAGE},
        {"kernel", required_argument, NULL, RO_KERNEL},   {"console", required_argument, NULL, RO_CONSOLE},
        {"append", required_argument, NULL, RO_APPEND},   {"help", no_argument, NULL, RO_HELP},
        {"copy-in", required_argument, NULL, RO_COPY_IN}, {"copy-out", required_argument, NULL, RO_COPY_OUT},
        {"nproc", required_argument, NULL, RO_NPROC},     {"nofile", required_argument, NULL, RO_NOFILE},
        {"fsize", required_argument, NULL, RO_FSIZE},
        {"allow", required_argument, NULL, RO_ALLOW},     {"allow-ip", required_argument, NULL, RO_ALLOW_IP},
        {"audit", required_argument, NULL, RO_AUDIT},     {"quiet", no_argument, NULL, RO_QUIET},
        {"egress-max-conns", required_argument, NULL, RO_EG_CONNS},
        {"egress-max-mib", required_argument, NULL, RO_EG_MIB},
        {"egress-rate", required_argument, NULL, RO_EG_RATE},
        {"seccomp", required_argument, NULL, RO_SECCOMP},
        {"vsock-uds", required_argument, NULL, RO_VSOCK_UDS},
        {"max-output", required_argument, NULL, RO_MAX_OUTPUT},
        {"disk-cap", required_argument, NULL, RO_DISK_CAP},
        {"console-rate", required_argument, NULL, RO_CONSOLE_RATE},
        {"console-max", required_argument, NULL, RO_CONSOLE_MAX},
        JAIL_LONGOPTS(RO_JAIL),
        {0},
    };
    struct boot_options o = {
        .mem_mib = BOOT_DEFAULT_MEM_MIB, .cpus = 1, .console = "none",
        .kvm_path = BOOT_DEFAULT_KVM, .entry = ENTRY_AUTO, .cid = BOOT_DEFAULT_CID,
        .vsock_internal = true,
        .console_rate_kib = CONSOLE_DEFAULT_RATE_KIB, .console_max_mib = CONSOLE_DEFAULT_MAX_MIB,
    };
    uint64_t disk_cap_mib = RUN_DEFAULT_DISK_CAP_MIB;
    r.max_output = (uint64_t)RUN_DEFAULT_MAX_OUTPUT_MIB << 20;
    const char *image = NULL, *append = "", *audit_path = NULL;
    struct egress_config *eg = &r.egress_cfg;
    eg->max_conns = EGRESS_DEFAULT_MAX_CONNS;
    eg->max_bytes = (uint64_t)EGRESS_DEFAULT_MAX_MIB << 20;
    eg->rate_per_min = EGRESS_DEFAULT_RATE;
    char msg[PATH_MAX + 64];
    uint64_t v;
    agent_exec_req_init(&r.req);
    r.req.rlim_nproc = RUN_DEFAULT_NPROC;
    r.req.rlim_nofile = RUN_DEFAULT_NOFILE;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+:e:w:i", longopts, NULL)) != -1) {
        if (c >= RO_JAIL && c < RO_JAIL + JAIL_NOPTS) {
            if (jail_parse_flag(&o.jail, c - RO_JAIL, optarg, msg, sizeof(msg)))
                return usage_error(msg);
            continue;
        }
        switch (c) {
        case 'e':
            if (!strchr(optarg, '=') || optarg[0] == '=' || r.nenv >= RUN_MAX_ENV)
                return bad_value("-e", optarg, "NAME=VALUE (at most 256 of them)");
            r.env[r.nenv++] = optarg;
            break;
        case 'w': r.req.cwd = optarg; break;
        case 'i': r.with_stdin = true; break;
        case RO_TIMEOUT:
            if (parse_uint(optarg, 4000000, &v) || v == 0)
                return bad_value("--timeout", optarg, "whole seconds, 1 to 4000000");
            r.req.timeout_ms = (uint32_t)(v * 1000);
            break;
        case RO_USER:
            if (parse_user(strdupa(optarg), &r.req))
                return bad_value("--user", optarg, "UID or UID:GID, numbers below 4294967295");
            break;
        case RO_MEM:
            if (parse_uint(optarg, LAYOUT_MEM_MAX_MIB, &v) || v < LAYOUT_MEM_MIN_MIB)
                return bad_value("--mem", optarg, "whole MiB, 8 to 1048576");
            o.mem_mib = v;
            break;
        case RO_CPUS:
            if (parse_uint(optarg, MPTABLE_MAX_CPUS, &v) || v == 0)
                return bad_value("--cpus", optarg, "1 to 254");
            o.cpus = (unsigned)v;
            break;
        case RO_DISK:
            if (o.ndisks + 2 >= LAYOUT_VIRTIO_SLOTS)
                return usage_error("--disk: too many disks");
            o.disks[1 + o.ndisks++] = optarg; /* slot 0 is the root image */
            break;
        case RO_NPROC:
            if (parse_uint(optarg, 1 << 22, &v) || v == 0)
                return bad_value("--nproc", optarg, "1 to 4194304 processes");
            r.req.rlim_nproc = v;
            break;
        case RO_NOFILE:
            /* The guest's fs.nr_open is 1048576: setrlimit refuses more. */
            if (parse_uint(optarg, 1 << 20, &v) || v < 4)
                return bad_value("--nofile", optarg, "4 to 1048576 files");
            r.req.rlim_nofile = v;
            break;
        case RO_FSIZE:
            if (parse_uint(optarg, 1ULL << 24, &v))
                return bad_value("--fsize", optarg, "whole MiB, 0 to 16777216");
            r.req.rlim_fsize = v << 20;
            break;
        case RO_ALLOW:
        case RO_ALLOW_IP: {
            char why[200];
            int e = c == RO_ALLOW ? egress_policy_add_host(&eg->policy, optarg, why, sizeof(why))
                                  : egress_policy_add_cidr(&eg->policy, optarg, why, sizeof(why));
            if (e)
                return bad_arg(c == RO_ALLOW ? "--allow" : "--allow-ip", optarg, why);
            break;
        }
        case RO_AUDIT: audit_path = optarg; break;
        case RO_SECCOMP: {
            enum seccomp_mode m;
            if (seccomp_parse_mode(optarg, &m))
                return bad_value("--seccomp", optarg, "kill, trap or off");
            seccomp_set_mode(m);
            break;
        }
        case RO_QUIET: eg->quiet = true; break;
        case RO_EG_CONNS:
            if (parse_uint(optarg, EGRESS_MAX_THREADS, &v) || v == 0)
                return bad_value("--egress-max-conns", optarg, "1 to 256");
            eg->max_conns = (unsigned)v;
            break;
        case RO_EG_MIB:
            if (parse_uint(optarg, 1 << 24, &v) || v == 0)
                return bad_value("--egress-max-mib", optarg, "whole MiB, 1 to 16777216");
            eg->max_bytes = v << 20;
            break;
        case RO_EG_RATE:
            if (parse_uint(optarg, EGRESS_RATE_MAX, &v) || v == 0)
                return bad_value("--egress-rate", optarg, "1 to 10000 connections per minute");
            eg->rate_per_min = (unsigned)v;
            break;
        case RO_MAX_OUTPUT:
        case RO_DISK_CAP:
            if (parse_uint(optarg, 1 << 24, &v) || v == 0)
                return bad_value(c == RO_DISK_CAP ? "--disk-cap" : "--max-output", optarg,
                                 "whole MiB, 1 to 16777216");
            if (c == RO_DISK_CAP)
                disk_cap_mib = v;
            else
                r.max_output = v << 20;
            break;
        case RO_CONSOLE_RATE:
        case RO_CONSOLE_MAX: {
            char why[200];
            bool rate = c == RO_CONSOLE_RATE;
            if (console_parse_limit(rate ? "--console-rate" : "--console-max", optarg,
                                    rate ? &o.console_rate_kib : &o.console_max_mib, why,
                                    sizeof(why)))
                return usage_error(why);
            break;
        }
        case RO_IMAGE: image = optarg; break;
        case RO_KERNEL: o.kernel = optarg; break;
        case RO_CONSOLE: o.console = optarg; break;
        case RO_VSOCK_UDS: o.vsock_uds = optarg; break;
        case RO_APPEND: append = optarg; break;
        case RO_HELP: run_usage(); return 0;
        case RO_COPY_IN:
        case RO_COPY_OUT: {
            bool in = c == RO_COPY_IN;
            unsigned *n = in ? &r.ncopy_in : &r.ncopy_out;
            struct run_copy *cp = in ? &r.copy_in[*n] : &r.copy_out[*n];
            int e = *n < RUN_MAX_COPIES ? run_copy_parse(optarg, in, cp) : -E2BIG;
            if (e) {
                snprintf(msg, sizeof(msg), "%s %s: %s", in ? "--copy-in" : "--copy-out",
                         cp->arg ? cp->arg : optarg,
                         e == -EINVAL ? (in ? "want HOST:GUEST, a regular host file and an absolute guest path"
                                            : "want GUEST:HOST, an absolute guest path and a regular host file")
                                      : strerror(-e));
                return usage_error(msg);
            }
            (*n)++;
            break;
        }
        case ':':
            snprintf(msg, sizeof(msg), "%s needs a value", argv[optind - 1]);
            return usage_error(msg);
        default:
            snprintf(msg, sizeof(msg), "unknown option '%s'", argv[optind - 1]);
            return usage_error(msg);
        }
    }
    if (optind >= argc)
        return usage_error("no command: airlock run [options] -- CMD [ARGS...]");
    r.req.argv = (const char *const *)argv + optind;
    r.req.argc = (uint32_t)(argc - optind);
    env_add_defaults(&r);
    r.req.envp = r.env;
    r.req.envc = r.nenv;
    if (r.with_stdin)
        r.req.flags |= AGENT_EXEC_F_STDIN;

    if (!o.kernel) {
        default_path(r.kernel, sizeof(r.kernel), "vmlinux");
        o.kernel = r.kernel;
    }
    char image_path[PATH_MAX];
    if (!image || !strcmp(image, "small")) {
        /* default: python3; small: the busybox image, for tests and benchmarks */
        default_path(image_path, sizeof(image_path), image ? "rootfs.ext4" : "python.ext4");
        image = image_path;
    }
    if (snprintf(r.image_spec, sizeof(r.image_spec), "%s,cow=%lluM", image,
                 (unsigned long long)disk_cap_mib) >= (int)sizeof(r.image_spec))
        return usage_error("--image: path too long");
    o.disks[0] = r.image_spec;
    o.ndisks++;
    if (snprintf(r.cmdline, sizeof(r.cmdline), "%s %s", RUN_CMDLINE, append) >= (int)sizeof(r.cmdline))
        return usage_error("--append: too long");
    o.cmdline = r.cmdline;
    /* Before the VM (and any thread) exists: the broker is forked here. */
    int e = audit_path ? audit_open(&r.audit, audit_path) : (audit_none(&r.audit), 0);
    if (e) {
        snprintf(msg, sizeof(msg), "--audit %s: %s", audit_path, strerror(-e));
        return usage_error(msg);
    }
    limits_set_audit(&r.audit);
    r.broker = -1;
    if (eg->policy.n && (e = egress_broker_start(&eg->policy, &r.broker))) {
        fprintf(stderr, "airlock: cannot start the egress broker: %s\n", strerror(-e));
        return EXIT_AIRLOCK_ERROR;
    }
    if (egress_init(&r.egress, eg, &r.audit, r.broker)) {
        fprintf(stderr, "airlock: out of memory\n");
        return EXIT_AIRLOCK_ERROR;
    }
    struct session_hook hook = {.started = run_started, .serve_port = run_serve_port, .opaque = &r};
    return vm_session(&o, &hook);
}
