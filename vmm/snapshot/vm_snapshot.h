/* The KVM half of a snapshot: vCPUs (registers, FPU/XSAVE, MSRs, LAPIC,
 * pending events), the in-kernel PIC/IOAPIC, the PIT and kvm-clock, read
 * into a struct snap_state and written back.  Devices save their own
 * state (serial, virtio); guest RAM is vmm/snapshot/snapshot_memory.c's. */
#ifndef AIRLOCK_SNAPSHOT_VM_SNAPSHOT_H
#define AIRLOCK_SNAPSHOT_VM_SNAPSHOT_H

#include <stddef.h>

#include "vmm/snapshot/snapshot_state.h"
#include "vmm/kvm/vm.h"

/* Reads every vCPU's and the VM's state.  The vCPUs must be parked
 * (vm_pause).  -errno with err naming the ioctl and vCPU. */
int vm_snapshot_capture(struct vm *vm, struct snap_state *s, char *err, size_t errlen);

/* Writes it back into a VM created with s->ncpus vCPUs that have not run
 * yet.  KVM checks what it is given; a refusal is an error naming the
 * ioctl (and the MSR, for MSRs).  A vCPU whose CPUID on this host differs
 * from the snapshot's is refused first (vm_snapshot_cpuid_check). */
int vm_snapshot_restore(struct vm *vm, const struct snap_state *s, char *err, size_t errlen);

/* 0 when `here` (a vCPU's table on this host) has exactly the snapshot
 * vCPU's CPUID entries; else -EINVAL with err naming the first leaf and
 * register that differs. */
int vm_snapshot_cpuid_check(const struct kvm_cpuid2 *here, const struct snap_vcpu *c,
                            unsigned id, char *err, size_t errlen);

#endif
