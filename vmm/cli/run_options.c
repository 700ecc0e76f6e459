#include "vmm/cli/run_options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/agent_client/command_defaults.h"
#include "boot/loader.h"
#include "vmm/cli/run_process_options.h"
#include "vmm/cli/run_usage.h"
#include "vmm/cli/spare_disks.h"
#include "vmm/egress/egress.h"
#include "vmm/forward/forward_spec.h"
#include "vmm/kvm/console.h"
#include "vmm/jail/jail.h"
#include "vmm/memory/layout.h"
#include "vmm/image/image_ref.h"
#include "vmm/util/parse.h"

/* The command defaults (vmm/agent_client/command_defaults.h) under run's names. */
#define RUN_DEFAULT_NPROC          COMMAND_DEFAULT_NPROC
#define RUN_DEFAULT_NOFILE         COMMAND_DEFAULT_NOFILE
#define RUN_DEFAULT_MAX_OUTPUT_MIB COMMAND_DEFAULT_MAX_OUTPUT_MIB
#define RUN_DEFAULT_TIMEOUT_S      COMMAND_DEFAULT_TIMEOUT_S
#define RUN_MAX_TIMEOUT_S          COMMAND_MAX_TIMEOUT_S
/* The root image's copy-on-write overlay unless --disk-cap says otherwise:
 * roomy for builds, small next to a host's disk. */
#define RUN_DEFAULT_DISK_CAP_MIB 1024

/* run's own options; the shared VM flags are vmm/cli/vm_options.h's (0x100..). */
enum {
    RO_TIMEOUT = 0x200, RO_USER, RO_IMAGE, RO_APPEND, RO_COPY_IN, RO_COPY_OUT, RO_NPROC,
    RO_NOFILE, RO_FSIZE, RO_ALLOW, RO_ALLOW_IP, RO_AUDIT, RO_QUIET, RO_EG_CONNS, RO_EG_MIB,
    RO_EG_RATE, RO_HELP, RO_MAX_OUTPUT, RO_DISK_CAP, RO_FROM_SNAPSHOT, RO_OUT, RO_COMPRESS,
    RO_AUDIT_ID, RO_CONTROL_FD, RO_SECRET, RO_CA_FILE, RO_MOUNT, RO_ENTRYPOINT, RO_ROOT_DISK,
    RO_GROUP_ADD, RO_ULIMIT, RO_SECURITY_OPT, RO_EGRESS_CONTROL_FD, RO_VOLUME, RO_STATE, RO_SPARE_DISKS, RO_COLD_BOOT, RO_END
};

static const struct option run_own[] = {
    {"timeout", required_argument, NULL, RO_TIMEOUT}, {"user", required_argument, NULL, RO_USER},
    {"image", required_argument, NULL, RO_IMAGE},     {"append", required_argument, NULL, RO_APPEND},
    {"help", no_argument, NULL, RO_HELP},
    {"copy-in", required_argument, NULL, RO_COPY_IN}, {"copy-out", required_argument, NULL, RO_COPY_OUT},
    {"nproc", required_argument, NULL, RO_NPROC},     {"nofile", required_argument, NULL, RO_NOFILE},
    {"fsize", required_argument, NULL, RO_FSIZE},
    {"allow", required_argument, NULL, RO_ALLOW},     {"allow-ip", required_argument, NULL, RO_ALLOW_IP},
    {"audit", required_argument, NULL, RO_AUDIT},     {"quiet", no_argument, NULL, RO_QUIET},
    {"egress-max-conns", required_argument, NULL, RO_EG_CONNS},
    {"egress-max-mib", required_argument, NULL, RO_EG_MIB},
    {"egress-rate", required_argument, NULL, RO_EG_RATE},
    {"max-output", required_argument, NULL, RO_MAX_OUTPUT},
    {"disk-cap", required_argument, NULL, RO_DISK_CAP},
    {"from-snapshot", required_argument, NULL, RO_FROM_SNAPSHOT},
    {"cold-boot", no_argument, NULL, RO_COLD_BOOT},
    {"out", required_argument, NULL, RO_OUT},
    {"compress", no_argument, NULL, RO_COMPRESS},
    {"audit-id", required_argument, NULL, RO_AUDIT_ID},
    {"control-fd", required_argument, NULL, RO_CONTROL_FD},
    {"egress-control-fd", required_argument, NULL, RO_EGRESS_CONTROL_FD},
    {"secret", required_argument, NULL, RO_SECRET},
    {"ca-file", required_argument, NULL, RO_CA_FILE},
    {"mount", required_argument, NULL, RO_MOUNT},
    {"volume", required_argument, NULL, RO_VOLUME},
    {"state", required_argument, NULL, RO_STATE},
    {"entrypoint", required_argument, NULL, RO_ENTRYPOINT},
    {"root-disk", required_argument, NULL, RO_ROOT_DISK},
    {"tty", no_argument, NULL, 't'},
    {"group-add", required_argument, NULL, RO_GROUP_ADD},
    {"ulimit", required_argument, NULL, RO_ULIMIT},
    {"security-opt", required_argument, NULL, RO_SECURITY_OPT},
    {"publish", required_argument, NULL, 'p'},
    {"spare-disks", required_argument, NULL, RO_SPARE_DISKS},
    {0},
};

