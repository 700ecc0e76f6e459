/* `--mount HOSTDIR:GUESTDIR[:ro|:rw]` (docs/mounts.md), as `airlock run`,
 * `airlock sandbox-vm` and `airlock create` take it: one parser, one
 * error text per mistake ("--mount 'a:b': GUESTDIR 'b' is not ..."). */
#ifndef AIRLOCK_CLI_MOUNT_OPTIONS_H
#define AIRLOCK_CLI_MOUNT_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest/agent/proto.h"
#include "vmm/volume/volume_name.h"

/* The flag may be given this often; the VM's virtio slots (8, with the
 * root image and the vsock device) bound the disks further (vm_options.h):
 * mounts of one folder share one (mount_list_owner). */
#define MOUNT_MAX 8

struct mount_spec {
    const char *arg;                       /* as given, for messages */
    const char *flag;                      /* "--mount" or "--volume" */
    bool volume;                           /* --volume: a named volume, not a folder */
    char name[VOLUME_NAME_MAX + 1];        /* --volume's NAME */
    char host[PATH_MAX];                   /* HOSTDIR as given */
    char guest[AGENT_MOUNT_MAX_PATH];
    bool rw;                               /* :rw (--mount's default :ro, --volume's :rw) */
    /* run: the disk made of HOSTDIR as a --disk spec, and its number */
    char disk_spec[PATH_MAX + 16];
    uint32_t device;
};

struct mount_list {
    struct mount_spec m[MOUNT_MAX];
    unsigned n;
};

/* Adds one --mount value: HOSTDIR (no ':') an existing folder when
 * check_host (this process reads it; `airlock create` does not: HOSTDIR is
 * the daemon's, which checks it), GUESTDIR a folder the agent may mount at
 * (agent_mount_path_ok) and not one given before, the mode ro or rw.  0,
 * or -EINVAL with err one line naming the value and what is wrong with
 * it. */
int mount_list_add(struct mount_list *l, const char *arg, bool check_host, char *err,
                   size_t errlen);

/* Adds one `--volume NAME:GUESTDIR[:ro|:rw]` (docs/volumes.md): NAME a
 * volume name (volume_name_ok; whether it exists is the store's to say),
 * not given twice, GUESTDIR as --mount's, read-write unless :ro.  One
 * list with the --mounts: they share the count and the guest folders.  0
 * or -EINVAL with err naming the value. */
int mount_list_add_volume(struct mount_list *l, const char *arg, char *err, size_t errlen);

/* Whose disk --mount i's is: the first --mount of the same HOSTDIR (as
 * given) and mode, i itself when none is before it.  One folder mounted
 * at several GUESTDIRs is one disk, mounted at each (the guest's kernel
 * mounts its one filesystem again: a write through one GUESTDIR shows at
 * the others, even with :rw).  A --volume is its own. */
unsigned mount_list_owner(const struct mount_list *l, unsigned i);

/* How many disks l takes (the entries that own theirs). */
unsigned mount_list_disks(const struct mount_list *l);

#endif
