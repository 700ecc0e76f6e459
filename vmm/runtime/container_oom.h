/* A guest OOM kill made visible to the engine.
 *
 * Engines learn of a container's OOM kills from the kernel's count of
 * them in the container's cgroup: containerd's runc shim (pkg/oom/v2)
 * watches memory.events with inotify and publishes a TaskOOM event when
 * its oom_kill grows, and the CRI then reports the exited container's
 * reason as "OOMKilled"; Docker and Podman read the same count.  In a
 * VM the container's memory is the guest's RAM, so the killer is the
 * guest's kernel, and the host cgroup's count never moves.
 *
 * So when the container's first process has ended, the init stand-in
 * asks the guest (container_oom_in_guest) and, if its kernel killed a
 * process, makes the host count one kill after the VM is gone
 * (container_oom_report): a child of the stand-in, the only process of
 * the folder the killer may choose (oom_score_adj 1000, the stand-in
 * itself -1000), allocates past a memory.max lowered for the moment to
 * a few MiB above what the folder holds, and the host kernel kills it.
 * The counter then moves as under runc, by one, and the limits are put
 * back.  docs/kubernetes.md says more. */
#ifndef AIRLOCK_RUNTIME_CONTAINER_OOM_H
#define AIRLOCK_RUNTIME_CONTAINER_OOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the kernel of the VM behind agent socket `sock` killed a
 * process for want of memory.  A guest kernel with event counters says
 * so itself: its /proc/vmstat's oom_kill above 0.  Airlock's guest
 * kernel has none, so its log says it: the OOM killer's "Out of memory:
 * Killed process" line, read from /proc/kmsg (the read takes the lines
 * it reads; the VM is about to end).  The VM is the container's alone,
 * so any such kill was the container's, as any kill in its cgroup is
 * under runc.  False when the agent does not answer.  Not for a pod's VM,
 * whose kills are its containers' each (pod_server_oom_killed). */
bool container_oom_in_guest(const char *sock);

/* The guest processes (pids as the agent sees them) the kernel of the VM
 * behind `sock` killed for want of memory since the last call, from its
 * log (/proc/kmsg: the read takes the lines it reads, so a pod's stand-in
 * is its one reader and answers its members, vmm/runtime/pod_server.c):
 * up to max into pids; how many, or -errno. */
int container_oom_killed(const char *sock, uint32_t *pids, unsigned max);

/* One OOM kill in cgroup folder `dir`'s memory.events, as described
 * above; the VM must have ended (its memory would be the killer's
 * first choice otherwise).  0, or -1 with err. */
int container_oom_report(const char *dir, char *err, size_t cap);

#endif
