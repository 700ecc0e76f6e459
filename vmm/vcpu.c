/* The vCPU thread: KVM_RUN, then route the exit.  Guest I/O goes to the
 * bus; anything that means the guest cannot go on stops the VM with a
 * one-line diagnosis instead of a register dump. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/vm.h"

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

static void vcpu_handle_exit(struct vcpu *v)
{
    struct kvm_run *run = v->run;
    switch (run->exit_reason) {
    case KVM_EXIT_IO:
        vcpu_io(v);
        break;
    case KVM_EXIT_MMIO:
        if (run->mmio.len > sizeof(run->mmio.data)) {
            vm_stop(v->vm, 125, "vCPU %u: malformed MMIO exit (len %u)", v->id, run->mmio.len);
            break;
        }
        bus_access(&v->vm->bus, BUS_MMIO, run->mmio.phys_addr, run->mmio.data, run->mmio.len,
                   run->mmio.is_write);
        break;
    case KVM_EXIT_INTR:
        break;
    case KVM_EXIT_SHUTDOWN:
        vm_stop(v->vm, 125, "vCPU %u: guest triple-faulted (KVM_EXIT_SHUTDOWN) at rip %#llx",
                v->id, (unsigned long long)vcpu_rip(v));
        break;
    case KVM_EXIT_HLT:
        /* With the in-kernel irqchip KVM handles HLT; seeing one means the
         * guest halted where nothing can wake it. */
        vm_stop(v->vm, 125, "vCPU %u: guest halted for good at rip %#llx", v->id,
                (unsigned long long)vcpu_rip(v));
        break;
    case KVM_EXIT_INTERNAL_ERROR:
        vcpu_internal_error(v);
        break;
    case KVM_EXIT_FAIL_ENTRY:
        vm_stop(v->vm, 125, "vCPU %u: KVM could not enter the guest (hardware reason %#llx)",
                v->id, (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
        break;
    case KVM_EXIT_SYSTEM_EVENT:
        vcpu_system_event(v);
        break;
    default:
        vm_stop(v->vm, 125, "vCPU %u: unhandled KVM exit reason %u at rip %#llx", v->id,
                run->exit_reason, (unsigned long long)vcpu_rip(v));
        break;
    }
}

void *vcpu_thread(void *arg)
{
    struct vcpu *v = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);

    while (!vm_stopping(v->vm)) {
        if (ioctl(v->fd, KVM_RUN, 0) < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            vm_stop(v->vm, 125, "vCPU %u: KVM_RUN failed: %s", v->id, strerror(errno));
            break;
        }
        vcpu_handle_exit(v);
    }
    return NULL;
}
