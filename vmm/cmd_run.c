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
#include <sys/eventfd.h>
#include <sys/random.h>
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
#include "vmm/run_ctx.h"
#include "vmm/snapshot_dir.h"
#include "vmm/run_usage.h"
#include "vmm/run_report.h"
#include "vmm/commands.h"
#include "vmm/exit_codes.h"
#include "vmm/console.h"
#include "vmm/limits.h"
#include "vmm/nbfd.h"
#include "vmm/seccomp.h"
#include "vmm/timings.h"

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
/* Wall clock unless --timeout says otherwise (0: none): a command left
 * running for an hour is far more often stuck or spinning than working,
 * and an unattended agent's VM must not hold a host's CPU and memory
 * forever; a longer build asks for more. */
#define RUN_DEFAULT_TIMEOUT_S 3600
#define RUN_MAX_TIMEOUT_S     4000000 /* x 1000 still fits the request's 32-bit ms */
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

enum { RO_TIMEOUT = 1, RO_USER, RO_MEM, RO_CPUS, RO_DISK, RO_IMAGE, RO_KERNEL, RO_CONSOLE, RO_APPEND,
       RO_COPY_IN, RO_COPY_OUT, RO_NPROC, RO_NOFILE, RO_FSIZE, RO_ALLOW, RO_ALLOW_IP, RO_AUDIT,
       RO_QUIET, RO_EG_CONNS, RO_EG_MIB, RO_EG_RATE, RO_SECCOMP, RO_TIMINGS, RO_VSOCK_UDS,
       RO_HELP };
enum { RO_JAIL = 300 }; /* .. RO_JAIL + JAIL_NOPTS - 1: the jail's flags (vmm/jail.h) */
enum { RO_MAX_OUTPUT = 200, RO_DISK_CAP, RO_CONSOLE_RATE, RO_CONSOLE_MAX, RO_FROM_SNAPSHOT,
       RO_OUT, RO_COMPRESS, RO_CODES };

/* Options about the command, which `airlock snapshot` has none of. */
static const int command_only[] = {
    RO_TIMEOUT, RO_USER, RO_COPY_IN, RO_COPY_OUT, RO_NPROC, RO_NOFILE, RO_FSIZE, RO_ALLOW,
    RO_ALLOW_IP, RO_AUDIT, RO_QUIET, RO_EG_CONNS, RO_EG_MIB, RO_EG_RATE, RO_MAX_OUTPUT,
    RO_FROM_SNAPSHOT, 'e', 'w', 'i',
};
/* Options that shape the VM, which a snapshot has already fixed. */
static const int vm_shaping[] = {
    RO_MEM, RO_CPUS, RO_DISK, RO_IMAGE, RO_KERNEL, RO_APPEND, RO_DISK_CAP,
};

/* "--mem" for a long option's code, "-e" for a short one. */
static void option_name(const struct option *longopts, int code, char *out, size_t cap)
{
    if (code == 'e' || code == 'w' || code == 'i') {
        snprintf(out, cap, "-%c", code);
        return;
    }
    snprintf(out, cap, "an option");
    for (const struct option *lo = longopts; lo->name; lo++)
        if (lo->val == code)
            snprintf(out, cap, "--%s", lo->name);
}

/* The first option of `list` that was given, or 0. */
static int first_given(const bool *given, const int *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (given[list[i]])
            return list[i];
    return 0;
}

/* --from-snapshot DIR: the VM's shape and disks come from the snapshot. */
static int restore_options(struct run_ctx *r, struct boot_options *o, const char *dir)
{
    struct snap_state *st;
    char msg[PATH_MAX + 300];
    if (snap_dir_open(dir, &st, &o->restore_memory_fd, o->restore_overlay_fd, msg, sizeof(msg)))
        return usage_error(msg);
    if (!st->cid) {
        snprintf(msg, sizeof(msg), "--from-snapshot %s: the snapshot's VM has no vsock "
                 "device, so no agent to run the command", dir);
        return usage_error(msg);
    }
    o->restore = st;
    o->mem_mib = st->mem_mib;
    o->cpus = st->ncpus;
    o->cid = st->cid;
    o->cmdline = st->cmdline;
    o->ndisks = st->ndisks;
    for (unsigned i = 0; i < st->ndisks; i++) {
        const struct snap_disk *d = &st->disks[i];
        char how[40] = "";
        if (d->read_only)
            snprintf(how, sizeof(how), ",ro");
        else if (d->cow)
            snprintf(how, sizeof(how), ",cow=%lluK", (unsigned long long)(d->cow_cap >> 10));
        if (snprintf(r->restore_specs[i], sizeof(r->restore_specs[i]), "%s%s", d->path, how) >=
            (int)sizeof(r->restore_specs[i]))
            return usage_error("--from-snapshot: a disk path in the snapshot is too long");
        o->disks[i] = r->restore_specs[i];
    }
    return 0;
}

