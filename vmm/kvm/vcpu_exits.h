/* The KVM exit reasons the vCPU thread handles, as data: the dispatcher
 * (vcpu_handle_exit) and the surface report read the same table. */
#ifndef AIRLOCK_KVM_VCPU_EXITS_H
#define AIRLOCK_KVM_VCPU_EXITS_H

#include <stdint.h>

#include "vmm/kvm/vm.h"

struct vcpu_exit {
    uint32_t reason;               /* KVM_EXIT_* */
    const char *name;              /* "KVM_EXIT_IO" */
    void (*handle)(struct vcpu *v);
    const char *handler;           /* the handler's function name */
    const char *what;              /* what the guest gets, one line */
};

/* Routes the exit in v->run; a reason not in the table stops the VM. */
void vcpu_handle_exit(struct vcpu *v);

/* The table's entry for `reason`, or NULL when it is not handled. */
const struct vcpu_exit *vcpu_exit_find(uint32_t reason);

/* Fills out[0..max) with the handled exits in reason order; returns how
 * many there are in all. */
unsigned vcpu_exit_list(const struct vcpu_exit **out, unsigned max);

#endif
