/* What a snapshot holds besides guest RAM: a plain C picture of the VM at
 * one instant (vCPUs, in-kernel irqchip, PIT, clock, the devices' guest-
 * visible state, and which files it was booted from).  vmm/snapshot/snapshot_file.c
 * turns it into a flattened device tree (libfdt) and back, validating the
 * file before any field is read; vmm/snapshot/vm_snapshot.c fills it from KVM and
 * the devices and puts it back.  Nothing here is trusted on the way in: a
 * state file is user input, and its vCPU registers are as hostile as a
 * guest (KVM checks them), its device fields are checked by the restore. */
#ifndef AIRLOCK_SNAPSHOT_SNAPSHOT_STATE_H
#define AIRLOCK_SNAPSHOT_SNAPSHOT_STATE_H

#include <limits.h>
#include <linux/kvm.h>
#include <stdint.h>

#include "devices/serial.h"
#include "devices/virtio/mmio_snapshot.h"
#include "vmm/kvm/cpuid.h"

#define SNAP_VERSION     2 /* 2: vcpu@N/cpuid */
#define SNAP_MAX_VCPUS   254 /* MPTABLE_MAX_CPUS */
#define SNAP_MAX_MSRS    128
#define SNAP_MAX_CPUID   CPUID_MAX_ENTRIES
#define SNAP_MAX_VIRTIO  8   /* LAYOUT_VIRTIO_SLOTS */
#define SNAP_MAX_DISKS   8
#define SNAP_NAME_MAX    64  /* file names inside the snapshot directory */

struct snap_vcpu {
    struct kvm_regs regs;
    struct kvm_sregs sregs;
    /* KVM_GET_XSAVE's 4 KiB area (struct kvm_xsave's region), as an array:
     * that struct ends in a flexible array member, so it cannot sit in the
     * middle of this one; the bytes and their offset are the same. */
    uint32_t xsave[sizeof(struct kvm_xsave) / sizeof(uint32_t)];
    struct kvm_xcrs xcrs;
    struct kvm_lapic_state lapic;
    struct kvm_mp_state mp_state;
    struct kvm_vcpu_events events;
    struct kvm_debugregs debugregs;
    uint32_t nmsrs;                /* <= SNAP_MAX_MSRS */
    struct kvm_msr_entry msrs[SNAP_MAX_MSRS];
    /* The CPUID airlock gave the vCPU (cpuid_filter): a restore refuses a host
     * whose would differ, since the guest kernel chose its code paths by
     * it (a missing feature would be a #UD or worse inside the guest). */
    uint32_t ncpuid;               /* <= SNAP_MAX_CPUID */
    struct kvm_cpuid_entry2 cpuid[SNAP_MAX_CPUID];
};

/* A disk the VM was booted with: restore refuses a file that changed
 * (size, mtime, inode), since the guest's page cache describes the old one. */
struct snap_disk {
    char path[PATH_MAX];           /* as given at snapshot time, NUL-terminated */
    uint64_t size, ino, dev;
    int64_t mtime_ns;
    uint8_t read_only, cow;        /* 0 or 1 each */
    uint64_t cow_cap;              /* bytes the overlay may hold (cow) */
    char overlay[SNAP_NAME_MAX];   /* cow: the overlay's saved clusters, a file in the
                                      snapshot directory ("" when none) */
};

struct snap_state {
    uint32_t version;              /* SNAP_VERSION */
    uint64_t mem_mib;
    uint32_t ncpus;                /* 1..SNAP_MAX_VCPUS */
    uint64_t cid;                  /* vsock CID (0: no vsock device) */
    char memory[SNAP_NAME_MAX];    /* guest RAM's file in the snapshot directory */
    uint8_t memory_zlib;           /* 1: that file is zlib-compressed */
    char cmdline[2048];            /* the kernel command line it booted with (for the record) */
    struct kvm_irqchip pic_master, pic_slave, ioapic;
    struct kvm_pit_state2 pit;
    struct kvm_clock_data clock;
    struct snap_serial serial;
    uint32_t nvirtio;              /* <= SNAP_MAX_VIRTIO, in slot order */
    struct snap_virtio virtio[SNAP_MAX_VIRTIO];
    uint32_t ndisks;               /* <= SNAP_MAX_DISKS, in --disk order */
    struct snap_disk disks[SNAP_MAX_DISKS];
    struct snap_vcpu vcpus[SNAP_MAX_VCPUS]; /* [0..ncpus) */
};

#endif
