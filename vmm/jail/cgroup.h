/* cgroup v2 limits for the VM process: memory.max, cpu.max, pids.max.
 *
 * The VM process (the child vmm/jail/detach.c forks) creates
 * /sys/fs/cgroup/airlock/vm-<pid of airlock's parent process> and moves
 * itself in while it is still root and single-threaded, before it touches
 * guest RAM, so every page of guest memory is charged there.  The parent
 * process, which outlives it, removes the directory at the end.
 *
 * With --cgroup-parent DIR it is DIR/vm-<pid> instead.  With --cgroup DIR
 * (the OCI runtime: a container's cgroup) the VM process joins DIR itself
 * and sets no limits there (its maker did): an engine reads a container's
 * use in the cgroup of the container's pid, and cgroup v2 lets a folder
 * with processes have no child folders with controllers, so the VM and
 * the stand-ins share the one folder.  DIR stays when the VM ends.
 *
 * Where /sys/fs/cgroup is not a writable cgroup2 mount (a cgroup v1 or
 * hybrid host, a container without delegation, no root) the VM runs
 * without these limits and airlock says so on stderr, once. */
#ifndef AIRLOCK_JAIL_CGROUP_H
#define AIRLOCK_JAIL_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CGROUP_ROOT "/sys/fs/cgroup"
#define CGROUP_PARENT CGROUP_ROOT "/airlock"

/* What the monitor itself needs on top of guest RAM: its heap (virtqueue
 * bounce buffers, egress relay buffers), the touched parts of thread
 * stacks, and the kernel memory KVM charges to the process (vCPU state,
 * page tables for guest RAM: ~2 MiB per GiB).  Measured use is well under
 * 16 MiB for one vCPU; 64 MiB leaves room for many vCPUs and relays
 * without letting a runaway monitor take the host. */
#define CGROUP_MONITOR_OVERHEAD (64ULL << 20)

struct cgroup_limits {
    uint64_t memory_max;  /* bytes */
    unsigned cpu_pct;     /* cpu.max: percent of one CPU; 0 = "max" */
    unsigned pids_max;    /* threads of the VM process */
};

struct cgroup {
    char dir[512];    /* empty: no cgroup for this VM */
    char parent[488]; /* CGROUP_PARENT, or --cgroup-parent's folder */
    bool join;        /* dir is --cgroup's: joined as it is, never removed */
};

/* The directory name for the VM of airlock process `owner` under parent
 * (NULL: CGROUP_PARENT), no syscalls. */
void cgroup_name(struct cgroup *cg, const char *parent, pid_t owner);

/* dir is the existing folder `dir`, joined as it is (--cgroup). */
void cgroup_join_name(struct cgroup *cg, const char *dir);

/* Creates the directory, sets the limits, moves the calling process in
 * (with cg->join: only moves it in).
 * 0, or -errno with `why` saying which step failed (the directory is
 * removed again then). */
int cgroup_enter(const struct cgroup *cg, const struct cgroup_limits *lim, char *why,
                 size_t whylen);

/* value into the cgroup file dir/name: 0 or -errno. */
int cgroup_write(const char *dir, const char *name, const char *value);

/* Delegates the memory, cpu and pids controllers to dir's children
 * (cgroup.subtree_control; already enabled is fine).  0, or -errno with
 * why naming the file. */
int cgroup_delegate(const char *dir, char *why, size_t whylen);

/* Removes the directory.  With `vm_gone` false the VM process may still be
 * ending: a short-lived helper process retries until it is empty (the
 * kernel refuses to remove a populated cgroup).  Call only outside the
 * VM's PID namespace, from the process that outlives the VM. */
void cgroup_remove(const struct cgroup *cg, bool vm_gone);

#endif
