/* Report the exit status before teardown.  Destroying a KVM VM takes
 * milliseconds (an SRCU grace period, unmapping guest RAM); the caller
 * should not wait for that.  So the VM runs in a child process: the parent
 * (the process the user started) exits with the status as soon as the child
 * reports it, while the child, its stdio already closed, tears down. */
#ifndef AIRLOCK_JAIL_DETACH_H
#define AIRLOCK_JAIL_DETACH_H

#include <stdbool.h>

/* What the parent does for the child besides waiting (vmm/jail/jail.c: the
 * jailed child cannot reach the filesystem, so the parent, outside the
 * jail, connects --vsock-uds sockets for it and cleans up after it). */
struct detach_helper {
    int sock[2]; /* a socketpair: [0] stays in the parent, [1] in the child; -1: none */
    /* Parent: sock[0] is readable.  Negative: stop watching it. */
    int (*serve)(void *opaque, int sock);
    /* Parent: just before it exits; `child_gone` when the child has ended
     * (else it is still tearing down). */
    void (*done)(void *opaque, bool child_gone);
    void *opaque;
    /* Parent, optional: the child's status is known (reported, or its own
     * exit): returns the status to exit with (vmm/cli/run_copy.h names the
     * --copy-out files here).  Called before `done`. */
    int (*finish)(void *opaque, int status);
    void *finish_opaque;
    /* `finish` may unpack a --copy-out folder beside its HOST: the parent
     * waits under the "copyout" seccomp list instead of "detach". */
    bool finish_unpacks;
    /* Parent, optional, with finish_opaque: once, before its seccomp filter goes on (run -t
     * puts the caller's terminal in raw mode here, so that only this
     * process, which `finish` always ends, ever holds it so). */
    void (*start)(void *opaque);
    /* Parent, optional: the caller's terminal changed size (SIGWINCH,
     * taken from the signalfd only when this is set). */
    void (*winch)(void *opaque);
};

/* Forks (`h` may be NULL: no helper).  In the child, returns 0 and the caller goes on to run the VM.  The
 * parent never returns: it forwards SIGINT/SIGTERM/SIGHUP to the child (and
 * gives SIGWINCH to h->winch) and
 * exits with the status the child reports (or the child's own exit status
 * if it ends without reporting, 125 if it was killed).  Returns -errno if
 * the fork fails (the caller then just runs in this process). */
int detach_start(const struct detach_helper *h);

/* Child: arms PR_SET_PDEATHSIG (SIGKILL) and exits at once if the parent
 * is already gone.  detach_start does it; call it again after a uid change,
 * which clears the death signal. */
void detach_watch_parent(void);

/* Child: hands `status` to the parent, then points stdin/stdout/stderr at
 * /dev/null so nobody reading our output waits for the teardown. */
void detach_report(int status);

#endif
