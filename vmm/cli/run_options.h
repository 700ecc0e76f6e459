/* `airlock run` and `airlock snapshot` options: the shared VM flags
 * (vmm/cli/vm_options.h) plus the command's own, parsed into the run context
 * and what is left to decide after parsing (which kernel, which image). */
#ifndef AIRLOCK_CLI_RUN_OPTIONS_H
#define AIRLOCK_CLI_RUN_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/cli/boot_options.h"
#include "vmm/cli/run_ctx.h"
#include "vmm/cli/vm_options.h"

/* What parsing leaves for the steps after it. */
struct run_args {
    struct boot_options vm;
    const char *image;         /* --image (vmm/image/image_ref.h): NULL is python */
    const char *root_disk;     /* --root-disk: an ext4 root without an agent */
    const char *entrypoint;    /* --entrypoint: NULL (the image's), "" (none) */
    bool user_given;           /* --user (else an imported image's User) */
    const char *append;        /* --append */
    const char *audit_path;    /* --audit */
    const char *audit_id;      /* --audit-id (sandbox-vm: its sandbox's id as "vm") */
    const char *from_snapshot; /* --from-snapshot DIR */
    bool cold_boot;            /* --cold-boot: boot afresh on the snapshot's disks */
    uint64_t disk_cap_mib;     /* --disk-cap */
    int cmd_index;             /* argv index of CMD */
};

/* Parses argv (argv[0] is "run" or "snapshot") into r and a, with every
 * default set first.  Returns 0, 1 when --help was printed, or -EINVAL
 * with err naming the bad option (the caller prints it once). */
int run_options_parse(struct run_ctx *r, struct run_args *a, int argc, char **argv,
                      char *err, size_t errlen);

/* The command request (argv, environment with the defaults -e did not
 * override, stdin) from what was parsed and, for an imported image, its
 * config's defaults (call run_options_vm first: it resolves the image).
 * 0 or -EINVAL with err (no command, an image User that needs --user). */
int run_options_request(struct run_ctx *r, const struct run_args *a, int argc, char **argv,
                        char *err, size_t errlen);

/* Which kernel, root image and command line the VM gets: the defaults
 * beside the airlock binary, or the snapshot's (--from-snapshot).
 * 0 or -EINVAL with err.  This and run_options_agent_disk are in
 * run_options_vm.c. */
int run_options_vm(struct run_ctx *r, struct run_args *a, char *err, size_t errlen);

/* An imported image's agent disk (guest/agent.ext4, read-only), after
 * every other disk so theirs keep their places, and the command line
 * that boots from it.  Call it after --mount's disks are attached.  0
 * (also for a built-in image or a snapshot) or -EINVAL with err. */
int run_options_agent_disk(struct run_ctx *r, struct run_args *a, char *err, size_t errlen);

#endif
