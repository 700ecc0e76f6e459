/* What the vCPU thread does with each KVM exit: one table, used by the
 * dispatcher and printed by `airlock surface`, so the two cannot drift.
 * Guest I/O goes to the bus; anything that means the guest cannot go on
 * stops the VM with a one-line diagnosis instead of a register dump. */
#include "vmm/kvm/vcpu_exits.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

static uint64_t vcpu_rip(struct vcpu *v)
{
    struct kvm_regs regs;
    return ioctl(v->fd, KVM_GET_REGS, &regs) == 0 ? regs.rip : 0;
}

static void vcpu_io(struct vcpu *v)
{
    struct kvm_run *run = v->run;
    uint64_t bytes = (uint64_t)run->io.size * run->io.count;
    /* KVM fills these, but a wrong one would have us touch memory past the
     * kvm_run mapping: check rather than trust. */
    if (run->io.size == 0 || run->io.size > 4 || run->io.data_offset > (uint64_t)v->vm->kvm->vcpu_mmap_size ||
        bytes > v->vm->kvm->vcpu_mmap_size - run->io.data_offset) {
        vm_stop(v->vm, 125, "vCPU %u: malformed I/O exit (size %u count %u)", v->id,
                run->io.size, run->io.count);
        return;
    }
    uint8_t *data = (uint8_t *)run + run->io.data_offset;
    for (uint32_t i = 0; i < run->io.count; i++)
        bus_access(&v->vm->bus, BUS_PIO, run->io.port, data + i * run->io.size, run->io.size,
                   run->io.direction == KVM_EXIT_IO_OUT);
}

static void vcpu_internal_error(struct vcpu *v)
{
    uint32_t sub = v->run->internal.suberror;
    uint64_t rip = vcpu_rip(v);
    if (v->vm->kvm->pvm && sub == KVM_INTERNAL_ERROR_EMULATION)
        vm_stop(v->vm, 125,
                "vCPU %u: kvm-pvm could not emulate the guest's kernel-mode instruction at rip %#llx: "
                "this host's /dev/kvm is kvm-pvm, which cannot run a stock Linux guest "
                "(use tests/lab/run, or a host with VT-x/AMD-V)",
                v->id, (unsigned long long)rip);
    else
        vm_stop(v->vm, 125, "vCPU %u: KVM internal error (suberror %u) at rip %#llx", v->id, sub,
                (unsigned long long)rip);
}

static void vcpu_system_event(struct vcpu *v)
{
    switch (v->run->system_event.type) {
    case KVM_SYSTEM_EVENT_SHUTDOWN:
        vm_stop(v->vm, 0, "guest powered off");
        break;
    case KVM_SYSTEM_EVENT_RESET:
        vm_stop(v->vm, 0, "guest reset");
        break;
    default:
        vm_stop(v->vm, 125, "vCPU %u: guest crashed (system event %u)", v->id,
                v->run->system_event.type);
        break;
    }
}

static void vcpu_mmio(struct vcpu *v)
{
    struct kvm_run *run = v->run;
    if (run->mmio.len > sizeof(run->mmio.data)) {
        vm_stop(v->vm, 125, "vCPU %u: malformed MMIO exit (len %u)", v->id, run->mmio.len);
        return;
    }
    bus_access(&v->vm->bus, BUS_MMIO, run->mmio.phys_addr, run->mmio.data, run->mmio.len,
               run->mmio.is_write);
}

static void vcpu_intr(struct vcpu *v)
{
    (void)v; /* a signal kicked us out of KVM_RUN: the loop checks vm_stopping */
}

static void vcpu_triple_fault(struct vcpu *v)
{
    vm_stop(v->vm, 125, "vCPU %u: guest triple-faulted (KVM_EXIT_SHUTDOWN) at rip %#llx", v->id,
            (unsigned long long)vcpu_rip(v));
}

/* With the in-kernel irqchip KVM handles HLT; seeing one means the guest
 * halted where nothing can wake it. */
static void vcpu_halt(struct vcpu *v)
{
    vm_stop(v->vm, 125, "vCPU %u: guest halted for good at rip %#llx", v->id,
            (unsigned long long)vcpu_rip(v));
}

static void vcpu_fail_entry(struct vcpu *v)
{
    vm_stop(v->vm, 125, "vCPU %u: KVM could not enter the guest (hardware reason %#llx)", v->id,
            (unsigned long long)v->run->fail_entry.hardware_entry_failure_reason);
}

#define EXIT(reason, fn, what) [reason] = {reason, #reason, fn, #fn, what}

/* Indexed by exit reason; a hole is an exit we do not handle. */
static const struct vcpu_exit exits[] = {
    EXIT(KVM_EXIT_IO, vcpu_io, "port I/O: each access to the bus (PIO), unclaimed reads all-ones"),
    EXIT(KVM_EXIT_MMIO, vcpu_mmio, "MMIO outside RAM: to the bus (MMIO), unclaimed reads all-ones"),
    EXIT(KVM_EXIT_INTR, vcpu_intr, "a signal kicked the vCPU out of KVM_RUN: nothing"),
    EXIT(KVM_EXIT_SHUTDOWN, vcpu_triple_fault, "triple fault: the VM stops (125)"),
    EXIT(KVM_EXIT_HLT, vcpu_halt, "HLT with nothing to wake it: the VM stops (125)"),
    EXIT(KVM_EXIT_INTERNAL_ERROR, vcpu_internal_error, "KVM gave up (emulation): the VM stops (125)"),
    EXIT(KVM_EXIT_FAIL_ENTRY, vcpu_fail_entry, "VM entry failed: the VM stops (125)"),
    EXIT(KVM_EXIT_SYSTEM_EVENT, vcpu_system_event, "the guest asked for power-off or reset, or crashed: the VM stops"),
};

#undef EXIT

const struct vcpu_exit *vcpu_exit_find(uint32_t reason)
{
    if (reason >= sizeof(exits) / sizeof(exits[0]) || !exits[reason].handle)
        return NULL;
    return &exits[reason];
}

unsigned vcpu_exit_list(const struct vcpu_exit **out, unsigned max)
{
    unsigned n = 0;
    for (uint32_t r = 0; r < sizeof(exits) / sizeof(exits[0]); r++) {
        if (!exits[r].handle)
            continue;
        if (n < max)
            out[n] = &exits[r];
        n++;
    }
    return n;
}

void vcpu_handle_exit(struct vcpu *v)
{
    const struct vcpu_exit *e = vcpu_exit_find(v->run->exit_reason);
    if (e)
        e->handle(v);
    else
        vm_stop(v->vm, 125, "vCPU %u: unhandled KVM exit reason %u at rip %#llx", v->id,
                v->run->exit_reason, (unsigned long long)vcpu_rip(v));
}
