/* A snapshot's state file: struct snap_state (vmm/snapshot/snapshot_state.h) as a
 * flattened device tree written with libfdt, and the strict reader that
 * turns such a file back into a struct.  The file is user input: the
 * reader runs fdt_check_full over the whole blob before it reads any field,
 * then checks every property's presence, length and range, so a truncated,
 * corrupted or hostile file gets a one-line error, never a crash.
 *
 * Layout (version 2; version 1 had no vcpu@N/cpuid).  Integers are big-endian FDT cells: u32 is one cell,
 * u64 two; "bool" is a u32 that is 0 or 1.  "raw" is the uapi struct from
 * <linux/kvm.h> byte for byte, in the host's (x86-64, little-endian) order,
 * its length exactly sizeof(struct).  Strings are one NUL-terminated
 * string each.  Unit addresses are lowercase hex without leading zeros
 * (vcpu@a is the eleventh vCPU), contiguous from 0, in order.
 *
 *   / {
 *       compatible = "airlock,snapshot";
 *       version = <2>;                     u32, must equal SNAP_VERSION
 *       machine {
 *           mem-mib = <u64>;               8..1048576
 *           ncpus = <u32>;                 1..SNAP_MAX_VCPUS, = number of vcpu@N
 *           cid = <u64>;                   0: no vsock device
 *           memory = "memory";             guest RAM's file: a plain name
 *           memory-zlib = <bool>;
 *           cmdline = "...";               < 2048 bytes
 *       };
 *       irqchip { pic-master = [raw kvm_irqchip]; pic-slave = [..]; ioapic = [..]; };
 *       pit { state = [raw kvm_pit_state2]; };
 *       clock { data = [raw kvm_clock_data]; };
 *       serial { ier lcr mcr scr dll dlm fcr = <u32 0..255>; thri-pending = <bool>; };
 *       virtio@N {                         N < SNAP_MAX_VIRTIO, in slot order
 *           device-id status device-features-sel driver-features-sel
 *           queue-sel interrupt-status config-generation = <u32>;
 *           driver-features = <u64>;
 *           queue@Q {                      Q < SNAP_MAX_QUEUES
 *               size = <u32 0..65535>; ready = <bool>;
 *               desc-gpa avail-gpa used-gpa = <u64>;
 *               last-avail used-idx signalled-used = <u32 0..65535>;
 *           };
 *       };
 *       disk@N {                           N < SNAP_MAX_DISKS, in --disk order
 *           path = "...";                  non-empty, < PATH_MAX bytes
 *           size ino dev mtime-ns cow-cap = <u64>;   (mtime-ns two's complement)
 *           read-only cow = <bool>;
 *           overlay = "";                  "" or a plain name; only with cow
 *       };
 *       vcpu@N {                           N < ncpus
 *           regs sregs xsave xcrs lapic mp-state events debugregs = [raw];
 *           msrs = [(u32 index, u64 data) ...]   12 bytes each, <= SNAP_MAX_MSRS;
 *                                          kvm_msr_entry.reserved is not kept (KVM
 *                                          ignores it) and reads back as 0
 *           cpuid = [(u32 function, index, flags, eax, ebx, ecx, edx) ...]
 *                                          28 bytes each, <= SNAP_MAX_CPUID: the
 *                                          table airlock set for this vCPU
 *                                          (vmm/kvm/cpuid.h); padding is not kept
 *       };
 *   };
 *
 * A plain name is non-empty, has no '/', and is not "." or "..": it names
 * a file inside the snapshot directory and nothing else.
 *
 * Unknown properties and nodes are rejected, not skipped: a file that holds
 * state this airlock does not know cannot be restored faithfully, and a
 * version bump (which this reader refuses anyway) is how the layout grows.
 * The memory reservation block is ignored (libfdt always writes an empty
 * one).  The writer checks the same rules, so it never writes a file the
 * reader would refuse. */
#ifndef AIRLOCK_SNAPSHOT_SNAPSHOT_FILE_H
#define AIRLOCK_SNAPSHOT_SNAPSHOT_FILE_H

#include <stddef.h>

#include "vmm/snapshot/snapshot_state.h"

/* Largest state file either side accepts: 254 vCPUs take about 2 MiB. */
#define SNAP_BLOB_MAX (64u << 20)

/* Encodes *s into a malloc'd blob (*blob, *len; the caller frees it).
 * Returns 0, -EINVAL when *s breaks a rule above (err names the field as
 * its path in the tree), or -ENOMEM. */
int snap_encode(const struct snap_state *s, void **blob, size_t *len, char *err, size_t errlen);

/* Decodes blob[0..len) into *s, which it zeroes first (so padding and the
 * bytes after each string's NUL are 0) -- all but vcpus[ncpus..], which it
 * leaves as they were (the caller's calloc has them zero).  Returns 0; -EINVAL for a blob
 * that is not a valid version-1 state (err: "state: WHAT"), -EFBIG for one
 * over SNAP_BLOB_MAX, -ENOTSUP for another version, -ENOMEM.  On error *s
 * is zeroed again, so nothing half-read is left behind. */
int snap_decode(const void *blob, size_t len, struct snap_state *s, char *err, size_t errlen);

#endif
