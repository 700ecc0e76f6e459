/* What CPUID tells the guest: KVM's supported set, narrowed per vCPU. */
#ifndef AIRLOCK_KVM_CPUID_H
#define AIRLOCK_KVM_CPUID_H

#include <linux/kvm.h>

/* KVM_MAX_CPUID_ENTRIES: no table KVM hands out or takes is longer. */
#define CPUID_MAX_ENTRIES 256

/* KVM_GET_SUPPORTED_CPUID into a malloc'd table; NULL with errno set. */
struct kvm_cpuid2 *cpuid_supported(int kvm_fd);

/* Rewrites `c` (a copy of the supported table) for vCPU `id` of `ncpus`:
 * its APIC ID, the hypervisor bit, and no VMX/SVM (no nested guests), no
 * PMU (no perf MSRs to emulate), no MONITOR/MWAIT. */
void cpuid_filter(struct kvm_cpuid2 *c, unsigned id, unsigned ncpus);

/* The table vCPU `id` of `ncpus` gets: a malloc'd copy of `supported`
 * (from cpuid_supported, fetched once for all vCPUs) through cpuid_filter.
 * What vm_create_vcpus sets and a snapshot records and checks; NULL when
 * out of memory. */
struct kvm_cpuid2 *cpuid_for_vcpu(const struct kvm_cpuid2 *supported, unsigned id,
                                  unsigned ncpus);

#endif
