/* A vCPU's state before its first KVM_RUN. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "boot/cpu_entry.h"
#include "vmm/kvm/cpuid.h"
#include "vmm/kvm/msr_list.h"
#include "vmm/kvm/vm.h"

#define MSR_IA32_SYSENTER_CS   0x174
#define MSR_IA32_SYSENTER_ESP  0x175
#define MSR_IA32_SYSENTER_EIP  0x176
#define MSR_STAR               0xc0000081
#define MSR_LSTAR              0xc0000082
#define MSR_CSTAR              0xc0000083
#define MSR_SYSCALL_MASK       0xc0000084
#define MSR_KERNEL_GS_BASE     0xc0000102
#define MSR_IA32_MISC_ENABLE   0x1a0
#define MSR_MTRR_DEF_TYPE      0x2ff
#define MISC_ENABLE_FAST_STRING 0x1
#define MTRR_ENABLE_WRITEBACK  ((1u << 11) | 6) /* MTRRs on, default type WB */

#define APIC_LVT_LINT0 0x350
#define APIC_LVT_LINT1 0x360
#define APIC_MODE_NMI    0x4
#define APIC_MODE_EXTINT 0x7

static int vfail(char *err, size_t errlen, unsigned id, const char *what, int e)
{
    snprintf(err, errlen, "vCPU %u: %s: %s", id, what, strerror(e));
    return -e;
}

static int vcpu_set_msrs(struct vcpu *v, char *err, size_t errlen)
{
    static const struct { uint32_t index; uint64_t data; } boot_msrs[] = {
        {MSR_IA32_SYSENTER_CS, 0}, {MSR_IA32_SYSENTER_ESP, 0}, {MSR_IA32_SYSENTER_EIP, 0},
        {MSR_STAR, 0}, {MSR_LSTAR, 0}, {MSR_CSTAR, 0}, {MSR_SYSCALL_MASK, 0},
        {MSR_KERNEL_GS_BASE, 0},
        {MSR_IA32_MISC_ENABLE, MISC_ENABLE_FAST_STRING},
        {MSR_MTRR_DEF_TYPE, MTRR_ENABLE_WRITEBACK},
    };
    enum { N = sizeof(boot_msrs) / sizeof(boot_msrs[0]) };
    KVM_MSR_LIST(N) msrs;
    memset(&msrs, 0, sizeof(msrs));
    msrs.nmsrs = N;
    for (unsigned i = 0; i < N; i++) {
        msrs.entries[i].index = boot_msrs[i].index;
        msrs.entries[i].data = boot_msrs[i].data;
    }
    /* KVM_SET_MSRS returns how many it set: fewer means one was refused. */
    int set = ioctl(v->fd, KVM_SET_MSRS, &msrs);
    if (set < 0)
        return vfail(err, errlen, v->id, "KVM_SET_MSRS", errno);
    if (set != N) {
        snprintf(err, errlen, "vCPU %u: KVM refused MSR %#x", v->id, boot_msrs[set].index);
        return -EINVAL;
    }
    return 0;
}

/* LINT0 takes the PIC's ExtINT and LINT1 the NMI, as firmware leaves them. */
static int vcpu_set_lapic(struct vcpu *v, char *err, size_t errlen)
{
    struct kvm_lapic_state lapic;
    if (ioctl(v->fd, KVM_GET_LAPIC, &lapic) < 0)
        return vfail(err, errlen, v->id, "KVM_GET_LAPIC", errno);
    uint32_t lint0, lint1;
    memcpy(&lint0, lapic.regs + APIC_LVT_LINT0, 4);
    memcpy(&lint1, lapic.regs + APIC_LVT_LINT1, 4);
    lint0 = (lint0 & ~0x700u) | (APIC_MODE_EXTINT << 8);
    lint1 = (lint1 & ~0x700u) | (APIC_MODE_NMI << 8);
    memcpy(lapic.regs + APIC_LVT_LINT0, &lint0, 4);
    memcpy(lapic.regs + APIC_LVT_LINT1, &lint1, 4);
    if (ioctl(v->fd, KVM_SET_LAPIC, &lapic) < 0)
        return vfail(err, errlen, v->id, "KVM_SET_LAPIC", errno);
    return 0;
}

static int vcpu_set_entry(struct vcpu *v, const struct boot_plan *plan, char *err, size_t errlen)
{
    struct kvm_fpu fpu = {.fcw = 0x37f, .mxcsr = 0x1f80}; /* FNINIT / power-on values */
    if (ioctl(v->fd, KVM_SET_FPU, &fpu) < 0)
        return vfail(err, errlen, v->id, "KVM_SET_FPU", errno);
    struct kvm_sregs sregs;
    if (ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0)
        return vfail(err, errlen, v->id, "KVM_GET_SREGS", errno);
    cpu_entry_sregs(plan, &sregs);
    if (ioctl(v->fd, KVM_SET_SREGS, &sregs) < 0)
        return vfail(err, errlen, v->id, "KVM_SET_SREGS", errno);
    struct kvm_regs regs;
    cpu_entry_regs(plan, &regs);
    if (ioctl(v->fd, KVM_SET_REGS, &regs) < 0)
        return vfail(err, errlen, v->id, "KVM_SET_REGS", errno);
    return 0;
}

int vcpu_setup(struct vcpu *v, const struct kvm_cpuid2 *cpuid, const struct boot_plan *plan,
               char *err, size_t errlen)
{
    if (ioctl(v->fd, KVM_SET_CPUID2, cpuid) < 0)
        return vfail(err, errlen, v->id, "KVM_SET_CPUID2", errno);
    int ret = vcpu_set_msrs(v, err, errlen);
    if (!ret)
        ret = vcpu_set_lapic(v, err, errlen);
    if (!ret && plan)
        ret = vcpu_set_entry(v, plan, err, errlen);
    return ret;
}
