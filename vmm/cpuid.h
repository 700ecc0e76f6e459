/* What CPUID tells the guest: KVM's supported set, narrowed per vCPU. */
#ifndef AIRLOCK_VMM_CPUID_H
#define AIRLOCK_VMM_CPUID_H

#include <linux/kvm.h>

/* KVM_MAX_CPUID_ENTRIES: no table KVM hands out or takes is longer. */
#define CPUID_MAX_ENTRIES 256

/* KVM_GET_SUPPORTED_CPUID into a malloc'd table; NULL with errno set. */
struct kvm_cpuid2 *cpuid_supported(int kvm_fd);

/* Rewrites `c` (a copy of the supported table) for vCPU `id` of `ncpus`:
 * its APIC ID, the hypervisor bit, and no VMX/SVM (no nested guests), no
 * PMU (no perf MSRs to emulate), no MONITOR/MWAIT. */
void cpuid_filter(struct kvm_cpuid2 *c, unsigned id, unsigned ncpus);

#endif
