/* A container's VM: an `airlock sandbox-vm` booted from the bundle's root
 * disk (vmm/runtime/root_disk.h) with the agent disk as /init, the way the
 * sandbox daemon boots its VMs (vmm/sandbox/sandbox_boot.h), shaped by
 * config.json:
 *   - linux.resources.memory.limit is the guest's RAM (at least
 *     CONTAINER_VM_MIN_MIB; the container's cgroup adds the monitor's
 *     overhead on top); cpu quota/period give the vCPUs (rounded up) and
 *     the VM's cpu.max;
 *   - annotations io.airlock.allow and io.airlock.allow-ip (rules
 *     separated by commas or spaces) are its egress allowlist, as
 *     `--allow`/`--allow-ip` (docs/egress.md); nothing else leaves;
 *   - bind mounts of folders become `--mount SRC:DEST[:ro|:rw]` (a :rw
 *     one is copy-on-write: the guest's writes never reach the host);
 *     bind mounts of single files (Docker's and Podman's /etc/hosts,
 *     /etc/resolv.conf, /etc/hostname) are copied into the guest once it
 *     answers; /proc, /sys, /dev, cgroup, tmpfs and the like are the
 *     guest kernel's own and are left alone.
 * Its folder (agent.sock, vm.log, audit) is ROOT/vm/<16 hex>, short
 * enough for a Unix socket's path whatever the container id. */
#ifndef AIRLOCK_RUNTIME_CONTAINER_VM_H
#define AIRLOCK_RUNTIME_CONTAINER_VM_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/runtime/oci_config.h"
#include "vmm/sandbox/registry.h"

#define CONTAINER_VM_MIN_MIB 128
#define CONTAINER_VM_MAX_CPUS 16
/* The disks of folders a container's VM can take: its 8 virtio slots
 * less its root disk, airlock's agent disk and the vsock device (bind
 * mounts of one folder and read-only flag share one). */
#define CONTAINER_VM_FOLDER_DISKS 5
#define CONTAINER_VM_ALLOW_ANNOTATION "io.airlock.allow"
#define CONTAINER_VM_ALLOW_IP_ANNOTATION "io.airlock.allow-ip"

/* The VM's shape from the config, checked before anything starts: 0, or
 * -1 with err naming the field. */
int container_vm_shape(const struct oci_config *c, unsigned *mem_mib, unsigned *cpus, char *err,
                       size_t cap);

/* Whether the annotations allow any egress. */
bool container_vm_egress(const struct oci_config *c);

/* Boots the VM of mem MiB and cpus vCPUs (container_vm_shape's, or a
 * pod's: vmm/runtime/pod.h) with *spare_disks empty disk slots less one
 * for each folder mounted (*spare_disks says how many it got; sb is
 * filled: dir, sock, pid, control_fd), waits for its agent, mounts the
 * folders and copies the files in.  Call from the process that is to own
 * the VM (the init stand-in): it dies with that process.  With cgroup
 * (the container's cgroup folder, or NULL), the VM process joins it
 * (`--cgroup`), beside the stand-ins.  0, or -1 with err. */
int container_vm_boot(const char *root, const struct oci_config *c, const char *disk,
                      const char *cgroup, unsigned mem, unsigned cpus, unsigned *spare_disks,
                      struct sandbox *sb, char *err, size_t cap);

struct stat;
/* Host file fd (st its fstat) into the guest at `path` with its mode,
 * root's, over agent connection conn, its folders made first (0755).
 * 0 or -errno. */
int container_vm_put(int conn, const char *path, int fd, const struct stat *st);

/* After the VM's stand-in is gone: its VM process killed (it dies with
 * the stand-in anyway) and its folder removed, which the VM process
 * removes itself only when it ends cleanly.  `state` is the container's
 * state.json (vm_sock, vm_pid). */
void container_vm_forget(const json_t *state);

#endif