static int run_main(int argc, char **argv, enum run_mode mode)
{
    static struct run_ctx r;
    static bool given[RO_JAIL + JAIL_NOPTS];
    const char *from_snapshot = NULL;
    r.mode = mode;
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
        {"timings", optional_argument, NULL, RO_TIMINGS},
        {"vsock-uds", required_argument, NULL, RO_VSOCK_UDS},
        {"max-output", required_argument, NULL, RO_MAX_OUTPUT},
        {"disk-cap", required_argument, NULL, RO_DISK_CAP},
        {"console-rate", required_argument, NULL, RO_CONSOLE_RATE},
        {"console-max", required_argument, NULL, RO_CONSOLE_MAX},
        {"from-snapshot", required_argument, NULL, RO_FROM_SNAPSHOT},
        {"out", required_argument, NULL, RO_OUT},
        {"compress", no_argument, NULL, RO_COMPRESS},
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
    r.req.timeout_ms = RUN_DEFAULT_TIMEOUT_S * 1000;
    r.req.rlim_nofile = RUN_DEFAULT_NOFILE;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+:e:w:i", longopts, NULL)) != -1) {
        if (c > 0 && c < (int)(sizeof(given) / sizeof(given[0])))
            given[c] = true;
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
            if (parse_uint(optarg, RUN_MAX_TIMEOUT_S, &v))
                return bad_value("--timeout", optarg, "whole seconds, 0 (none) to 4000000");
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
        case RO_TIMINGS: {
            enum timings_format f;
            if (timings_parse(optarg, &f))
                return bad_value("--timings", optarg, "--timings or --timings=json");
            timings_enable(f);
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
        case RO_FROM_SNAPSHOT: from_snapshot = optarg; break;
        case RO_OUT: r.snap_dir = optarg; break;
        case RO_COMPRESS: r.snap_zlib = true; break;
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
    char name[64];
    int bad;
    if (mode == RUN_SNAPSHOT) {
        if ((bad = first_given(given, command_only, sizeof(command_only) / sizeof(int)))) {
            option_name(longopts, bad, name, sizeof(name));
            snprintf(msg, sizeof(msg), "%s is about the command: give it to airlock run "
                     "--from-snapshot, not to airlock snapshot", name);
            return usage_error(msg);
        }
        if (optind < argc)
            return usage_error("airlock snapshot takes no command (it saves a VM whose agent is "
                               "ready; airlock run --from-snapshot DIR -- CMD runs one)");
        if (!r.snap_dir)
            return usage_error("airlock snapshot needs --out DIR");
    } else if (given[RO_OUT] || given[RO_COMPRESS]) {
        return usage_error(given[RO_OUT] ? "--out is for airlock snapshot"
                                         : "--compress is for airlock snapshot");
    } else if (from_snapshot &&
               (bad = first_given(given, vm_shaping, sizeof(vm_shaping) / sizeof(int)))) {
        option_name(longopts, bad, name, sizeof(name));
        snprintf(msg, sizeof(msg), "%s cannot change a snapshot's VM (--from-snapshot %.200s "
                 "fixes its memory, vCPUs, kernel and disks)", name, from_snapshot);
        return usage_error(msg);
    }
    if (mode == RUN_EXEC && optind >= argc)
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
    int e;
    if (from_snapshot) {
        if ((e = restore_options(&r, &o, from_snapshot)))
            return e;
    } else if (!image || !strcmp(image, "small")) {
        /* default: python3; small: the busybox image, for tests and benchmarks */
        default_path(image_path, sizeof(image_path), image ? "rootfs.ext4" : "python.ext4");
        image = image_path;
    }
    if (!from_snapshot) {
        if (snprintf(r.image_spec, sizeof(r.image_spec), "%s,cow=%lluM", image,
                     (unsigned long long)disk_cap_mib) >= (int)sizeof(r.image_spec))
            return usage_error("--image: path too long");
        o.disks[0] = r.image_spec;
        o.disk_flags[0] = "--image";
        o.ndisks++;
        if (snprintf(r.cmdline, sizeof(r.cmdline), "%s %s", RUN_CMDLINE, append) >=
            (int)sizeof(r.cmdline))
            return usage_error("--append: too long");
        o.cmdline = r.cmdline;
    }
    /* Before the VM (and any thread) exists: the broker is forked here. */
    e = audit_path ? audit_open(&r.audit, audit_path) : (audit_none(&r.audit), 0);
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
    if (getrandom(r.seed, sizeof(r.seed), 0) != (ssize_t)sizeof(r.seed)) {
        fprintf(stderr, "airlock: getrandom: %s\n", strerror(errno));
        return EXIT_AIRLOCK_ERROR;
    }
    r.ready_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (r.ready_efd < 0) {
        fprintf(stderr, "airlock: eventfd: %s\n", strerror(errno));
        return EXIT_AIRLOCK_ERROR;
    }
    /* Opened before the jail, which allows no open() later. */
    if ((r.out_fd = nbfd_twin(STDOUT_FILENO)) < 0)
        r.out_fd = STDOUT_FILENO;
    if ((r.err_fd = nbfd_twin(STDERR_FILENO)) < 0)
        r.err_fd = STDERR_FILENO;
    struct session_hook hook = run_hook_template;
    hook.opaque = &r;
    return vm_session(&o, &hook);
}

int cmd_run(int argc, char **argv)
{
    return run_main(argc, argv, RUN_EXEC);
}

int cmd_snapshot(int argc, char **argv)
{
    return run_main(argc, argv, RUN_SNAPSHOT);
}
