/* One VM per Kubernetes pod (docs/kubernetes.md, "A pod is one VM").
 *
 * containerd's CRI plugin marks a pod's sandbox (pause) container and the
 * pod's other containers by annotations.  The sandbox container boots the
 * pod's VM, with POD_SPARE_DISKS spare disk slots (virtio-blk devices of
 * capacity 0: no device is ever hot-plugged); each other container of the
 * pod (a member) fills a slot with its root disk, and its processes run in
 * the pod's VM in mount and PID namespaces of their own, sharing the VM's
 * network namespace: the pod's localhost, as under runc.
 *
 * The sandbox container's init stand-in serves POD_SOCK in the VM's
 * folder (vmm/runtime/pod_server.c).  A member's init stand-in connects
 * (pod_join), hands over its root disk (read only) and an empty overlay
 * file, gets a slot, and keeps the connection as long as it lives: when
 * the connection closes, however the stand-in ended (SIGKILL included),
 * the pod ends the member in the guest (its processes killed, its root
 * unmounted) and empties the slot, as a container's own VM dies with its
 * stand-in.  Anything else (Docker, Podman, ctr) keeps a VM per
 * container. */
#ifndef AIRLOCK_RUNTIME_POD_H
#define AIRLOCK_RUNTIME_POD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/runtime/oci_config.h"

#define POD_TYPE_ANNOTATION       "io.kubernetes.cri.container-type"
#define POD_SANDBOX_ID_ANNOTATION "io.kubernetes.cri.sandbox-id"
/* The pod VM's RAM in MiB when its sandbox container has no memory limit
 * (containerd 1.6 gives it none): a pod annotation, passed on by the
 * runtime handler's pod_annotations (docs/kubernetes.md). */
#define POD_MEMORY_ANNOTATION     "io.airlock.pod-memory-mib"
#define POD_CPUS_ANNOTATION       "io.airlock.pod-cpus"
/* Guest RAM a pod gets without either: untouched guest memory costs the
 * host nothing, so room for a few containers is cheap. */
#define POD_DEFAULT_MEM_MIB       1024
/* At most this many containers at once besides the pause container: the
 * VM's 8 virtio slots less its root disk, the agent's disk and the vsock
 * device (fewer when the pause container has folders mounted). */
#define POD_SPARE_DISKS           5
#define POD_SOCK                  "pod.sock"
/* The guest's folders: a member's root is the agent's
 * AGENT_CTR_DIR/NAME/root; what the runtime copies in for it goes to
 * POD_GUEST_FILES/NAME (a bind's source may not be in a container's
 * folder); emptyDir volumes are POD_GUEST_VOLUMES/NAME, one folder for
 * every container naming it. */
#define POD_GUEST_FILES           "/run/airlock/pod/files"
#define POD_GUEST_VOLUMES         "/run/airlock/pod/volumes"
/* A root disk's serial (what the guest matches the slot by) is at most
 * this long (virtio 1.2 §5.2.6). */
#define POD_SERIAL_MAX            20
/* How long a fill or an empty may take the VM (the nested lab is slow). */
#define POD_CONTROL_MS            30000

enum pod_role {
    POD_NONE,    /* not a pod's: a VM of its own */
    POD_SANDBOX, /* the pod's sandbox container: boots the pod's VM */
    POD_MEMBER,  /* one of the pod's containers: runs in the pod's VM */
};

/* The role the config's annotations give; for a member, *sandbox_id is
 * its pod's sandbox container (borrowed from c).  POD_NONE without the
 * annotations; -1 with err naming the annotation when it is malformed. */
int pod_role_of(const struct oci_config *c, const char **sandbox_id, char *err, size_t cap);

/* The pod VM's RAM and vCPUs, from *mem_mib and *cpus as
 * container_vm_shape gave them: the sandbox container's limits when it
 * has them, else the annotations, else POD_DEFAULT_MEM_MIB and one vCPU.
 * 0, or -1 with err naming the bad annotation. */
int pod_vm_shape(const struct oci_config *c, unsigned *mem_mib, unsigned *cpus, char *err,
                 size_t cap);

/* A member's name in the guest (the agent's container name: the OCI id,
 * which containerd makes 64 hex digits) and its root disk's serial (the
 * id's first POD_SERIAL_MAX characters).  0, or -1 with err when the id
 * cannot be one. */
int pod_member_names(const char *id, char *name, size_t name_cap, char *serial, char *err,
                     size_t cap);

/* A member's stand-in: connects to the pod's `pod_sock`, hands over
 * `disk` (opened read only) and an empty unlinked overlay file made in
 * $TMPDIR (/tmp), and waits for the slot.  The connection (keep it open
 * while the container lives: closing it ends the container), or -1 with
 * err. */
int pod_join(const char *pod_sock, const char *name, const char *serial, const char *disk,
             unsigned *slot, char *err, size_t cap);

/* Over a pod_join connection: whether the pod VM's kernel killed guest
 * pid `pid` (the member's first process) for want of memory.  1 yes, 0
 * no, -errno. */
int pod_oom_asked(int conn, uint32_t pid);

#endif
