/* A container process's host stand-in: the process whose pid the engine
 * gets (the pid file), which runs the real process in the VM through
 * the agent and is alive exactly as long as it:
 *   - its stdin, stdout and stderr are the guest process's (relayed);
 *   - every signal it can catch is sent on to the guest process alone,
 *     as runc's `kill` reaches a container's process and not its
 *     children; one queued with STANDIN_SIG_ALL as its value
 *     (sigqueue(3): `kill --all`) goes to the process's group (SIGKILL
 *     cannot be caught: the stand-in dies, and the VM, which dies with
 *     it, takes the process along);
 *   - with a terminal, the guest process gets a pty of its own and the
 *     stand-in's terminal's size, and SIGWINCH sends the new size;
 *   - it exits with the guest process's status, 128+N for signal N, as
 *     a shell reports it; 127/126 when the program was not found or not
 *     executable, 125 when the VM or its agent failed. */
#ifndef AIRLOCK_RUNTIME_STANDIN_H
#define AIRLOCK_RUNTIME_STANDIN_H

#include <stdbool.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/runtime/oci_config.h"

/* sigqueue's value that makes a signal `kill --all`'s (above). */
#define STANDIN_SIG_ALL 0x616c6c /* "all" */

/* With a terminal (process.terminal): a pty whose master goes to the
 * caller's console socket (one SCM_RIGHTS fd, as runc sends it), sized
 * as the process asks; the slave, or -1 with err. */
int standin_console(const char *socket_path, const struct oci_process *p, char *err, size_t cap);
/* In the stand-in (a session leader): the slave as its controlling
 * terminal and stdio, in raw mode (the guest's pty does the terminal's
 * work).  0, or -1 with err. */
int standin_take_console(int slave, char *err, size_t cap);

/* Where a container's process runs: the VM whose agent is at `sock`;
 * for a pod's member (vmm/runtime/pod.h), its container there. */
struct standin_target {
    const char *sock;
    /* the container's annotations allow some egress: the process also
     * gets the guest proxy's variables that its env does not set, as
     * every airlock command does (vmm/agent_client/command_defaults.h) */
    bool egress;
    const char *container;   /* a pod member's name in the guest, or NULL */
    const char *root_serial; /* its first process: its root disk's serial */
    const struct agent_bind *binds; /* ... and the binds made for it */
    unsigned nbinds;
    uint32_t *guest_pid; /* gets the process's pid in the guest (the agent's view), or NULL */
    /* the container's config: its first process's request carries its
     * linux settings (container_linux.h); NULL: none */
    const struct oci_config *config;
};

/* Runs p in t's VM, with fds 0, 1 and 2 as its stdio; the status to exit
 * with.  The container's first process (init) is PID 1 of a new PID
 * namespace in the guest (a member's: with mount namespace and root of
 * its own), the others join it.
 * started_fd (-1: none) gets the byte STANDIN_RUNNING once the process
 * runs in the guest (execve done) and is closed then, or when it could
 * not run: `start` returns only then, as runc's does, so a signal sent
 * after it finds the process. */
#define STANDIN_RUNNING 'r'
int standin_run(const struct standin_target *t, const struct oci_process *p, bool init,
                int started_fd);

#endif