/* Options about the command, which `airlock snapshot` has none of. */
static const int command_only[] = {
    RO_TIMEOUT, RO_USER, RO_COPY_IN, RO_COPY_OUT, RO_NPROC, RO_NOFILE, RO_FSIZE, RO_ALLOW,
    RO_ALLOW_IP, RO_AUDIT, RO_QUIET, RO_EG_CONNS, RO_EG_MIB, RO_EG_RATE, RO_MAX_OUTPUT,
    RO_FROM_SNAPSHOT, RO_SECRET, RO_CA_FILE, RO_ENTRYPOINT, 'e', 'w', 'i', 't', RO_GROUP_ADD,
    RO_ULIMIT, RO_SECURITY_OPT, 'p',
};
/* Options about one command: a sandbox takes them with each command. */
static const int per_command[] = {
    RO_TIMEOUT, RO_USER, RO_COPY_IN, RO_COPY_OUT, RO_NPROC, RO_NOFILE, RO_FSIZE, RO_MAX_OUTPUT,
    RO_ENTRYPOINT, 'e', 'w', 'i', 't', RO_GROUP_ADD, RO_ULIMIT, RO_SECURITY_OPT,
};
/* Options that shape the VM, which a snapshot has already fixed. */
static const int vm_shaping[] = {
    VMO_MEM, VMO_CPUS, VMO_DISK, RO_IMAGE, VMO_KERNEL, RO_APPEND, RO_DISK_CAP, RO_MOUNT,
    RO_VOLUME,
};

/* "--allow-ip '10.1.2.3/8': address has bits set below its prefix". */
static int bad_arg(char *err, size_t errlen, const char *opt, const char *val, const char *why)
{
    snprintf(err, errlen, "%s '%.64s': %s", opt, val, why);
    return -EINVAL;
}

