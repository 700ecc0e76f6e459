/* The vCPU thread: KVM_RUN, then route the exit through the table in
 * vcpu_exits.c. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>

#include "vmm/memory/layout.h"
#include "vmm/jail/seccomp.h"
#include "vmm/util/timings.h"
#include "vmm/kvm/vcpu_exits.h"
#include "vmm/kvm/vm.h"

/* For --timings' totals: the UART apart, since every byte the guest
 * prints is one of them. */
static enum timing_exit vcpu_exit_kind(const struct kvm_run *run)
{
    if (run->exit_reason == KVM_EXIT_IO)
        return run->io.port >= LAYOUT_COM1_PORT && run->io.port < LAYOUT_COM1_PORT + 8 ? TX_SERIAL
                                                                                     : TX_PIO;
    return run->exit_reason == KVM_EXIT_MMIO ? TX_MMIO : TX_OTHER;
}

void *vcpu_thread(void *arg)
{
    struct vcpu *v = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    /* A name tools (and tests/probe/seccomp-tests) can tell apart from the
     * event loop, which is the main thread, and the workers; set before the
     * filter, which does not allow prctl. */
    char name[16];
    snprintf(name, sizeof(name), "airlock-vcpu%u", v->id);
    prctl(PR_SET_NAME, name);
    int e = seccomp_apply(SECCOMP_VCPU); /* before the first guest instruction */
    if (e) {
        vm_stop(v->vm, 125, "vCPU %u: cannot install the seccomp filter: %s", v->id, strerror(-e));
        return NULL;
    }

    while (!vm_stopping(v->vm)) {
        if (ioctl(v->fd, KVM_RUN, 0) < 0) {
            if (errno == EINTR || errno == EAGAIN) {
                vcpu_park_if_paused(v);
                continue;
            }
            vm_stop(v->vm, 125, "vCPU %u: KVM_RUN failed: %s", v->id, strerror(errno));
            break;
        }
        timings_count_exit(vcpu_exit_kind(v->run));
        vcpu_handle_exit(v);
    }
    return NULL;
}
