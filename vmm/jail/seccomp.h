/* The monitor's seccomp-bpf allowlists, one per thread kind, installed once
 * the VM is built and before the first guest instruction runs (docs/design.md
 * rule 5).  Everything a thread needs is opened before its filter goes on;
 * a syscall not on its list kills the whole process (SECCOMP_RET_KILL_PROCESS),
 * so a guest that subverts device code gets a dead monitor, not a shell.
 *
 * Each allowed syscall carries a one-line reason, printed by
 * `airlock surface`.  ioctl is filtered by request number: a vCPU thread may
 * only KVM_RUN (and read registers for a diagnosis, raise the UART's IRQ);
 * the event loop may only raise IRQ lines.
 *
 * Thread kinds:
 *   vcpu    KVM_RUN and the device handlers reached from PIO/MMIO exits
 *   loop    the event loop: virtio queues (blk I/O, vsock), console,
 *           signals, host vsock clients
 *   worker  the command's agent client and egress relays (started before
 *           the loop installs its filter, so the worker list is theirs alone)
 *   broker  the egress broker process (vmm/egress/egress_broker.h), every thread
 *           of it: resolves allowed names, connects, passes sockets back
 *   detach  the parent vmm/jail/detach.h leaves waiting for the VM's status
 *   copyout the same parent when the run has a --copy-out: also unpacks a
 *           folder's tar beside HOST (vmm/cli/run_copy_tree.c) and names it
 *   snapshot  `airlock snapshot`'s thread: reads KVM state (GET ioctls
 *           only) and writes the snapshot files opened before the jail
 *   daemon  `airlock serve`, every thread of it (installed with TSYNC once
 *           it has started: vmm/jail/daemon_lock.h); its children are made
 *           by a spawner outside it (vmm/util/spawner.h)
 * Filters stack (a thread created after its creator's filter inherits it
 * and may add its own): the egress connection threads, created by a
 * worker, are bound by the worker list twice over. */
#ifndef AIRLOCK_JAIL_SECCOMP_H
#define AIRLOCK_JAIL_SECCOMP_H

#include <stdbool.h>

enum seccomp_kind {
    SECCOMP_VCPU, SECCOMP_LOOP, SECCOMP_WORKER, SECCOMP_BROKER, SECCOMP_DETACH,
    SECCOMP_SNAPSHOT, SECCOMP_COPYOUT, SECCOMP_DAEMON, SECCOMP_KINDS
};

enum seccomp_mode {
    SECCOMP_MODE_KILL, /* default: a forbidden syscall kills the process */
    SECCOMP_MODE_TRAP, /* --seccomp trap: report which syscall, then exit 125 */
    SECCOMP_MODE_OFF,  /* --seccomp off: no filter (debugging; says so on stderr) */
};

/* The mode for every later seccomp_apply in this process. */
void seccomp_set_mode(enum seccomp_mode mode);
enum seccomp_mode seccomp_get_mode(void);
/* "kill" / "trap" / "off" -> mode; -EINVAL otherwise. */
int seccomp_parse_mode(const char *s, enum seccomp_mode *mode);

/* Installs the filter for `kind` on the calling thread.  0 or -errno. */
int seccomp_apply(enum seccomp_kind kind);

/* How many syscalls the kind allows. */
unsigned seccomp_count(enum seccomp_kind kind);
const char *seccomp_kind_name(enum seccomp_kind kind);

/* The allowlists as `airlock surface` prints them: per thread kind, each
 * allowed call with its reason and its argument filter spelled out. */
struct seccomp_syscall {
    const char *name;   /* "read" */
    const char *reason; /* one line: why this thread kind needs it */
};

struct seccomp_list {
    const char *thread; /* "vcpu", "loop", ... */
    const struct seccomp_syscall *calls;
    unsigned ncalls;
};

/* All SECCOMP_KINDS lists, in enum order (static storage). */
const struct seccomp_list *seccomp_lists(void);

#endif
