/* /dev/kvm itself: opening it, checking it is a KVM we can use, and knowing
 * what kind of KVM it is. */
#ifndef AIRLOCK_KVM_KVM_H
#define AIRLOCK_KVM_KVM_H

#include <stdbool.h>
#include <stddef.h>

struct kvm {
    int fd;
    int vcpu_mmap_size; /* size of each vCPU's struct kvm_run mapping */
    int max_vcpus;
    bool pvm;           /* kvm-pvm: paging-based, no VT-x/AMD-V (KVM-HERE.md) */
    bool tsc_deadline;  /* KVM_CAP_TSC_DEADLINE_TIMER: vmm/kvm/cpuid.h */
};

/* Opens and checks `path` (normally /dev/kvm): API version 12 and every
 * capability airlock relies on.  Returns 0, or -errno with `err` holding a
 * one-line explanation that names the path. */
int kvm_open(struct kvm *kvm, const char *path, char *err, size_t errlen);

void kvm_close(struct kvm *kvm);

/* True when the kernel module behind /dev/kvm is kvm-pvm. */
bool kvm_backend_is_pvm(void);

#endif
