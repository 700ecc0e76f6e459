/* KVM_GET_MSRS and KVM_SET_MSRS take a struct kvm_msrs followed by its
 * entries.  That struct ends in a flexible array member, so putting it
 * first in a struct with an entry array after it is a GNU extension
 * (clang's -Wgnu-variable-sized-type-not-at-end).  KVM_MSR_LIST(n) is
 * the same bytes as a plain struct: the header's two words, then room for
 * n entries, which is what the ioctls read and write. */
#ifndef AIRLOCK_KVM_MSR_LIST_H
#define AIRLOCK_KVM_MSR_LIST_H

#include <linux/kvm.h>
#include <stddef.h>
#include <stdint.h>

#define KVM_MSR_LIST(n)                                                                        \
    struct {                                                                                   \
        uint32_t nmsrs;                                                                        \
        uint32_t pad;                                                                          \
        struct kvm_msr_entry entries[n];                                                       \
    }

_Static_assert(offsetof(KVM_MSR_LIST(1), nmsrs) == offsetof(struct kvm_msrs, nmsrs) &&
                   offsetof(KVM_MSR_LIST(1), entries) == offsetof(struct kvm_msrs, entries),
               "KVM_MSR_LIST must lay out as struct kvm_msrs");

#endif
