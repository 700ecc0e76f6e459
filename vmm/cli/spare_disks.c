#include "vmm/cli/spare_disks.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "devices/disk.h"
#include "devices/virtio/blk.h"
#include "vmm/audit/limits.h"
#include "vmm/cli/session.h"
#include "vmm/snapshot/disk_control.h"

/* Spare k is slot ndisks + k of s->blks and of s->vdevs (the disks are
 * registered first, in order, then the spares, then vsock). */
static unsigned first(const struct boot_session *s)
{
    return s->opt.ndisks;
}

int spare_disks_create(struct boot_session *s, struct machine_devices *m)
{
    for (unsigned k = 0; k < s->opt.spare_disks; k++) {
        char serial[16];
        snprintf(serial, sizeof(serial), "spare%u", k);
        unsigned i = first(s) + k;
        int e = virtio_blk_create_spare(serial, &s->blks[i]);
        if (e)
            return e;
        m->blks[i] = s->blks[i];
        m->nblks = i + 1;
    }
    return 0;
}

int spare_disks_first_filled(const struct boot_session *s)
{
    for (unsigned k = 0; k < s->opt.spare_disks; k++)
        if (virtio_blk_disk(s->blks[first(s) + k]))
            return (int)k;
    return -1;
}

static const char *fill(struct boot_session *s, const struct disk_control_req *r,
                        struct virtio_mmio *t, int *fds, char *why, size_t cap)
{
    struct virtio_blk *b = s->blks[first(s) + r->slot];
    if (virtio_blk_disk(b)) {
        snprintf(why, cap, "slot %u is already filled (serial %s): empty it first", r->slot,
                 disk_serial(virtio_blk_disk(b)));
        return why;
    }
    char err[256];
    struct disk *d;
    if (disk_open_fds(fds[0], fds[1], r->cow_cap, r->serial, &d, err, sizeof(err))) {
        /* "base: ..." and "overlay: ..." are about the fds; "serial ..."
         * and "cow cap ..." about the request's words. */
        bool about_fds = !strncmp(err, "base", 4) || !strncmp(err, "overlay", 7);
        bool about_words = !strncmp(err, "serial", 6) || !strncmp(err, "cow cap", 7);
        snprintf(why, cap, "%s%s", about_fds ? "bad fds: " : about_words ? "bad " : "", err);
        return why;
    }
    fds[0] = fds[1] = -1; /* the disk's now */
    disk_set_on_full(d, limits_disk_full, NULL);
    struct disk *old;
    int e = virtio_blk_swap(t, d, &old);
    if (e) {
        disk_close(d);
        snprintf(why, cap, "slot %u: %s", r->slot, strerror(-e));
        return why;
    }
    return NULL;
}

/* The request runs on the control thread while the event loop may be
 * serving this device's queue: virtio_blk_swap takes the transport's lock,
 * which the loop holds for the whole of each queue's service, so no
 * request is half done on the disk being replaced or closed here. */
const char *spare_disks_request(struct boot_session *s, const char *text, size_t n, int *fds,
                                unsigned nfds, char *why, size_t cap)
{
    struct disk_control_req r;
    if (disk_control_parse(text, n, nfds, &r, why, cap))
        return why;
    if (r.slot >= s->opt.spare_disks) {
        snprintf(why, cap, "slot %u is not a spare (this VM has %u spare%s%s)", r.slot,
                 s->opt.spare_disks, s->opt.spare_disks == 1 ? "" : "s",
                 s->opt.spare_disks ? ", numbered from 0" : ": --spare-disks");
        return why;
    }
    struct virtio_mmio *t = &s->vdevs.devs[first(s) + r.slot].transport;
    if (r.op == DISK_CONTROL_FILL)
        return fill(s, &r, t, fds, why, cap);
    struct disk *old;
    int e = virtio_blk_swap(t, NULL, &old);
    if (e) {
        snprintf(why, cap, "slot %u: %s", r.slot, strerror(-e));
        return why;
    }
    disk_close(old); /* the device no longer uses it; its overlay goes with it */
    return NULL;
}

void spare_disks_destroy(struct boot_session *s)
{
    for (unsigned k = 0; k < s->opt.spare_disks; k++) {
        struct virtio_blk *b = s->blks[first(s) + k];
        if (!b)
            continue;
        disk_close(virtio_blk_disk(b));
        virtio_blk_destroy(b);
        s->blks[first(s) + k] = NULL;
    }
}
