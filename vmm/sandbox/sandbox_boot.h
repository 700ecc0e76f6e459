/* Starting a sandbox's VM and taking it down again: its private folder
 * (agent.sock, vm.log), the `airlock sandbox-vm` process booted cold or
 * restored from a snapshot, and the wait until its agent answered. */
#ifndef AIRLOCK_SANDBOX_SANDBOX_BOOT_H
#define AIRLOCK_SANDBOX_SANDBOX_BOOT_H

#include <stddef.h>

#include <jansson.h>

#include "vmm/sandbox/create_mounts.h"
#include "vmm/sandbox/create_secrets.h"
#include "vmm/sandbox/registry.h"

/* Sandboxes get this long to boot and answer (the nested lab is slow). */
#define SANDBOX_READY_MS 120000
/* A sandbox's VM gets this long to end after SIGTERM, then SIGKILL. */
#define SANDBOX_STOP_MS 10000

/* How the VM is made; sb->image, mem_mib and cpus give its shape. */
struct sandbox_boot_req {
    const char *append;        /* extra kernel words (cold boots only), or NULL */
    json_t *allow, *allow_ip;  /* arrays of rules, or NULL */
    const char *from_snapshot; /* restore this snapshot instead of booting */
    bool cold;                 /* ...or boot afresh on its disks (--cold-boot) */
    const char *root_disk;     /* boot this --root-disk instead of sb->image, or NULL */
    /* The VM's limits as `airlock run` flags and their values ("--disk-cap",
     * "64", ...), NULL-terminated pairs; the VM checks them. */
    const char *const *limits;
    const struct create_secrets *secrets; /* --secret (their pipes), or NULL */
    const char *ca_file;                  /* --ca-file, or NULL */
    const struct create_mounts *mounts;   /* --mount (cold boots only), or NULL */
    /* A paused sandbox's next VM (from_snapshot its pause): its folder,
     * log and audit log are there already and stay, whatever happens. */
    bool resume;
};

/* Makes sb's folder under run_dir, starts its VM and waits until its
 * agent answered and took fresh entropy and the clock; sets sb->dir,
 * sock and pid.  0; else the HTTP status to answer (400 when the VM
 * refused the client's input, naming *field; 500 otherwise), err saying
 * why, and nothing left behind.  With mounts, they are mounted in the
 * guest, and with secrets the agent has their placeholders and the VM's
 * CA, before this returns. */
int sandbox_boot(const char *run_dir, struct sandbox *sb, const struct sandbox_boot_req *b,
                 char *err, size_t cap, const char **field);

/* Asks sb's guest to write back what its file systems hold (the agent's
 * SYNC, waiting AGENT_SYNC_WAIT_MS at most): 0 once it is on its disks,
 * or -errno with one line in why (no VM or agent answering included). */
int sandbox_sync(struct sandbox *sb, char *why, size_t cap);

/* Stops sb's VM process (a pause: the folder stays). */
void sandbox_vm_stop(struct sandbox *sb);

/* Stops sb's VM (when it runs) and removes its folder. */
void sandbox_teardown(struct sandbox *sb);

#endif
