/* Pausing the vCPUs for a snapshot.  The requester sets immediate_exit and
 * kicks each vCPU out of KVM_RUN (as vm_stop does); a vCPU that was mid-
 * exit re-enters KVM_RUN, which with immediate_exit set completes the
 * pending MMIO/PIO instruction and returns EINTR at once, and only then
 * parks.  So when vm_pause returns, no vCPU is inside the guest or
 * half-way through an instruction. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>

#include "vmm/kvm/vm.h"

static unsigned started(const struct vm *vm)
{
    unsigned n = 0;
    for (unsigned i = 0; i < vm->ncpus; i++)
        n += vm->vcpus[i].started;
    return n;
}

int vm_pause(struct vm *vm)
{
    pthread_mutex_lock(&vm->pause_lock);
    vm->pause_req = true;
    for (unsigned i = 0; i < vm->ncpus; i++) {
        if (vm->vcpus[i].run)
            vm->vcpus[i].run->immediate_exit = 1;
        if (vm->vcpus[i].started)
            pthread_kill(vm->vcpus[i].thread, VCPU_KICK_SIGNAL);
    }
    unsigned want = started(vm);
    while (vm->parked < want && !vm_stopping(vm))
        pthread_cond_wait(&vm->pause_cond, &vm->pause_lock);
    int r = vm_stopping(vm) ? -ECANCELED : 0;
    pthread_mutex_unlock(&vm->pause_lock);
    return r;
}

void vm_resume(struct vm *vm)
{
    pthread_mutex_lock(&vm->pause_lock);
    vm->pause_req = false;
    pthread_cond_broadcast(&vm->pause_cond);
    pthread_mutex_unlock(&vm->pause_lock);
}

void vcpu_park_if_paused(struct vcpu *v)
{
    struct vm *vm = v->vm;
    pthread_mutex_lock(&vm->pause_lock);
    if (!vm->pause_req) {
        pthread_mutex_unlock(&vm->pause_lock);
        return;
    }
    vm->parked++;
    pthread_cond_broadcast(&vm->pause_cond);
    while (vm->pause_req && !vm_stopping(vm))
        pthread_cond_wait(&vm->pause_cond, &vm->pause_lock);
    vm->parked--;
    /* Clear it before the loop checks vm_stopping: a stop after this sets
     * it again (vm_stop), a stop before is seen by that check. */
    if (!vm_stopping(vm))
        v->run->immediate_exit = 0;
    pthread_mutex_unlock(&vm->pause_lock);
}
