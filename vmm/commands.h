/* The subcommands of the airlock binary. */
#ifndef AIRLOCK_VMM_COMMANDS_H
#define AIRLOCK_VMM_COMMANDS_H

#include "vmm/boot_options.h"
#include "vmm/virtio_devices.h"

struct virtio_vsock;

/* airlock boot [options]: argv[0] is "boot". */
int cmd_boot(int argc, char **argv);

/* airlock run [options] -- CMD [ARGS...]: argv[0] is "run". */
int cmd_run(int argc, char **argv);

/* What a command running on top of a booted VM gets told. */
struct session_hook {
    /* Called on the main thread once the vCPUs run; nonzero stops the VM. */
    int (*started)(void *opaque, struct vm *vm, struct virtio_vsock *vsock, struct vdev *vdev);
    /* Optional: a guest connection to host vsock port `port` that the
     * command serves itself (fd for the device), or -ENOENT for the
     * --vsock-uds mapping.  Called from the event loop. */
    int (*serve_port)(void *opaque, uint32_t port);
    /* Optional: the guest agent said it listens (boot timer), once.
     * Called from a vCPU thread: it must only signal. */
    void (*agent_ready)(void *opaque);
    void *opaque;
};

/* Boots and runs one VM as `opt` says until it stops; returns the exit
 * status (the process has already reported it when detached). */
int vm_session(const struct boot_options *opt, const struct session_hook *hook);

#endif
