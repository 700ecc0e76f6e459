/* What CPUID tells the guest: KVM's supported set, narrowed per vCPU. */
#ifndef AIRLOCK_KVM_CPUID_H
#define AIRLOCK_KVM_CPUID_H

#include <linux/kvm.h>
#include <stdbool.h>

#include "vmm/kvm/kvm.h"

/* KVM_MAX_CPUID_ENTRIES: no table KVM hands out or takes is longer. */
#define CPUID_MAX_ENTRIES 256

/* KVM_GET_SUPPORTED_CPUID into a malloc'd table; NULL with errno set. */
struct kvm_cpuid2 *cpuid_supported(const struct kvm *kvm);

/* Rewrites `c` (a copy of the supported table) for vCPU `id` of `ncpus`:
 * its APIC ID, the hypervisor bit, and no VMX/SVM (no nested guests), no
 * PMU (no perf MSRs to emulate), no MONITOR/MWAIT.  With tsc_deadline
 * (kvm->tsc_deadline: KVM_CAP_TSC_DEADLINE_TIMER) leaf 1's TSC-deadline
 * bit is set: KVM's in-kernel local APIC emulates that timer, but KVM
 * leaves the bit out of KVM_GET_SUPPORTED_CPUID for the monitor to add, as
 * QEMU does.  Without it Linux calibrates the APIC timer against the PIT
 * at boot, waiting 25 jiffies: in the lab, two thirds of the guest
 * kernel's boot (docs/benchmarks.md, "Cold start"). */
void cpuid_filter(struct kvm_cpuid2 *c, unsigned id, unsigned ncpus, bool tsc_deadline);

/* The table vCPU `id` of `ncpus` gets: a malloc'd copy of `supported`
 * (from cpuid_supported, fetched once for all vCPUs) through cpuid_filter.
 * What vm_create_vcpus sets and a snapshot records and checks; NULL when
 * out of memory. */
struct kvm_cpuid2 *cpuid_for_vcpu(const struct kvm_cpuid2 *supported, unsigned id,
                                  unsigned ncpus, bool tsc_deadline);

#endif
