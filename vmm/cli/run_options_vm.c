/* What `airlock run` decides once its options are parsed: which kernel,
 * root image and command line the VM gets (the defaults beside the airlock
 * binary, an imported image with its agent disk, or a snapshot's); see
 * run_options.h.  cmd_run.c calls it after run_options_parse; nothing
 * here calls back into run_options.c. */
#include "vmm/cli/run_options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "vmm/image/image_ref.h"
#include "vmm/kvm/virtio_devices.h"
#include "vmm/memory/layout.h"
#include "vmm/snapshot/snapshot_dir.h"
#include "vmm/util/guest_paths.h"

#define RUN_CMDLINE_BASE "reboot=k panic=-1 quiet loglevel=0 "
/* The serial port only when --console keeps what it prints.  Without
 * one, no UART at all: the 8250 driver's probe and its opening by init
 * were 119 of a cold run's 332 VM exits, for bytes nobody reads
 * (docs/benchmarks.md, "Cold start"); the agent finds no /dev/console
 * and puts /dev/null on its stdio. */
#define RUN_CMDLINE_CONSOLE "console=ttyS0"
#define RUN_CMDLINE_NO_CONSOLE "8250.nr_uarts=0"
/* A built-in image: the disk's own agent is PID 1. */
#define RUN_CMDLINE RUN_CMDLINE_BASE "root=/dev/vda rw init=/sbin/airlock-agent"
/* An imported one: the agent is /init of airlock's small agent disk, the
 * kernel's root, and makes the image's disk the root itself
 * (guest/agent/switch_root.c).  %c: the agent disk's letter. */
#define RUN_CMDLINE_IMPORTED RUN_CMDLINE_BASE "root=/dev/vd%c ro init=/init airlock.root=/dev/vda"

/* --from-snapshot DIR: the VM's shape and disks come from the snapshot.
 * With --cold-boot the kernel boots afresh on them (the snapshot's memory
 * is neither read nor needed), with the command line the snapshot's VM
 * booted with, less the device announcements the boot adds again. */
static int restore_options(struct run_ctx *r, struct boot_options *o, const char *dir, bool cold,
                           char *err, size_t errlen)
{
    struct snap_state *st;
    if (snap_dir_open(dir, &st, cold ? NULL : &o->restore_memory_fd, o->restore_overlay_fd, err,
                      errlen))
        return -EINVAL;
    if (!st->cid) {
        snprintf(err, errlen, "--from-snapshot %s: the snapshot's VM has no vsock "
                 "device, so no agent to run the command", dir);
        return -EINVAL;
    }
    o->mem_mib = st->mem_mib;
    o->cpus = st->ncpus;
    o->cid = st->cid;
    o->cmdline = st->cmdline;
    if (cold) {
        o->overlays = st;
        int e = st->nvirtio == st->ndisks + 1 /* its disks and vsock: no spare slots */
                    ? vdevs_cmdline_undo(r->cmdline, sizeof(r->cmdline), st->cmdline, st->nvirtio)
                    : -EINVAL;
        if (e) {
            snprintf(err, errlen, "--from-snapshot %s --cold-boot: %s", dir,
                     e == -E2BIG    ? "the snapshot's kernel command line is too long"
                     : e == -EINVAL ? "the snapshot's VM had spare disk slots (a pod's VM)"
                                    : "the snapshot's kernel command line does not announce "
                                      "its devices as airlock does");
            return -EINVAL;
        }
        o->cmdline = r->cmdline;
    } else {
        o->restore = st;
    }
    o->ndisks = st->ndisks;
    for (unsigned i = 0; i < st->ndisks; i++) {
        const struct snap_disk *d = &st->disks[i];
        char how[40] = "";
        if (d->read_only)
            snprintf(how, sizeof(how), ",ro");
        else if (d->cow)
            snprintf(how, sizeof(how), ",cow=%lluK", (unsigned long long)(d->cow_cap >> 10));
        if (snprintf(r->restore_specs[i], sizeof(r->restore_specs[i]), "%s%s", d->path, how) >=
            (int)sizeof(r->restore_specs[i])) {
            snprintf(err, errlen, "--from-snapshot: a disk path in the snapshot is too long");
            return -EINVAL;
        }
        o->disks[i] = r->restore_specs[i];
    }
    return 0;
}

