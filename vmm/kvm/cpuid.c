#include "vmm/kvm/cpuid.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>


#define LEAF1_ECX_VMX        (1u << 5)
#define LEAF1_ECX_MONITOR    (1u << 3)
#define LEAF1_ECX_TSC_DEADLINE (1u << 24)
#define LEAF1_ECX_HYPERVISOR (1u << 31)
#define EXT1_ECX_SVM         (1u << 2)
#define LEAF7_ECX_PKU        (1u << 3)
#define LEAF7_ECX_OSPKE      (1u << 4)
/* XSAVE state components the guest may enable: x87, SSE, AVX, MPX, AVX-512.
 * Not PKRU (nor PKU): our guest kernel has no protection keys, so offering
 * them only widens what the guest can poke at.  (In the nested lab 6.1 still
 * warns "XSAVE consistency problem" about AVX: the TCG L1's XSAVE sizes are
 * off, and QEMU -cpu host shows the same warning there.) */
#define XSTATE_ALLOWED       0xffu
#define TOPO_TYPE_SMT        1
#define TOPO_TYPE_CORE       2

struct kvm_cpuid2 *cpuid_supported(const struct kvm *kvm)
{
    struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + CPUID_MAX_ENTRIES * sizeof(c->entries[0]));
    if (!c)
        return NULL;
    c->nent = CPUID_MAX_ENTRIES;
    if (ioctl(kvm->fd, KVM_GET_SUPPORTED_CPUID, c) < 0) {
        int e = errno;
        free(c);
        errno = e;
        return NULL;
    }
    return c;
}

static unsigned bits_for(unsigned n)
{
    unsigned b = 0;
    while ((1u << b) < n)
        b++;
    return b;
}

/* Leaf 0xd: drop state components outside XSTATE_ALLOWED and recompute the
 * largest save area (subleaf 0 ECX) from what is left. */
static void cpuid_filter_xsave(struct kvm_cpuid2 *c)
{
    struct kvm_cpuid_entry2 *top = NULL;
    uint32_t max_size = 576; /* legacy area + XSAVE header */
    for (unsigned i = 0; i < c->nent; i++) {
        struct kvm_cpuid_entry2 *e = &c->entries[i];
        if (e->function != 0xd)
            continue;
        if (e->index == 0) {
            top = e;
        } else if (e->index >= 2 && e->index < 32) {
            if (!(XSTATE_ALLOWED & (1u << e->index))) {
                e->eax = e->ebx = e->ecx = e->edx = 0;
            } else if (e->eax && e->ebx + e->eax > max_size) {
                max_size = e->ebx + e->eax;
            }
        }
    }
    if (top) {
        top->eax &= XSTATE_ALLOWED;
        top->edx = 0;
        top->ecx = max_size;
    }
}

void cpuid_filter(struct kvm_cpuid2 *c, unsigned id, unsigned ncpus, bool tsc_deadline)
{
    uint32_t leaf1_ecx_add = LEAF1_ECX_HYPERVISOR | (tsc_deadline ? LEAF1_ECX_TSC_DEADLINE : 0);
    cpuid_filter_xsave(c);
    for (unsigned i = 0; i < c->nent; i++) {
        struct kvm_cpuid_entry2 *e = &c->entries[i];
        switch (e->function) {
        case 0x1:
            e->ebx = (e->ebx & 0x00ffffff) | (id << 24);
            e->ecx = (e->ecx & ~(LEAF1_ECX_VMX | LEAF1_ECX_MONITOR)) | leaf1_ecx_add;
            break;
        case 0x7:
            if (e->index == 0)
                e->ecx &= ~(LEAF7_ECX_PKU | LEAF7_ECX_OSPKE);
            break;
        case 0xa: /* architectural PMU */
            e->eax = e->ebx = e->ecx = e->edx = 0;
            break;
        case 0xb:
        case 0x1f:
            /* One thread per core, ncpus cores in one package; x2APIC ID = id. */
            e->edx = id;
            if (e->index == 0) {
                e->eax = 0;
                e->ebx = 1;
                e->ecx = (TOPO_TYPE_SMT << 8);
            } else if (e->index == 1) {
                e->eax = bits_for(ncpus);
                e->ebx = ncpus;
                e->ecx = (TOPO_TYPE_CORE << 8) | 1;
            } else {
                e->eax = e->ebx = 0;
                e->ecx = e->index;
            }
            break;
        case 0x80000001:
            e->ecx &= ~EXT1_ECX_SVM;
            break;
        default:
            break;
        }
    }
}

struct kvm_cpuid2 *cpuid_for_vcpu(const struct kvm_cpuid2 *supported, unsigned id,
                                  unsigned ncpus, bool tsc_deadline)
{
    size_t bytes = sizeof(*supported) + supported->nent * sizeof(supported->entries[0]);
    struct kvm_cpuid2 *c = malloc(bytes);
    if (c) {
        memcpy(c, supported, bytes);
        cpuid_filter(c, id, ncpus, tsc_deadline);
    }
    return c;
}
