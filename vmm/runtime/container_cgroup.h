/* A container's cgroup (config.json's linux.cgroupsPath), cgroup v2 only:
 *   cgroupfs form "/a/b" (or "a/b"): /sys/fs/cgroup/a/b;
 *   systemd form "slice:prefix:name" (--systemd-cgroup):
 *     /sys/fs/cgroup/<slice path>/<prefix>-<name>.scope, a slice "a-b.slice"
 *     nested as a.slice/a-b.slice, as systemd lays them out.
 * The folder is made with the memory, cpu and pids controllers delegated
 * to it from the root down and its limits set (memory.max: the guest's
 * RAM plus the monitor's overhead; cpu.max from the quota).  The
 * stand-ins and the VM process (airlock's --cgroup) go into the folder
 * itself, no child of it: an engine reads a container's use (`docker
 * stats`, its OOM watcher) in the cgroup of the pid it was given, the
 * init stand-in's, so that is where the VM must be counted.  Where
 * /sys/fs/cgroup is no writable cgroup2 mount, there is no cgroup and
 * the runtime logs a warning. */
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

/* Moves the calling process into the folder. */
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
