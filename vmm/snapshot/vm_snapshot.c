#include "vmm/snapshot/vm_snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/kvm/cpuid.h"
#include "vmm/kvm/msr_list.h"

static int fail(char *err, size_t errlen, int vcpu, const char *what, int e)
{
    if (vcpu >= 0)
        snprintf(err, errlen, "vCPU %d: %s: %s", vcpu, what, strerror(e));
    else
        snprintf(err, errlen, "%s: %s", what, strerror(e));
    return -e;
}

/* The MSRs KVM says it saves and restores (KVM_GET_MSR_INDEX_LIST), as
 * many as fit; each read on its own, since a list entry this vCPU cannot
 * read (a feature it was not given) would end a batched read early. */
static int capture_msrs(struct vm *vm, int fd, struct snap_vcpu *c)
{
    struct kvm_msr_list probe = {.nmsrs = 0};
    if (ioctl(vm->kvm->fd, KVM_GET_MSR_INDEX_LIST, &probe) < 0 && errno != E2BIG)
        return -errno;
    struct kvm_msr_list *list = calloc(1, sizeof(*list) + probe.nmsrs * sizeof(uint32_t));
    if (!list)
        return -ENOMEM;
    list->nmsrs = probe.nmsrs;
    if (ioctl(vm->kvm->fd, KVM_GET_MSR_INDEX_LIST, list) < 0) {
        int e = errno;
        free(list);
        return -e;
    }
    c->nmsrs = 0;
    for (uint32_t i = 0; i < list->nmsrs && c->nmsrs < SNAP_MAX_MSRS; i++) {
        KVM_MSR_LIST(1) one = {.nmsrs = 1, .entries[0].index = list->indices[i]};
        if (ioctl(fd, KVM_GET_MSRS, &one) == 1)
            c->msrs[c->nmsrs++] = one.entries[0];
    }
    free(list);
    return 0;
}

static int capture_vcpu(struct vm *vm, const struct kvm_cpuid2 *supported, unsigned id,
                        struct snap_vcpu *c, char *err, size_t errlen)
{
    int fd = vm->vcpus[id].fd;
    static const struct {
        unsigned long req;
        const char *name;
        size_t off;
    } gets[] = {
        {KVM_GET_REGS, "KVM_GET_REGS", offsetof(struct snap_vcpu, regs)},
        {KVM_GET_SREGS, "KVM_GET_SREGS", offsetof(struct snap_vcpu, sregs)},
        {KVM_GET_XSAVE, "KVM_GET_XSAVE", offsetof(struct snap_vcpu, xsave)},
        {KVM_GET_XCRS, "KVM_GET_XCRS", offsetof(struct snap_vcpu, xcrs)},
        {KVM_GET_LAPIC, "KVM_GET_LAPIC", offsetof(struct snap_vcpu, lapic)},
        {KVM_GET_MP_STATE, "KVM_GET_MP_STATE", offsetof(struct snap_vcpu, mp_state)},
        {KVM_GET_VCPU_EVENTS, "KVM_GET_VCPU_EVENTS", offsetof(struct snap_vcpu, events)},
        {KVM_GET_DEBUGREGS, "KVM_GET_DEBUGREGS", offsetof(struct snap_vcpu, debugregs)},
    };
    for (size_t i = 0; i < sizeof(gets) / sizeof(gets[0]); i++)
        if (ioctl(fd, gets[i].req, (char *)c + gets[i].off) < 0)
            return fail(err, errlen, (int)id, gets[i].name, errno);
    /* The table airlock gave this vCPU (what vm_create_vcpus set),
     * computed again from the supported one.  Not KVM_GET_CPUID2: KVM
     * rewrites some bits of its copy as the guest runs (OSXSAVE and OSPKE
     * follow CR4, the APIC bit the APIC base MSR, leaf 0xd's sizes XCR0),
     * so a running guest's table never equals a fresh vCPU's. */
    struct kvm_cpuid2 *t = cpuid_for_vcpu(supported, id, vm->ncpus, vm->kvm->tsc_deadline);
    if (!t)
        return fail(err, errlen, (int)id, "its CPUID table", ENOMEM);
    c->ncpuid = t->nent < SNAP_MAX_CPUID ? t->nent : SNAP_MAX_CPUID;
    for (uint32_t i = 0; i < c->ncpuid; i++) {
        c->cpuid[i] = t->entries[i];
        memset(c->cpuid[i].padding, 0, sizeof(c->cpuid[i].padding));
    }
    free(t);
    int e = capture_msrs(vm, fd, c);
    return e ? fail(err, errlen, (int)id, "KVM_GET_MSRS", -e) : 0;
}