/* "--nproc '0': want 1 to 4194304 processes". */
static int bad_value(char *err, size_t errlen, const char *opt, const char *val, const char *want)
{
    char why[256];
    snprintf(why, sizeof(why), "want %s", want);
    return bad_arg(err, errlen, opt, val, why);
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

static int parse_copy(struct run_ctx *r, bool in, char *arg, char *err, size_t errlen)
{
    unsigned *n = in ? &r->ncopy_in : &r->ncopy_out;
    struct run_copy *cp = in ? &r->copy_in[*n] : &r->copy_out[*n];
    int e = *n < RUN_MAX_COPIES ? run_copy_parse(arg, in, cp) : -E2BIG;
    if (e) {
        snprintf(err, errlen, "%s %s: %s", in ? "--copy-in" : "--copy-out",
                 cp->arg ? cp->arg : arg,
                 cp->why[0] ? cp->why
                 : e == -EINVAL ? (in ? "want HOST:GUEST, a host file or folder and an absolute guest path"
                                      : "want GUEST:HOST, an absolute guest path and a host file or folder")
                                : strerror(-e));
        return -EINVAL;
    }
    (*n)++;
    return 0;
}

/* One of run's own options.  0 or -EINVAL with err. */
static int run_option_set(struct run_ctx *r, struct run_args *a, int c, char *val, char *err,
                          size_t errlen)
{
    struct egress_config *eg = &r->egress_cfg;
    uint64_t v;
    switch (c) {
    case 'e':
        if (!strchr(val, '=') || val[0] == '=' || r->nenv >= RUN_MAX_ENV)
            return bad_value(err, errlen, "-e", val, "NAME=VALUE (at most 256 of them)");
        r->env[r->nenv++] = val;
        return 0;
    case 'w': r->req.cwd = val; return 0;
    case 'i': r->with_stdin = true; return 0;
    case 't': r->tty.on = true; return 0;
    case 'p': {
        char why[200];
        if (r->npublish >= FORWARD_MAX_PORTS)
            return bad_value(err, errlen, "-p", val, "at most 64 published ports");
        if (forward_spec_parse(val, &r->publish[r->npublish].spec, why, sizeof(why)))
            return bad_arg(err, errlen, "-p", val, why);
        for (unsigned i = 0; i < r->npublish; i++)
            if (r->publish[i].spec.guest_port == r->publish[r->npublish].spec.guest_port)
                return bad_arg(err, errlen, "-p", val, "that guest port is published already");
        r->publish[r->npublish++].fd = -1;
        return 0;
    }
    case RO_GROUP_ADD: return run_group_add(&r->req, val, err, errlen);
    case RO_ULIMIT: return run_ulimit(&r->req, val, err, errlen);
    case RO_SECURITY_OPT: return run_security_opt(&r->req, val, err, errlen);
    case RO_TIMEOUT:
        if (parse_uint(val, RUN_MAX_TIMEOUT_S, &v))
            return bad_value(err, errlen, "--timeout", val, "whole seconds, 0 (none) to 4000000");
        r->req.timeout_ms = (uint32_t)(v * 1000);
        return 0;
    case RO_USER:
        if (parse_user(strdupa(val), &r->req))
            return bad_value(err, errlen, "--user", val, "UID or UID:GID, numbers below 4294967295");
        a->user_given = true;
        return 0;
    case RO_ENTRYPOINT: a->entrypoint = val; return 0;
    case RO_NPROC:
        if (parse_uint(val, 1 << 22, &v) || v == 0)
            return bad_value(err, errlen, "--nproc", val, "1 to 4194304 processes");
        r->req.rlim_nproc = v;
        return 0;
    case RO_NOFILE:
        /* The guest's fs.nr_open is 1048576: setrlimit refuses more. */
        if (parse_uint(val, 1 << 20, &v) || v < 4)
            return bad_value(err, errlen, "--nofile", val, "4 to 1048576 files");
        r->req.rlim_nofile = v;
        return 0;
    case RO_FSIZE:
        if (parse_uint(val, 1ULL << 24, &v))
            return bad_value(err, errlen, "--fsize", val, "whole MiB, 0 to 16777216");
        r->req.rlim_fsize = v << 20;
        return 0;
    case RO_ALLOW:
    case RO_ALLOW_IP: {
        char why[200];
        int e = c == RO_ALLOW ? egress_policy_add_host(&eg->policy, val, why, sizeof(why))
                              : egress_policy_add_cidr(&eg->policy, val, why, sizeof(why));
        return e ? bad_arg(err, errlen, c == RO_ALLOW ? "--allow" : "--allow-ip", val, why) : 0;
    }
    case RO_SECRET: return secret_parse(&eg->secrets, val, err, errlen);
    case RO_CA_FILE: eg->ca_file = val; return 0;
    case RO_MOUNT: return mount_list_add(&r->mounts, val, true, err, errlen);
    case RO_VOLUME: return mount_list_add_volume(&r->mounts, val, err, errlen);
    case RO_STATE: r->state_dir = val; return 0;
    case RO_AUDIT: a->audit_path = val; return 0;
    case RO_AUDIT_ID: a->audit_id = val; return 0;
    case RO_CONTROL_FD:
        if (parse_uint(val, 1024, &v) || v < 3)
            return bad_value(err, errlen, "--control-fd", val, "an fd number from 3 to 1024");
        r->control_fd = (int)v;
        jail_keep_fd(r->control_fd); /* inherited on purpose: not one to close */
        return 0;
    case RO_EGRESS_CONTROL_FD:
        if (parse_uint(val, 1024, &v) || v < 3)
            return bad_value(err, errlen, "--egress-control-fd", val, "an fd number from 3 to 1024");
        r->egress_update_fd = (int)v;
        /* The broker takes it and we close it before the jail, whose
         * sweep of inherited fds must then leave its number alone (a
         * later socket may have it). */
        jail_keep_fd(r->egress_update_fd);
        return 0;
    case RO_SPARE_DISKS:
        if (parse_uint(val, SPARE_DISKS_MAX, &v))
            return bad_value(err, errlen, "--spare-disks", val, "0 to 8 empty disk slots");
        a->vm.spare_disks = (unsigned)v;
        return 0;
    case RO_QUIET: eg->quiet = true; return 0;
    case RO_EG_CONNS:
        if (parse_uint(val, EGRESS_MAX_THREADS, &v) || v == 0)
            return bad_value(err, errlen, "--egress-max-conns", val, "1 to 256");
        eg->max_conns = (unsigned)v;
        return 0;
    case RO_EG_MIB:
        if (parse_uint(val, 1 << 24, &v) || v == 0)
            return bad_value(err, errlen, "--egress-max-mib", val, "whole MiB, 1 to 16777216");
        eg->max_bytes = v << 20;
        return 0;
    case RO_EG_RATE:
        if (parse_uint(val, EGRESS_RATE_MAX, &v) || v == 0)
            return bad_value(err, errlen, "--egress-rate", val, "1 to 10000 connections per minute");
        eg->rate_per_min = (unsigned)v;
        return 0;
    case RO_MAX_OUTPUT:
    case RO_DISK_CAP:
        if (parse_uint(val, 1 << 24, &v) || v == 0)
            return bad_value(err, errlen, c == RO_DISK_CAP ? "--disk-cap" : "--max-output", val,
                             "whole MiB, 1 to 16777216");
        if (c == RO_DISK_CAP)
            a->disk_cap_mib = v;
        else
            r->max_output = v << 20;
        return 0;
    case RO_IMAGE: a->image = val; return 0;
    case RO_ROOT_DISK: a->root_disk = val; return 0;
    case RO_APPEND: a->append = val; return 0;
    case RO_FROM_SNAPSHOT: a->from_snapshot = val; return 0;
    case RO_COLD_BOOT: a->cold_boot = true; return 0;
    case RO_OUT: r->snap_dir = val; return 0;
    case RO_COMPRESS: r->snap_zlib = true; return 0;
    case RO_COPY_IN:
    case RO_COPY_OUT: return parse_copy(r, c == RO_COPY_IN, val, err, errlen);
    }
    snprintf(err, errlen, "internal error: option code %d", c);
    return -EINVAL;
}

static void set_defaults(struct run_ctx *r, struct run_args *a, enum run_mode mode)
{
    *a = (struct run_args){.append = "", .disk_cap_mib = RUN_DEFAULT_DISK_CAP_MIB};
    a->vm = (struct boot_options){
        .mem_mib = BOOT_DEFAULT_MEM_MIB, .cpus = 1, .console = "none",
        .kvm_path = BOOT_DEFAULT_KVM, .entry = ENTRY_AUTO, .cid = VSOCK_GUEST_CID_DEFAULT,
        .vsock_internal = true,
        .console_rate_kib = CONSOLE_DEFAULT_RATE_KIB, .console_max_mib = CONSOLE_DEFAULT_MAX_MIB,
    };
    r->mode = mode;
    r->control_fd = -1;
    r->egress_update_fd = -1;
    r->max_output = (uint64_t)RUN_DEFAULT_MAX_OUTPUT_MIB << 20;
    r->egress_cfg.max_conns = EGRESS_DEFAULT_MAX_CONNS;
    r->egress_cfg.max_bytes = (uint64_t)EGRESS_DEFAULT_MAX_MIB << 20;
    r->egress_cfg.rate_per_min = EGRESS_DEFAULT_RATE;
    agent_exec_req_init(&r->req);
    r->req.rlim_nproc = RUN_DEFAULT_NPROC;
    r->req.timeout_ms = RUN_DEFAULT_TIMEOUT_S * 1000;
    r->req.rlim_nofile = RUN_DEFAULT_NOFILE;
}

/* The first option of `list` that was given, or 0. */
static int first_given(const bool *given, const int *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (given[list[i]])
            return list[i];
    return 0;
}

/* Options that do not belong together or to this mode. */
static int check_mode(const struct run_ctx *r, const struct run_args *a, const bool *given,
                      const struct option *opts, int argc, char *err, size_t errlen)
{
    char name[64];
    int bad;
    if (r->mode == RUN_SNAPSHOT) {
        if (given[RO_MOUNT] || given[RO_VOLUME]) {
            snprintf(err, errlen, "%s is not for airlock snapshot (a restored VM cannot "
                     "take more disks); airlock run %s boots a VM with them",
                     given[RO_MOUNT] ? "--mount" : "--volume", given[RO_MOUNT] ? "--mount" : "--volume");
            return -EINVAL;
        }
        if ((bad = first_given(given, command_only, sizeof(command_only) / sizeof(int)))) {
            vm_option_name(opts, bad, name, sizeof(name));
            snprintf(err, errlen, "%s is about the command: give it to airlock run "
                     "--from-snapshot, not to airlock snapshot", name);
            return -EINVAL;
        }
        if (a->cmd_index < argc) {
            snprintf(err, errlen, "airlock snapshot takes no command (it saves a VM whose agent "
                     "is ready; airlock run --from-snapshot DIR -- CMD runs one)");
            return -EINVAL;
        }
        if (!r->snap_dir) {
            snprintf(err, errlen, "airlock snapshot needs --out DIR");
            return -EINVAL;
        }
        return 0;
    }
    if (r->mode == RUN_HOLD) {
        if ((bad = first_given(given, per_command, sizeof(per_command) / sizeof(int)))) {
            vm_option_name(opts, bad, name, sizeof(name));
            snprintf(err, errlen, "%s is about one command: a sandbox is given it with each "
                     "command, not when it is made", name);
            return -EINVAL;
        }
        if (a->cmd_index < argc) {
            snprintf(err, errlen, "airlock sandbox-vm takes no command (airlock serve runs "
                     "them through the agent)");
            return -EINVAL;
        }
        if (!a->vm.vsock_uds) {
            snprintf(err, errlen, "airlock sandbox-vm needs --vsock-uds PATH (where its "
                     "agent is reached)");
            return -EINVAL;
        }
    }
    if ((given[RO_VOLUME] || given[RO_STATE]) && r->mode != RUN_EXEC) {
        snprintf(err, errlen, "%s is for airlock run (a sandbox's volumes are its daemon's: "
                 "airlock create --volume)", given[RO_VOLUME] ? "--volume" : "--state");
        return -EINVAL;
    }
    if (given[RO_STATE] && !given[RO_VOLUME]) {
        snprintf(err, errlen, "--state is where --volume's volumes are: give a --volume");
        return -EINVAL;
    }
    if (given['p'] && r->mode != RUN_EXEC) {
        snprintf(err, errlen, "-p is for airlock run (a sandbox publishes its ports with "
                 "airlock create -p or POST /v1/sandboxes/ID/ports)");
        return -EINVAL;
    }
    if (given[RO_SPARE_DISKS] && r->mode != RUN_HOLD) {
        snprintf(err, errlen, "--spare-disks is for airlock sandbox-vm (its disks are filled "
                 "over --control-fd)");
        return -EINVAL;
    }
    if ((given[RO_CONTROL_FD] || given[RO_EGRESS_CONTROL_FD]) && r->mode != RUN_HOLD) {
        snprintf(err, errlen, "%s is for airlock sandbox-vm",
                 given[RO_CONTROL_FD] ? "--control-fd" : "--egress-control-fd");
        return -EINVAL;
    }
    if (given[RO_AUDIT_ID] && (r->mode != RUN_HOLD || !given[RO_AUDIT])) {
        snprintf(err, errlen, "--audit-id is for airlock sandbox-vm, with --audit");
        return -EINVAL;
    }
    if (given[RO_CA_FILE] && !given[RO_SECRET]) {
        snprintf(err, errlen, "--ca-file is for the hosts of --secret (the CAs their "
                 "certificates are checked against)");
        return -EINVAL;
    }
    if (run_ulimit_check(&r->req, (const bool[3]){given[RO_NPROC], given[RO_NOFILE],
                                                  given[RO_FSIZE]}, err, errlen))
        return -EINVAL;
    if (a->cold_boot && !a->from_snapshot) {
        snprintf(err, errlen, "--cold-boot boots on a snapshot's disks: give --from-snapshot DIR");
        return -EINVAL;
    }
    if (given[RO_OUT] || given[RO_COMPRESS]) {
        snprintf(err, errlen, "%s is for airlock snapshot", given[RO_OUT] ? "--out" : "--compress");
        return -EINVAL;
    }
    if (a->from_snapshot &&
        (bad = first_given(given, vm_shaping, sizeof(vm_shaping) / sizeof(int)))) {
        vm_option_name(opts, bad, name, sizeof(name));
        snprintf(err, errlen, "%s cannot change a snapshot's VM (--from-snapshot %.200s "
                 "fixes its memory, vCPUs, kernel and disks)", name, a->from_snapshot);
        return -EINVAL;
    }
    return 0;
}

int run_options_parse(struct run_ctx *r, struct run_args *a, int argc, char **argv,
                      char *err, size_t errlen)
{
    static bool given[RO_END];
    memset(given, 0, sizeof(given));
    struct option opts[80];
    set_defaults(r, a, r->mode);
    if (vm_longopts(VMO_FOR_RUN, run_own, opts, sizeof(opts) / sizeof(opts[0])) < 0) {
        snprintf(err, errlen, "internal error: too many options");
        return -EINVAL;
    }
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+:e:w:itp:", opts, NULL)) != -1) {
        if (c > 0 && c < RO_END)
            given[c] = true;
        int e;
        if (c >= VMO_KERNEL && c < VMO_END)
            e = vm_option_set(&a->vm, c, optarg, err, errlen);
        else if (c == RO_HELP)
            return run_usage(), 1;
        else if (c == ':')
            e = (snprintf(err, errlen, "%s needs a value", argv[optind - 1]), -EINVAL);
        else if (c == '?')
            e = (snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]), -EINVAL);
        else
            e = run_option_set(r, a, c, optarg, err, errlen);
        if (e)
            return e;
    }
    a->cmd_index = optind;
    if (check_mode(r, a, given, opts, argc, err, errlen))
        return -EINVAL;
    /* Slot 0 is the root image (unless a snapshot brings its own disks),
     * each --mount's folder a disk after the --disk ones. */
    unsigned disks = mount_list_disks(&r->mounts);
    unsigned reserved = (a->from_snapshot ? 0 : 1) + disks;
    if (vm_options_check_slots(&a->vm, reserved, err, errlen)) {
        if (a->vm.spare_disks) /* name the flag that went past them */
            snprintf(err, errlen, "--spare-disks %u: with %u other disk%s and the vsock device "
                     "the VM needs %u virtio slots; it has %d", a->vm.spare_disks,
                     reserved + a->vm.ndisks, reserved + a->vm.ndisks == 1 ? "" : "s",
                     reserved + a->vm.ndisks + a->vm.spare_disks + 1, LAYOUT_VIRTIO_SLOTS);
        else if (r->mounts.n)
            snprintf(err, errlen, "--mount: %u mount disks, %u --disk, the root image and the "
                     "vsock device need %u virtio slots; the VM has %d", disks, a->vm.ndisks,
                     disks + a->vm.ndisks + 2, LAYOUT_VIRTIO_SLOTS);
        return -EINVAL;
    }
    return 0;
}

