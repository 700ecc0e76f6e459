/* The subcommands of the airlock binary. */
#ifndef AIRLOCK_CLI_COMMANDS_H
#define AIRLOCK_CLI_COMMANDS_H

#include "vmm/cli/boot_options.h"
#include "vmm/kvm/virtio_devices.h"

struct virtio_vsock;
struct boot_session;

/* airlock boot [options]: argv[0] is "boot". */
int cmd_boot(int argc, char **argv);

/* airlock run [options] -- CMD [ARGS...]: argv[0] is "run". */
int cmd_run(int argc, char **argv);

/* airlock snapshot --out DIR [VM options]: argv[0] is "snapshot". */
int cmd_snapshot(int argc, char **argv);

/* airlock sandbox-vm [VM options] --vsock-uds PATH: one sandbox's VM,
 * held until a signal (what airlock serve starts; vmm/cli/cmd_run.c). */
int cmd_sandbox_vm(int argc, char **argv);

/* airlock serve [options]: the sandbox daemon (vmm/cli/cmd_serve.c). */
int cmd_serve(int argc, char **argv);

/* The docker-like verbs, clients of airlock serve (vmm/cli/cmd_sandbox.c). */
int cmd_create(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_rm(int argc, char **argv);
/* airlock stats [--no-stream] [--format json] [ID...] (vmm/cli/cmd_stats.c). */
int cmd_stats(int argc, char **argv);
int cmd_pause(int argc, char **argv);
int cmd_resume(int argc, char **argv);
/* airlock update ID --allow ... --timeout S (vmm/cli/cmd_update.c). */
int cmd_update(int argc, char **argv);
/* airlock cp SRC DST: files and folders in and out of a sandbox (vmm/cli/cmd_cp.c). */
int cmd_cp(int argc, char **argv);

/* airlock image import|ls|inspect|rm: the image store (vmm/cli/cmd_image.c). */
int cmd_image(int argc, char **argv);

/* airlock volume create|ls|rm: named volumes (vmm/cli/cmd_volume.c). */
int cmd_volume(int argc, char **argv);

/* airlock mcp [sandbox options]: an MCP server on stdio (vmm/cli/cmd_mcp.c). */
int cmd_mcp(int argc, char **argv);

/* What a command running on top of a booted VM gets told. */
struct session_hook {
    /* Called on the main thread once the vCPUs run; nonzero stops the VM.
     * `s` is the whole session (vmm/cli/session.h), for snapshots. */
    int (*started)(void *opaque, struct boot_session *s, struct vm *vm,
                   struct virtio_vsock *vsock, struct vdev *vdev);
    /* Optional: a guest connection to host vsock port `port` that the
     * command serves itself (fd for the device), or -ENOENT for the
     * --vsock-uds mapping.  Called from the event loop. */
    int (*serve_port)(void *opaque, uint32_t port);
    /* Optional: called in the VM process once devices exist and before
     * the jail (the last moment files can be opened); nonzero with err
     * filled ends the session with that error. */
    int (*before_jail)(void *opaque, struct boot_session *s, char *err, size_t errlen);
    /* Optional: the guest agent said it listens (boot timer), once.
     * Called from a vCPU thread: it must only signal. */
    void (*agent_ready)(void *opaque);
    /* Optional: in the parent that waits for the VM process (vmm/jail/detach.h),
     * outside the jail, once its status is known; returns the status to
     * exit with.  With it the VM process must be detached (no fork: an
     * error). */
    int (*parent_finish)(void *opaque, int status);
    /* parent_finish may unpack a folder (vmm/jail/detach.h finish_unpacks). */
    bool parent_unpacks;
    /* Optional, in that parent: before its filter goes on, and on SIGWINCH
     * (vmm/jail/detach.h start, winch). */
    void (*parent_start)(void *opaque);
    void (*parent_winch)(void *opaque);
    void *opaque;
};

/* Boots and runs one VM as `opt` says until it stops; returns the exit
 * status (the process has already reported it when detached). */
int vm_session(const struct boot_options *opt, const struct session_hook *hook);

#endif