/* The guest kernel picked its code paths by the CPUID it booted with (which
 * instructions to use, how big an XSAVE area is): restored onto a vCPU whose
 * CPUID differs, it could fault or misbehave on the first such path.  So the
 * table this host gives the new vCPU must be the snapshot's, entry for
 * entry. */
int vm_snapshot_cpuid_check(const struct kvm_cpuid2 *here, const struct snap_vcpu *c,
                            unsigned id, char *err, size_t errlen)
{
    for (uint32_t i = 0; i < c->ncpuid; i++) {
        const struct kvm_cpuid_entry2 *s = &c->cpuid[i], *h = NULL;
        for (uint32_t j = 0; j < here->nent && !h; j++)
            if (here->entries[j].function == s->function && here->entries[j].index == s->index)
                h = &here->entries[j];
        if (!h) {
            snprintf(err, errlen,
                     "vCPU %u: CPUID leaf %#x.%u of the snapshot is not offered on this host "
                     "(restore on the kind of host that took it)",
                     id, s->function, s->index);
            return -EINVAL;
        }
        const uint32_t sv[5] = {s->flags, s->eax, s->ebx, s->ecx, s->edx};
        const uint32_t hv[5] = {h->flags, h->eax, h->ebx, h->ecx, h->edx};
        static const char *const reg[5] = {"flags", "eax", "ebx", "ecx", "edx"};
        for (unsigned k = 0; k < 5; k++)
            if (sv[k] != hv[k]) {
                snprintf(err, errlen,
                         "vCPU %u: this host's CPU differs from the snapshot's: CPUID leaf "
                         "%#x.%u %s is %#x here, %#x in the snapshot (restore on the kind of "
                         "host that took it)",
                         id, s->function, s->index, reg[k], hv[k], sv[k]);
                return -EINVAL;
            }
    }
    if (here->nent != c->ncpuid) {
        snprintf(err, errlen,
                 "vCPU %u: this host offers %u CPUID leaves, the snapshot had %u (restore on "
                 "the kind of host that took it)",
                 id, here->nent, c->ncpuid);
        return -EINVAL;
    }
    return 0;
}

int vm_snapshot_capture(struct vm *vm, struct snap_state *s, char *err, size_t errlen)
{
    s->ncpus = vm->ncpus;
    struct kvm_cpuid2 *supported = cpuid_supported(vm->kvm);
    if (!supported)
        return fail(err, errlen, -1, "KVM_GET_SUPPORTED_CPUID", errno);
    int e = 0;
    for (unsigned i = 0; i < vm->ncpus && !e; i++)
        e = capture_vcpu(vm, supported, i, &s->vcpus[i], err, errlen);
    free(supported);
    if (e)
        return e;
    struct kvm_irqchip *chips[3] = {&s->pic_master, &s->pic_slave, &s->ioapic};
    for (unsigned i = 0; i < 3; i++) {
        chips[i]->chip_id = i; /* KVM_IRQCHIP_PIC_MASTER, _SLAVE, _IOAPIC */
        if (ioctl(vm->fd, KVM_GET_IRQCHIP, chips[i]) < 0)
            return fail(err, errlen, -1, "KVM_GET_IRQCHIP", errno);
    }
    if (ioctl(vm->fd, KVM_GET_PIT2, &s->pit) < 0)
        return fail(err, errlen, -1, "KVM_GET_PIT2", errno);
    if (ioctl(vm->fd, KVM_GET_CLOCK, &s->clock) < 0)
        return fail(err, errlen, -1, "KVM_GET_CLOCK", errno);
    return 0;
}

/* In the order KVM needs: MP state first (it decides whether the vCPU
 * runs), sregs before the LAPIC (the APIC base is in sregs), MSRs after
 * both, pending events last. */