static int set_cmdline(struct run_ctx *r, const struct boot_options *o, const char *base,
                       char *err, size_t errlen)
{
    const char *console =
        strcmp(o->console, "none") ? RUN_CMDLINE_CONSOLE : RUN_CMDLINE_NO_CONSOLE;
    if (snprintf(r->cmdline, sizeof(r->cmdline), "%s %s %s", console, base, r->append) >=
        (int)sizeof(r->cmdline)) {
        snprintf(err, errlen, "--append: too long");
        return -EINVAL;
    }
    return 0;
}

/* The root image as disk 0, the --disk ones after it (an imported one's
 * agent disk comes last: run_options_agent_disk). */
static int add_root_image(struct run_ctx *r, struct run_args *a, char *err, size_t errlen)
{
    struct boot_options *o = &a->vm;
    if (a->root_disk && a->image) {
        snprintf(err, errlen, "--root-disk and --image: give one root");
        return -EINVAL;
    }
    if (a->root_disk ? image_ref_bare_disk(a->root_disk, &r->image, err, errlen)
                     : image_ref_resolve(a->image, &r->image, err, errlen))
        return -EINVAL;
    if (snprintf(r->image_spec, sizeof(r->image_spec), "%s,cow=%lluM", r->image.disk,
                 (unsigned long long)a->disk_cap_mib) >= (int)sizeof(r->image_spec)) {
        snprintf(err, errlen, "--image: path too long");
        return -EINVAL;
    }
    memmove(&o->disks[1], &o->disks[0], o->ndisks * sizeof(o->disks[0]));
    memmove(&o->disk_flags[1], &o->disk_flags[0], o->ndisks * sizeof(o->disk_flags[0]));
    o->disks[0] = r->image_spec;
    o->disk_flags[0] = "--image";
    o->ndisks++;
    r->append = a->append;
    if (r->image.own_agent && set_cmdline(r, o, RUN_CMDLINE, err, errlen))
        return -EINVAL;
    o->cmdline = r->cmdline;
    return 0;
}

int run_options_agent_disk(struct run_ctx *r, struct run_args *a, char *err, size_t errlen)
{
    struct boot_options *o = &a->vm;
    if (a->from_snapshot || r->image.own_agent)
        return 0;
    if (o->ndisks + o->spare_disks + 1 >= LAYOUT_VIRTIO_SLOTS) { /* + the vsock device */
        snprintf(err, errlen, "--image '%.128s': an imported image needs a virtio slot for "
                 "airlock's agent disk, and --disk/--mount/--spare-disks took them all", r->image.name);
        return -EINVAL;
    }
    char disk[PATH_MAX], base[sizeof(RUN_CMDLINE_IMPORTED)];
    guest_default_path(disk, sizeof(disk), IMAGE_AGENT_DISK);
    snprintf(r->agent_spec, sizeof(r->agent_spec), "%.4000s,ro", disk);
    snprintf(base, sizeof(base), RUN_CMDLINE_IMPORTED, 'a' + (int)o->ndisks);
    o->disks[o->ndisks] = r->agent_spec;
    o->disk_flags[o->ndisks] = "--image";
    o->ndisks++;
    return set_cmdline(r, o, base, err, errlen);
}

int run_options_vm(struct run_ctx *r, struct run_args *a, char *err, size_t errlen)
{
    if (!a->vm.kernel) {
        guest_default_kernel(r->kernel, sizeof(r->kernel), a->vm.cpus);
        a->vm.kernel = r->kernel;
    }
    if (a->from_snapshot)
        return restore_options(r, &a->vm, a->from_snapshot, a->cold_boot, err, errlen);
    return add_root_image(r, a, err, errlen);
}
