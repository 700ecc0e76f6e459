/* A container's cgroup (config.json's linux.cgroupsPath), cgroup v2 only:
 *   cgroupfs form "/a/b" (or "a/b"): /sys/fs/cgroup/a/b;
 *   systemd form "slice:prefix:name" (--systemd-cgroup):
 *     /sys/fs/cgroup/<slice path>/<prefix>-<name>.scope, a slice "a-b.slice"
 *     nested as a.slice/a-b.slice, as systemd lays them out.
 * The folder is made with the memory, cpu and pids controllers delegated
 * to it from the root down, its limits set (memory.max: the guest's RAM
 * plus the monitor's overhead, so the caller's OOM watcher and `docker
 * stats` see the VM's real use against it; cpu.max from the quota), and
 * the stand-ins go into its leaf "standin" (cgroup v2 lets no process sit
 * beside child cgroups).  Where /sys/fs/cgroup is no writable cgroup2
 * mount, there is no cgroup and the runtime logs a warning. */
#ifndef AIRLOCK_RUNTIME_CONTAINER_CGROUP_H
#define AIRLOCK_RUNTIME_CONTAINER_CGROUP_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/runtime/oci_config.h"

/* The folder of cgroupsPath `path` into out: 0, or -1 with err. */
int container_cgroup_path(const char *path, bool systemd, char *out, size_t cap, char *err,
                          size_t errcap);

/* Makes it for a VM of mem_mib: 0 (out is the folder; "" when cgroups are
 * not usable here), or -1 with err.  The cpu limit comes once the VM has
 * booted (container_cgroup_update): a small quota would starve the boot. */
int container_cgroup_make(const char *path, bool systemd, unsigned mem_mib, char *out, size_t cap,
                          char *err, size_t errcap);

/* Moves the calling process into the folder's "standin" leaf. */
int container_cgroup_join(const char *dir, char *err, size_t cap);

/* cgroup.freeze of the folder: 1 frozen, 0 thawed.  0 or -errno. */
int container_cgroup_freeze(const char *dir, bool frozen);

/* Writes linux.resources' limits (update --resources): 0 or -1 with err. */
int container_cgroup_update(const char *dir, const struct oci_config *c, char *err, size_t cap);

/* The pids of every process in the folder and its children (ps). */
unsigned container_cgroup_pids(const char *dir, int *pids, unsigned cap);

/* Removes the folder (and its leaves) once empty, waiting up to 5 s. */
void container_cgroup_remove(const char *dir);

#endif