static int restore_vcpu(struct vm *vm, unsigned id, const struct snap_vcpu *c, char *err,
                        size_t errlen)
{
    int fd = vm->vcpus[id].fd;
    static const struct {
        unsigned long req;
        const char *name;
        size_t off;
    } sets[] = {
        {KVM_SET_MP_STATE, "KVM_SET_MP_STATE", offsetof(struct snap_vcpu, mp_state)},
        {KVM_SET_REGS, "KVM_SET_REGS", offsetof(struct snap_vcpu, regs)},
        {KVM_SET_SREGS, "KVM_SET_SREGS", offsetof(struct snap_vcpu, sregs)},
        {KVM_SET_XSAVE, "KVM_SET_XSAVE", offsetof(struct snap_vcpu, xsave)},
        {KVM_SET_XCRS, "KVM_SET_XCRS", offsetof(struct snap_vcpu, xcrs)},
        {KVM_SET_DEBUGREGS, "KVM_SET_DEBUGREGS", offsetof(struct snap_vcpu, debugregs)},
        {KVM_SET_LAPIC, "KVM_SET_LAPIC", offsetof(struct snap_vcpu, lapic)},
    };
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        /* KVM's SET ioctls take a writable pointer; these do not write. */
        if (ioctl(fd, sets[i].req, (char *)(uintptr_t)c + sets[i].off) < 0)
            return fail(err, errlen, (int)id, sets[i].name, errno);
    }
    if (c->nmsrs > SNAP_MAX_MSRS)
        return fail(err, errlen, (int)id, "MSR count", EINVAL);
    KVM_MSR_LIST(SNAP_MAX_MSRS) msrs;
    memset(&msrs, 0, sizeof(msrs));
    msrs.nmsrs = c->nmsrs;
    memcpy(msrs.entries, c->msrs, c->nmsrs * sizeof(c->msrs[0]));
    int set = ioctl(fd, KVM_SET_MSRS, &msrs);
    if (set < 0)
        return fail(err, errlen, (int)id, "KVM_SET_MSRS", errno);
    if ((uint32_t)set != c->nmsrs) {
        snprintf(err, errlen, "vCPU %u: KVM refused MSR %#x from the snapshot", id,
                 c->msrs[set].index);
        return -EINVAL;
    }
    if (ioctl(fd, KVM_SET_VCPU_EVENTS, (void *)(uintptr_t)&c->events) < 0)
        return fail(err, errlen, (int)id, "KVM_SET_VCPU_EVENTS", errno);
    return 0;
}

int vm_snapshot_restore(struct vm *vm, const struct snap_state *s, char *err, size_t errlen)
{
    if (s->ncpus != vm->ncpus) {
        snprintf(err, errlen, "the snapshot has %u vCPUs, the VM %u", s->ncpus, vm->ncpus);
        return -EINVAL;
    }
    /* The PIT and irqchips before the vCPUs: a restored LAPIC may deliver
     * at once. */
    if (ioctl(vm->fd, KVM_SET_PIT2, (void *)(uintptr_t)&s->pit) < 0)
        return fail(err, errlen, -1, "KVM_SET_PIT2", errno);
    const struct kvm_irqchip *chips[3] = {&s->pic_master, &s->pic_slave, &s->ioapic};
    for (unsigned i = 0; i < 3; i++) {
        struct kvm_irqchip c = *chips[i];
        c.chip_id = i; /* not taken from the file */
        if (ioctl(vm->fd, KVM_SET_IRQCHIP, &c) < 0)
            return fail(err, errlen, -1, "KVM_SET_IRQCHIP", errno);
    }
    struct kvm_cpuid2 *supported = cpuid_supported(vm->kvm);
    if (!supported)
        return fail(err, errlen, -1, "KVM_GET_SUPPORTED_CPUID", errno);
    int e = 0;
    for (unsigned i = 0; i < s->ncpus && !e; i++) {
        struct kvm_cpuid2 *here = cpuid_for_vcpu(supported, i, vm->ncpus, vm->kvm->tsc_deadline);
        e = here ? vm_snapshot_cpuid_check(here, &s->vcpus[i], i, err, errlen)
                 : fail(err, errlen, (int)i, "its CPUID table", ENOMEM);
        free(here);
        if (!e)
            e = restore_vcpu(vm, i, &s->vcpus[i], err, errlen);
    }
    free(supported);
    if (e)
        return e;
    /* kvm-clock continues from the snapshot's instant: guest monotonic
     * time does not jump; wall time is the agent's to set (docs/snapshots.md). */
    struct kvm_clock_data clock = {.clock = s->clock.clock};
    if (ioctl(vm->fd, KVM_SET_CLOCK, &clock) < 0)
        return fail(err, errlen, -1, "KVM_SET_CLOCK", errno);
    return 0;
}
