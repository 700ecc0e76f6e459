/* One microVM: the KVM VM, its RAM, its bus, its vCPU threads, and how it
 * ends.  Whatever ends it first (a guest reset, a fault, a signal) records
 * the exit status and reason; later causes are ignored. */
#ifndef AIRLOCK_KVM_VM_H
#define AIRLOCK_KVM_VM_H

#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "boot/loader.h"
#include "devices/bus.h"
#include "vmm/memory/gmem.h"
#include "vmm/kvm/kvm.h"

struct vm;

/* What kicks a vCPU thread out of KVM_RUN (its handler does nothing). */
#define VCPU_KICK_SIGNAL SIGUSR1

struct vcpu {
    struct vm *vm;
    unsigned id;
    int fd;
    struct kvm_run *run;
    pthread_t thread;
    bool started;
};

struct vm {
    struct kvm *kvm;
    int fd;
    struct gmem mem;
    struct bus bus;
    struct vcpu *vcpus;
    unsigned ncpus;
    atomic_bool stopping;
    pthread_mutex_t stop_lock;
    int exit_status;
    char exit_reason[256];
    int stop_efd; /* becomes readable once the VM is stopping */
    /* vm_pause (vm_pause.c): vCPUs park while pause_req is set. */
    pthread_mutex_t pause_lock;
    pthread_cond_t pause_cond;
    bool pause_req;
    unsigned parked;
};

/* Creates the VM with in-kernel irqchip and PIT, and gives it `mem` as its
 * RAM (the VM owns it from then on, even on failure: vm_destroy frees it).
 * -errno with `err` explaining. */
int vm_create(struct vm *vm, struct kvm *kvm, struct gmem *mem, char *err, size_t errlen);

/* Creates `ncpus` vCPUs; the first gets the entry state of `plan`, the rest
 * wait for the guest's INIT/SIPI. */
int vm_create_vcpus(struct vm *vm, unsigned ncpus, const struct boot_plan *plan,
                    char *err, size_t errlen);

/* Starts one thread per vCPU. */
int vm_start(struct vm *vm, char *err, size_t errlen);

/* Ends the VM with `status` (first call wins) and kicks every vCPU out of
 * KVM_RUN.  Safe from any thread. */
void vm_stop(struct vm *vm, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline bool vm_stopping(struct vm *vm)
{
    return atomic_load_explicit(&vm->stopping, memory_order_acquire);
}

/* Waits for every vCPU thread to leave (after vm_stop): no guest I/O
 * happens after this returns. */
void vm_join(struct vm *vm);

/* Joins the vCPU threads and releases everything. */
void vm_destroy(struct vm *vm);

/* Stops every vCPU at an instruction boundary, its pending I/O completed,
 * and returns once all are parked (0), or -ECANCELED when the VM is
 * stopping.  For snapshots: KVM state read while parked is consistent. */
int vm_pause(struct vm *vm);

/* Lets parked vCPUs run again. */
void vm_resume(struct vm *vm);

/* vCPU side: parks the calling vCPU while a pause is requested.  Called
 * after a KVM_RUN that returned EINTR (with immediate_exit set, KVM has
 * completed any pending MMIO/PIO by then). */
void vcpu_park_if_paused(struct vcpu *v);

/* The vCPU thread body (vcpu.c). */
void *vcpu_thread(void *arg);

/* Per-vCPU setup: CPUID (the vCPU's table, cpuid_for_vcpu), MSRs, LAPIC,
 * FPU, and for the boot vCPU the entry registers (vcpu_setup.c).  -errno
 * with `err` explaining. */
int vcpu_setup(struct vcpu *v, const struct kvm_cpuid2 *cpuid, const struct boot_plan *plan,
               char *err, size_t errlen);

#endif
