/* What `airlock run` and `airlock snapshot` carry from option parsing
 * (cmd_run.c) to the threads that drive the VM (run_thread.c). */
#ifndef AIRLOCK_CLI_RUN_CTX_H
#define AIRLOCK_CLI_RUN_CTX_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "guest/agent/proto.h"
#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/command_defaults.h"
#include "vmm/audit/audit.h"
#include "vmm/cli/commands.h"
#include "vmm/egress/egress.h"
#include "vmm/forward/forward.h"
#include "vmm/image/image_ref.h"
#include "vmm/cli/mount_options.h"
#include "vmm/cli/run_copy.h"
#include "vmm/cli/run_tty.h"
#include "vmm/cli/session_snapshot.h"

#define RUN_MAX_ENV 256
#define RUN_DEFAULT_ENVS COMMAND_DEFAULT_ENVS /* vmm/agent_client/command_defaults.h */
#define RUN_MAX_COPIES 32
#define RUN_COPY_OUT_MAX (1ULL << 30) /* a guest cannot make us write more */
#define RUN_AGENT_WAIT_MS 120000 /* boot + agent start, generous for the lab */
/* Tries to reach an agent that gave no boot-timer mark (run_thread.c). */
#define RUN_AGENT_RETRY_MS 200

enum run_mode {
    RUN_EXEC,     /* airlock run: boot (or restore), run CMD, exit with its status */
    RUN_SNAPSHOT, /* airlock snapshot: boot until the agent is ready, save, stop */
    RUN_HOLD,     /* airlock sandbox-vm: boot (or restore) and keep the VM, its egress
                   * and its agent (reached through --vsock-uds) until a signal ends it:
                   * one sandbox of airlock serve, which runs the commands */
};

struct run_ctx {
    struct agent_exec_req req;
    struct run_copy copy_in[RUN_MAX_COPIES], copy_out[RUN_MAX_COPIES];
    unsigned ncopy_in, ncopy_out;
    struct mount_list mounts; /* --mount and --volume: their disks and guest folders */
    const char *state_dir;    /* --state: where --volume's are (NULL: the default) */
    /* -e's, an imported image's Env (as many again at most), the defaults */
    const char *env[RUN_MAX_ENV * 2 + RUN_DEFAULT_ENVS + 1];
    unsigned nenv;
    bool with_stdin;
    struct run_tty tty; /* -t */
    /* -p: each published port, its listener (bound before the jail, in
     * our network namespace) and the address it got */
    struct run_publish {
        struct forward_spec spec;
        int fd;
        char address[64];
    } publish[FORWARD_MAX_PORTS];
    unsigned npublish;
    struct forwarder *forwarder; /* -p's, once the agent answered */
    /* Where the command's stdout and stderr go: our own, or their
     * non-blocking twins (vmm/util/nbfd.h) when they are pipes or terminals,
     * so a stalled reader cannot hold up --timeout. */
    int out_fd, err_fd;
    uint64_t max_output; /* bytes of stdout + stderr together */
    struct audit audit;
    struct egress_config egress_cfg;
    struct egress egress;
    int broker;
    /* --secret: NAME=<placeholder> for the guest, and the VM's CA (PEM) */
    char secret_env[SECRET_MAX][SECRET_NAME_MAX + SECRET_VALUE_MAX + 2];
    const char *secret_envp[SECRET_MAX];
    const char *ca_pem;
    size_t ca_pem_len;
    int ready_efd;   /* readable once the agent said it listens (boot timer) */
    bool ready_seen; /* ... and agent_connect has seen it */
    uint8_t seed[AGENT_RESEED_SEED]; /* for the guest's CRNG (drawn before the filter) */
    struct boot_session *session;
    struct vm *vm;
    struct virtio_vsock *vsock;
    struct vdev *vdev;
    pthread_t thread;
    enum run_mode mode;
    const char *snap_dir; /* snapshot: --out DIR */
    bool snap_zlib;       /* snapshot: --compress */
    struct snap_out snap_out;
    int control_fd;       /* sandbox-vm: --control-fd (vmm/cli/run_control.h), else -1 */
    int egress_update_fd; /* sandbox-vm: --egress-control-fd, the broker's (egress_rules.h), else -1 */
    struct image_ref image; /* what --image named */
    char kernel[PATH_MAX], agent_spec[PATH_MAX + 8], image_spec[PATH_MAX + 32], cmdline[2048];
    const char *append; /* --append, for the command line set last */
    char restore_specs[SNAP_MAX_DISKS][PATH_MAX + 32]; /* --from-snapshot's disks */
};

/* The session hook both modes give vm_session. */
extern const struct session_hook run_hook_template;

#endif
