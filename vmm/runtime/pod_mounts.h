/* A pod member's mounts (config.json's bind mounts) in the pod's VM,
 * which was booted before the member existed, so no mount can be given
 * to it at boot as a container's own VM gets them (container_vm.h):
 *   - an emptyDir volume (kubelet's .../volumes/kubernetes.io~empty-dir/
 *     NAME) is the guest folder POD_GUEST_VOLUMES/NAME, bound into every
 *     container of the pod that names it: they share it, as under runc;
 *   - any other file or folder (a configMap, a secret, the service
 *     account's token, /etc/hosts, /etc/resolv.conf) is copied into
 *     POD_GUEST_FILES/NAME/N when the container is created and
 *     bound from there: a copy, so later changes on the host are not seen
 *     (kubelet's updates to a mounted configMap do not arrive);
 *   - /proc, /sys, /dev and the like are the guest's own, as in
 *     container_vm.h.
 * The binds go with the member's first process (its EXEC). */
#ifndef AIRLOCK_RUNTIME_POD_MOUNTS_H
#define AIRLOCK_RUNTIME_POD_MOUNTS_H

#include <stddef.h>

#include "guest/agent/proto.h"
#include "vmm/agent_client/agent_client.h"
#include "vmm/runtime/oci_config.h"

#define POD_EMPTY_DIR "/volumes/kubernetes.io~empty-dir/"

struct pod_binds {
    struct agent_bind bind[AGENT_CTR_MAX_BINDS];
    char source[AGENT_CTR_MAX_BINDS][128]; /* the guest paths the binds point at */
    unsigned n;
};

/* Copies what must be copied over the agent at agent_sock and fills pb
 * for member `name`.  0, or -1 with err naming the mount. */
int pod_mounts_prepare(const char *agent_sock, const char *name, const struct oci_config *c,
                       struct pod_binds *pb, char *err, size_t cap);

#endif