/* Appends the defaults whose names -e did not set (a command sees the
 * first of two same-named variables, so the user's must be the only one). */
static void env_add_defaults(struct run_ctx *r)
{
    for (unsigned i = 0; i < COMMAND_DEFAULT_ENVS; i++) {
        size_t klen = strcspn(command_default_env[i], "=") + 1;
        bool set = false;
        for (unsigned j = 0; j < r->nenv && !set; j++)
            set = !strncmp(r->env[j], command_default_env[i], klen);
        if (!set)
            r->env[r->nenv++] = command_default_env[i];
    }
}

/* An imported image's Env after the -e ones (theirs win) and before
 * airlock's defaults (the image's PATH wins over ours). */
static int env_add_image(struct run_ctx *r, const json_t *env, char *err, size_t errlen)
{
    size_t i;
    json_t *e;
    json_array_foreach(env, i, e) {
        const char *kv = json_string_value(e);
        if (!kv || !strchr(kv, '=') || kv[0] == '=')
            continue; /* docker ignores what it cannot read, too */
        size_t klen = strcspn(kv, "=") + 1;
        bool set = false;
        for (unsigned j = 0; j < r->nenv && !set; j++)
            set = !strncmp(r->env[j], kv, klen);
        if (set)
            continue;
        if (r->nenv >= RUN_MAX_ENV * 2) {
            snprintf(err, errlen, "--image '%.128s': more than %d variables in its Env and -e",
                     r->image.name, RUN_MAX_ENV * 2);
            return -EINVAL;
        }
        r->env[r->nenv++] = kv;
    }
    return 0;
}

