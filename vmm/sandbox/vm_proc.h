/* A sandbox's VM process: `airlock sandbox-vm` (the same binary), started
 * so that it dies with the daemon, reached through its --vsock-uds socket. */
#ifndef AIRLOCK_SANDBOX_VM_PROC_H
#define AIRLOCK_SANDBOX_VM_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Starts the launcher thread every VM process is forked from, where no
 * spawner runs (vmm/util/spawner.h: `airlock serve` has one, and its VM
 * processes are forked there instead, outside the daemon's filter).  The VM
 * processes get SIGKILL when the thread that forked them ends
 * (PR_SET_PDEATHSIG follows the forking thread, not the process), so
 * they are forked by this one thread, which lives as long as the daemon,
 * and never by a connection's thread.  0 or -errno. */
int vm_proc_launcher_start(void);

/* The fd number a VM process finds its control socket at
 * (`sandbox-vm --control-fd 3`). */
#define VM_PROC_CONTROL_FD 3
#define VM_PROC_CONTROL_FD_TEXT "3"

/* Where the extra fds of a spawn go: extra[i] at VM_PROC_EXTRA_FD + i (the
 * pipes a create's secret values arrive on: `--secret NAME=fd:4,...`, then
 * the egress broker's allowlist channel: `--egress-control-fd N`). */
#define VM_PROC_EXTRA_FD 4
#define VM_PROC_MAX_EXTRA 9

/* Forks and execs /proc/self/exe with argv (argv[0] "airlock"), stdin and
 * stdout on /dev/null, stderr into log_fd, control_fd (unless -1) as
 * VM_PROC_CONTROL_FD, extra[0, nextra) from VM_PROC_EXTRA_FD on, in its
 * own process group, with SIGKILL when the daemon dies; by the spawner
 * when one runs, still as our child.  The pid, or -errno. */
pid_t vm_proc_spawn(char *const argv[], int log_fd, int control_fd, const int *extra,
                    unsigned nextra);

/* Waits until the agent answers on `sock` and reseeds it (fresh entropy
 * and the wall clock), at most timeout_ms.  0; -ECHILD when the process
 * ended first (*status has its wait status); -ETIMEDOUT; or -errno, with
 * err saying what went wrong. */
int vm_proc_wait_ready(pid_t pid, const char *sock, unsigned timeout_ms, int *status, char *err,
                       size_t errlen);

/* Fresh entropy and the host's clock for the guest (RESEED): every
 * sandbox gets them before its first command, as every `airlock run`
 * does, so VMs restored from one snapshot share no random state.  0, or
 * -errno with err saying why. */
int vm_proc_reseed(const char *sock, char *err, size_t errlen);

/* A new connection to the agent (hybrid vsock "CONNECT 1024"), or -errno. */
int vm_proc_dial(const char *sock);
/* ... to any guest vsock port (the forward service's, 1025), or -errno. */
int vm_proc_dial_port(const char *sock, uint32_t port);

/* SIGTERM, then SIGKILL after grace_ms, and reaps it. */
void vm_proc_stop(pid_t pid, unsigned grace_ms);

/* Whether it has ended (reaped here, *status set). */
int vm_proc_ended(pid_t pid, int *status);

#endif
