/* Report the exit status before teardown.  Destroying a KVM VM takes
 * milliseconds (an SRCU grace period, unmapping guest RAM); the caller
 * should not wait for that.  So the VM runs in a child process: the parent
 * (the process the user started) exits with the status as soon as the child
 * reports it, while the child, its stdio already closed, tears down. */
#ifndef AIRLOCK_VMM_DETACH_H
#define AIRLOCK_VMM_DETACH_H

/* Forks.  In the child, returns 0 and the caller goes on to run the VM.  The
 * parent never returns: it forwards SIGINT/SIGTERM/SIGHUP to the child and
 * exits with the status the child reports (or the child's own exit status
 * if it ends without reporting, 125 if it was killed).  Returns -errno if
 * the fork fails (the caller then just runs in this process). */
int detach_start(void);

/* Child: hands `status` to the parent, then points stdin/stdout/stderr at
 * /dev/null so nobody reading our output waits for the teardown. */
void detach_report(int status);

#endif