/* An imported image's User, WorkingDir, Entrypoint and Cmd where the
 * flags say nothing, as `docker run` takes them: CMD replaces Cmd and
 * keeps Entrypoint; --entrypoint replaces Entrypoint ("" drops it) and,
 * as docker does, the image's Cmd with it. */
static int image_defaults(struct run_ctx *r, const struct run_args *a, int argc, char **argv,
                          char *err, size_t errlen)
{
    const json_t *rec = r->image.rec, *cfg = json_object_get(rec, "config");
    if (!a->user_given && json_object_get(rec, "user_error")) {
        snprintf(err, errlen, "--image '%.128s': %.300s; give --user UID[:GID]", r->image.name,
                 json_string_value(json_object_get(rec, "user_error")));
        return -EINVAL;
    }
    if (!a->user_given && json_object_get(rec, "uid")) {
        r->req.uid = (uint32_t)json_integer_value(json_object_get(rec, "uid"));
        r->req.gid = (uint32_t)json_integer_value(json_object_get(rec, "gid"));
    }
    const char *wd = json_string_value(json_object_get(cfg, "WorkingDir"));
    if (!r->req.cwd && wd && wd[0])
        r->req.cwd = wd;
    if (env_add_image(r, json_object_get(cfg, "Env"), err, errlen))
        return -EINVAL;
    const json_t *ep = a->entrypoint ? NULL : json_object_get(cfg, "Entrypoint");
    const json_t *cmd = a->entrypoint || a->cmd_index < argc ? NULL : json_object_get(cfg, "Cmd");
    size_t n = json_array_size(ep) + json_array_size(cmd) + (size_t)(argc - a->cmd_index) + 1;
    const char **v = calloc(n + 1, sizeof(*v)); /* r is static: it lives as long as the run */
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return -EINVAL;
    }
    size_t k = 0, i;
    json_t *e;
    if (a->entrypoint && a->entrypoint[0])
        v[k++] = a->entrypoint;
    json_array_foreach(ep, i, e) if (json_string_value(e)) v[k++] = json_string_value(e);
    json_array_foreach(cmd, i, e) if (json_string_value(e)) v[k++] = json_string_value(e);
    for (int j = a->cmd_index; j < argc; j++)
        v[k++] = argv[j];
    r->req.argv = v;
    r->req.argc = (uint32_t)k;
    return 0;
}

int run_options_request(struct run_ctx *r, const struct run_args *a, int argc, char **argv,
                        char *err, size_t errlen)
{
    r->req.argv = (const char *const *)argv + a->cmd_index;
    r->req.argc = (uint32_t)(argc - a->cmd_index);
    if (a->entrypoint && !r->image.rec) {
        snprintf(err, errlen, "--entrypoint is for an imported image's Entrypoint (--image NAME)");
        return -EINVAL;
    }
    if (r->mode == RUN_EXEC && r->image.rec && image_defaults(r, a, argc, argv, err, errlen))
        return -EINVAL;
    if (r->mode == RUN_EXEC && r->req.argc == 0) {
        snprintf(err, errlen, r->image.rec ? "no command: the image has no Entrypoint or Cmd; "
                                             "airlock run [options] -- CMD [ARGS...]"
                                           : "no command: airlock run [options] -- CMD [ARGS...]");
        return -EINVAL;
    }
    env_add_defaults(r);
    r->req.envp = r->env;
    r->req.envc = r->nenv;
    if (r->with_stdin)
        r->req.flags |= AGENT_EXEC_F_STDIN;
    return 0;
}
