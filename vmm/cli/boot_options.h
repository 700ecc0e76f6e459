/* `airlock boot` options: parsing and the checks that need nothing but the
 * options themselves. */
#ifndef AIRLOCK_CLI_BOOT_OPTIONS_H
#define AIRLOCK_CLI_BOOT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "boot/kernel.h"
#include "vmm/memory/layout.h"
#include "devices/virtio/vsock.h"
#include "vmm/jail/jail.h"

#define BOOT_DEFAULT_CMDLINE "console=ttyS0 reboot=k panic=-1"
#define BOOT_DEFAULT_MEM_MIB 256
#define BOOT_DEFAULT_KVM     "/dev/kvm"

struct snap_state;

struct boot_options {
    const char *kernel;
    const char *initrd;
    const char *cmdline;
    uint64_t mem_mib;
    unsigned cpus;
    const char *console; /* "stdio", "none" or a path */
    const char *kvm_path;
    enum kernel_entry entry;
    bool allow_pvm;
    const char *disks[LAYOUT_VIRTIO_SLOTS]; /* --disk specs, in order */
    unsigned ndisks;
    /* The option a disk came from, for its errors (NULL: "--disk"; airlock
     * run's root is "--image"): the user is told about what they typed. */
    const char *disk_flags[LAYOUT_VIRTIO_SLOTS];
    /* sandbox-vm --spare-disks: empty virtio-blk slots after the disks,
     * filled and emptied while the VM runs (vmm/cli/spare_disks.h) */
    unsigned spare_disks;
    const char *vsock_uds; /* --vsock-uds: NULL = no host socket */
    bool vsock_internal;   /* a vsock device even without --vsock-uds (airlock run) */
    uint64_t cid;          /* --cid, the guest's vsock address */
    struct jail_options jail; /* --jail, --no-jail, --uid, --gid, --cpu-quota */
    uint64_t console_rate_kib, console_max_mib; /* console limits (vmm/kvm/console.h), 0 = none */
    /* run --from-snapshot: the decoded state and its files (opened by the
     * caller; the overlays -1 where a disk has none).  NULL: a cold boot. */
    const struct snap_state *restore;
    int restore_memory_fd;
    int restore_overlay_fd[LAYOUT_VIRTIO_SLOTS];
    /* run --from-snapshot --cold-boot: the snapshot whose disks, overlays
     * (restore_overlay_fd) and shape a fresh boot takes, restore NULL. */
    const struct snap_state *overlays;
};


/* Parses argv (after "boot").  Returns 0, 1 when --help was printed, or
 * -EINVAL with `err` naming the bad option. */
int boot_options_parse(struct boot_options *o, int argc, char **argv, char *err, size_t errlen);

void boot_options_usage(void);

#endif
