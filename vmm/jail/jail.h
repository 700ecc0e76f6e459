/* The jail the VM process enters once everything it needs is open and
 * before its first thread starts (docs/design.md rule 5; docs/security.md "The jail").
 *
 * When airlock runs as root (or with --jail, which fails if it cannot):
 *   - the VM process is PID 1 of a new PID namespace: the parent unshares
 *     CLONE_NEWPID just before vmm/jail/detach.c forks it (unshare(CLONE_NEWPID)
 *     moves only children), then returns to its own namespace;
 *   - in the child: new mount, IPC, UTS and network namespaces (no network
 *     at all: egress goes through the broker, forked earlier, outside),
 *     pivot_root into an empty read-only tmpfs, inherited fds closed, the
 *     environment wiped, rlimits (core 0, processes and files to what it
 *     needs), and a drop to an unprivileged uid/gid with no groups;
 *   - with --vsock-uds the parent, outside the jail, dials PATH_<port> for
 *     the guest's connections and removes PATH at the end;
 *   - cgroup v2 limits (vmm/jail/cgroup.h) where the host has them.
 * Only kernel features: no setuid helper, nothing outside this binary. */
#ifndef AIRLOCK_JAIL_JAIL_H
#define AIRLOCK_JAIL_JAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/jail/cgroup.h"
#include "vmm/jail/detach.h"

enum jail_mode { JAIL_AUTO, JAIL_ON, JAIL_OFF }; /* AUTO: jail when root */

/* The default uid and gid of a jail: JAIL_ID_BASE + the pid of airlock's
 * parent process.  Unique while the VM lives (the parent outlives it), so
 * two VMs never share an identity (one jailed monitor cannot signal
 * another, RLIMIT_NPROC counts only this VM's threads), and far above the
 * ranges distributions hand out (system users, subuid ranges from 100000,
 * systemd's dynamic users at 61184..65519); pid_max is at most 2^22. */
#define JAIL_ID_BASE 0x7f000000u

struct jail_options {
    enum jail_mode mode;
    bool has_uid, has_gid;
    uint32_t uid, gid;
    unsigned cpu_quota_pct; /* --cpu-quota; 0: no cpu limit */
    const char *cgroup_parent; /* --cgroup-parent; NULL: CGROUP_PARENT */
    const char *cgroup_join;   /* --cgroup: this folder as it is; NULL: one of our own */
};

/* The flags, for both `airlock boot` and `airlock run`: a parser puts
 * JAIL_LONGOPTS(first) in its option table and hands codes first ..
 * first + JAIL_NOPTS - 1 to jail_parse_flag(code - first). */
#define JAIL_NOPTS 7
#define JAIL_LONGOPTS(first)                                                           \
    {"jail", no_argument, NULL, (first)}, {"no-jail", no_argument, NULL, (first) + 1}, \
    {"uid", required_argument, NULL, (first) + 2},                                     \
    {"gid", required_argument, NULL, (first) + 3},                                     \
    {"cpu-quota", required_argument, NULL, (first) + 4},                               \
    {"cgroup-parent", required_argument, NULL, (first) + 5},                           \
    {"cgroup", required_argument, NULL, (first) + 6}
#define JAIL_USAGE                                                                      \
    "  --jail            jail the VM process (namespaces, empty root, no network,\n"   \
    "                    unprivileged uid, rlimits, cgroup limits; the default as\n"  \
    "                    root); exit 125 if it cannot (it needs root)\n"              \
    "  --no-jail         do not, even as root\n"                                        \
    "  --uid N, --gid N  the jail's uid and gid (default: 2130706432 + airlock's pid)\n" \
    "  --cpu-quota PCT   cgroup cpu.max: PCT percent of one CPU (default: no limit)\n"  \
    "  --cgroup-parent DIR  the VM's cgroup is DIR/vm-PID (a cgroup2 folder whose\n"  \
    "                    controllers its caller delegated, e.g. a container's),\n"   \
    "                    not /sys/fs/cgroup/airlock/vm-PID\n"                          \
    "  --cgroup DIR      the VM process joins the cgroup2 folder DIR as it is: no\n"   \
    "                    folder and no limits of its own (a container's cgroup,\n"    \
    "                    whose limits its maker set, counts the VM itself)\n"

/* 0, or -EINVAL with err naming the flag and value. */
int jail_parse_flag(struct jail_options *j, int which, const char *val, char *err, size_t errlen);

/* Call first thing in main(): notes the fds airlock was started with, the
 * ones the jail closes (everything airlock opens itself, it needs). */
void jail_note_inherited_fds(void);
/* ... except this one, given to us on purpose (sandbox-vm --control-fd). */
void jail_keep_fd(int fd);

struct jail {
    bool active;
    uint32_t uid, gid;
    int host_pidns;            /* parent: its own PID namespace, to return to */
    int sock[2];               /* the vsock dialer socketpair (detach_helper) */
    const char *vsock_path;    /* parent: PATH_<port> to dial, PATH to remove */
    bool remove_vsock_path;
    bool limit;                /* try cgroup limits */
    struct cgroup cg;
    char cg_warning[224];      /* why the cgroup limits are missing, for jail_enter */
    struct detach_helper helper;
    const struct jail_options *opt;
};

/* Parent, before the detach fork: decides whether to jail, checks the
 * options, unshares the PID namespace, makes the helper for detach_start.
 * 0, or -errno with err saying why the jail cannot be (exit 125). */
int jail_prepare(struct jail *j, const struct jail_options *o, const char *vsock_path,
                 char *err, size_t errlen);

/* Child: cgroup limits (guest RAM plus `extra_bytes` plus the monitor's
 * overhead; `nthreads` tasks).  Never fails: where cgroups are not
 * writable the VM runs unlimited, and jail_enter prints the one-line
 * warning (after every input check, so a bad input stays one line). */
void jail_limit(struct jail *j, uint64_t guest_bytes, uint64_t extra_bytes, unsigned nthreads);

/* Child, single-threaded, everything open: warns about missing cgroup
 * limits, then enters the jail (when active).  `nthreads`
 * bounds RLIMIT_NPROC.  The socket the vsock host dials through is
 * *dial_sock (-1 when not jailed).  0 or -errno with err. */
int jail_enter(struct jail *j, unsigned nthreads, int *dial_sock, char *err, size_t errlen);

#endif
