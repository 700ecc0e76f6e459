#include "vmm/kvm/vm.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/kvm/cpuid.h"

/* Intel VMX needs three pages for the real-mode TSS somewhere the guest
 * never uses; just below the BIOS area at the top of 4 GiB, as QEMU does. */
#define VM_TSS_ADDR 0xfffbd000ULL

static int fail(char *err, size_t errlen, int e, const char *what)
{
    snprintf(err, errlen, "%s: %s", what, strerror(e));
    return -e;
}

int vm_create(struct vm *vm, struct kvm *kvm, struct gmem *mem, char *err, size_t errlen)
{
    memset(vm, 0, sizeof(*vm));
    vm->kvm = kvm;
    vm->mem = *mem; /* the VM owns the RAM from here on */
    memset(mem, 0, sizeof(*mem));
    vm->fd = -1;
    pthread_mutex_init(&vm->stop_lock, NULL);
    pthread_mutex_init(&vm->pause_lock, NULL);
    pthread_cond_init(&vm->pause_cond, NULL);
    vm->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (vm->stop_efd < 0)
        return fail(err, errlen, errno, "eventfd");
    vm->fd = ioctl(kvm->fd, KVM_CREATE_VM, 0);
    if (vm->fd < 0)
        return fail(err, errlen, errno, "KVM_CREATE_VM");
    /* Memory before the irqchip: whichever of the two comes second waits
     * for an SRCU grace period (~6 ms measured on kvm-pvm); in this order
     * the wait moves to teardown, after the guest has run. */
    for (unsigned i = 0; i < vm->mem.nregions; i++) {
        const struct gmem_region *r = &vm->mem.regions[i];
        struct kvm_userspace_memory_region region = {
            .slot = i, .guest_phys_addr = r->gpa, .memory_size = r->size,
            .userspace_addr = (uintptr_t)r->host,
        };
        if (ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
            return fail(err, errlen, errno, "KVM_SET_USER_MEMORY_REGION");
    }
    if (ioctl(vm->fd, KVM_SET_TSS_ADDR, VM_TSS_ADDR) < 0)
        return fail(err, errlen, errno, "KVM_SET_TSS_ADDR");
    if (ioctl(vm->fd, KVM_CREATE_IRQCHIP, 0) < 0)
        return fail(err, errlen, errno, "KVM_CREATE_IRQCHIP");
    /* The PIT's speaker port is stubbed in-kernel: no exit for port 0x61. */
    struct kvm_pit_config pit = {.flags = KVM_PIT_SPEAKER_DUMMY};
    if (ioctl(vm->fd, KVM_CREATE_PIT2, &pit) < 0)
        return fail(err, errlen, errno, "KVM_CREATE_PIT2");

    return 0;
}

int vm_create_vcpus(struct vm *vm, unsigned ncpus, const struct boot_plan *plan,
                    char *err, size_t errlen)
{
    struct kvm_cpuid2 *supported = cpuid_supported(vm->kvm);
    if (!supported)
        return fail(err, errlen, errno, "KVM_GET_SUPPORTED_CPUID");
    vm->vcpus = calloc(ncpus, sizeof(*vm->vcpus));
    int ret = 0;
    if (!vm->vcpus) {
        ret = fail(err, errlen, ENOMEM, "allocating vCPUs");
        goto out;
    }
    for (unsigned i = 0; i < ncpus; i++) {
        struct vcpu *v = &vm->vcpus[i];
        v->vm = vm;
        v->id = i;
        v->fd = ioctl(vm->fd, KVM_CREATE_VCPU, i);
        if (v->fd < 0) {
            ret = fail(err, errlen, errno, "KVM_CREATE_VCPU");
            goto out;
        }
        vm->ncpus = i + 1; /* from here on vm_destroy releases it */
        v->run = mmap(NULL, vm->kvm->vcpu_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                      v->fd, 0);
        if (v->run == MAP_FAILED) {
            v->run = NULL;
            ret = fail(err, errlen, errno, "mapping kvm_run");
            goto out;
        }
        struct kvm_cpuid2 *cpuid = cpuid_for_vcpu(supported, i, ncpus, vm->kvm->tsc_deadline);
        ret = cpuid ? vcpu_setup(v, cpuid, i == 0 ? plan : NULL, err, errlen)
                    : fail(err, errlen, ENOMEM, "allocating vCPUs");
        free(cpuid);
        if (ret)
            goto out;
    }
out:
    free(supported);
    return ret;
}

static void vcpu_kick_handler(int sig)
{
    (void)sig; /* its only job is to make KVM_RUN return EINTR */
}

int vm_start(struct vm *vm, char *err, size_t errlen)
{
    struct sigaction sa = {.sa_handler = vcpu_kick_handler};
    sigemptyset(&sa.sa_mask);
    if (sigaction(VCPU_KICK_SIGNAL, &sa, NULL) < 0)
        return fail(err, errlen, errno, "sigaction");
    for (unsigned i = 0; i < vm->ncpus; i++) {
        int e = pthread_create(&vm->vcpus[i].thread, NULL, vcpu_thread, &vm->vcpus[i]);
        if (e) {
            vm_stop(vm, 125, "cannot start vCPU thread %u: %s", i, strerror(e));
            return fail(err, errlen, e, "starting vCPU threads");
        }
        vm->vcpus[i].started = true;
    }
    return 0;
}

void vm_stop(struct vm *vm, int status, const char *fmt, ...)
{
    pthread_mutex_lock(&vm->stop_lock);
    if (vm_stopping(vm)) {
        pthread_mutex_unlock(&vm->stop_lock);
        return;
    }
    vm->exit_status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(vm->exit_reason, sizeof(vm->exit_reason), fmt, ap);
    va_end(ap);
    atomic_store_explicit(&vm->stopping, true, memory_order_release);
    /* immediate_exit covers a vCPU about to enter KVM_RUN; the signal one
     * already inside it. */
    for (unsigned i = 0; i < vm->ncpus; i++) {
        if (vm->vcpus[i].run)
            vm->vcpus[i].run->immediate_exit = 1;
        if (vm->vcpus[i].started && !pthread_equal(vm->vcpus[i].thread, pthread_self()))
            pthread_kill(vm->vcpus[i].thread, VCPU_KICK_SIGNAL);
    }
    uint64_t one = 1;
    if (write(vm->stop_efd, &one, sizeof(one)) < 0) {
        /* The counter cannot overflow with one write; nothing to do. */
    }
    pthread_mutex_unlock(&vm->stop_lock);
    /* Parked vCPUs (vm_pause) must see the stop and leave. */
    pthread_mutex_lock(&vm->pause_lock);
    pthread_cond_broadcast(&vm->pause_cond);
    pthread_mutex_unlock(&vm->pause_lock);
}

void vm_join(struct vm *vm)
{
    for (unsigned i = 0; i < vm->ncpus; i++) {
        if (vm->vcpus[i].started)
            pthread_join(vm->vcpus[i].thread, NULL);
        vm->vcpus[i].started = false;
    }
}

void vm_destroy(struct vm *vm)
{
    vm_join(vm);
    for (unsigned i = 0; i < vm->ncpus; i++) {
        struct vcpu *v = &vm->vcpus[i];
        if (v->run)
            munmap(v->run, vm->kvm->vcpu_mmap_size);
        if (v->fd >= 0)
            close(v->fd);
    }
    free(vm->vcpus);
    vm->vcpus = NULL;
    vm->ncpus = 0;
    gmem_destroy(&vm->mem);
    if (vm->fd >= 0)
        close(vm->fd);
    if (vm->stop_efd >= 0)
        close(vm->stop_efd);
    vm->fd = vm->stop_efd = -1;
}
