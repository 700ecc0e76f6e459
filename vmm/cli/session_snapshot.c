#include "vmm/cli/session_snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/virtio/mmio_snapshot.h"
#include "devices/virtio/vsock.h"
#include "vmm/agent_client/agent_client.h"
#include "vmm/snapshot/snapshot_file.h"
#include "vmm/snapshot/snapshot_memory.h"
#include "vmm/snapshot/vm_snapshot.h"

static void describe_disk(struct disk *d, unsigned i, struct snap_disk *sd)
{
    snprintf(sd->path, sizeof(sd->path), "%s", disk_path(d));
    disk_identity(d, &sd->size, &sd->dev, &sd->ino, &sd->mtime_ns);
    sd->read_only = disk_read_only(d);
    sd->cow = disk_is_cow(d);
    sd->cow_cap = disk_overlay_cap(d);
    if (sd->cow)
        snap_overlay_name(i, sd->overlay);
}

/* Everything but the vCPUs (parked) and the transports (locked by the
 * caller), which is why guest RAM cannot change under it. */
static int save_locked(struct boot_session *s, const struct snap_out *o, struct snap_state *st,
                       char *err, size_t errlen)
{
    int e = vm_snapshot_capture(&s->vm, st, err, errlen);
    if (e)
        return e;
    serial_save(&s->serial, &st->serial);
    st->nvirtio = s->vdevs.n;
    for (unsigned i = 0; i < s->vdevs.n; i++)
        virtio_mmio_save(&s->vdevs.devs[i].transport, &st->virtio[i]);
    st->ndisks = s->opt.ndisks;
    for (unsigned i = 0; i < s->opt.ndisks; i++) {
        describe_disk(s->disks[i], i, &st->disks[i]);
        if (st->disks[i].cow && (e = disk_snapshot_save(s->disks[i], o->overlay_fd[i]))) {
            snprintf(err, errlen, "saving disk %u's overlay: %s", i, strerror(-e));
            return e;
        }
    }
    return snap_memory_write(&s->vm.mem, o->memory_fd, o->zlib, err, errlen);
}

int session_snapshot_save(struct boot_session *s, const struct snap_out *o, char *err,
                          size_t errlen)
{
    struct snap_state *st = calloc(1, sizeof(*st));
    if (!st)
        return snprintf(err, errlen, "out of memory"), -ENOMEM;
    int e = vm_pause(&s->vm);
    if (e) {
        free(st);
        return snprintf(err, errlen, "the VM stopped before it could be paused"), e;
    }
    st->version = SNAP_VERSION;
    st->mem_mib = s->opt.mem_mib;
    st->ncpus = s->opt.cpus;
    st->cid = s->vsock ? s->opt.cid : 0;
    snprintf(st->memory, sizeof(st->memory), "%s", SNAP_MEMORY_FILE);
    st->memory_zlib = o->zlib;
    snprintf(st->cmdline, sizeof(st->cmdline), "%s", s->cmdline ? s->cmdline : "");
    for (unsigned i = 0; i < s->vdevs.n; i++)
        pthread_mutex_lock(&s->vdevs.devs[i].transport.lock);
    e = save_locked(s, o, st, err, errlen);
    for (unsigned i = s->vdevs.n; i-- > 0;)
        pthread_mutex_unlock(&s->vdevs.devs[i].transport.lock);
    void *blob = NULL;
    size_t len = 0;
    if (!e)
        e = snap_encode(st, &blob, &len, err, errlen);
    if (!e && (e = agent_write_all(o->state_fd, blob, len)))
        snprintf(err, errlen, "writing %s: %s", SNAP_STATE_FILE, strerror(-e));
    free(blob);
    free(st);
    return e;
}

int session_disks_check(const struct boot_session *s, const struct snap_state *st, char *err,
                        size_t errlen)
{
    for (unsigned i = 0; i < s->opt.ndisks && i < st->ndisks; i++) {
        int e = snap_disk_check(&st->disks[i], s->disks[i], err, errlen);
        if (e)
            return e;
    }
    return 0;
}

int session_overlays_load(struct boot_session *s, const struct snap_state *st,
                          const int *overlay_fd, char *err, size_t errlen)
{
    for (unsigned i = 0; i < st->ndisks; i++) {
        int e = overlay_fd[i] >= 0 ? disk_snapshot_load(s->disks[i], overlay_fd[i], err, errlen) : 0;
        if (e)
            return e;
    }
    return 0;
}

int snap_disk_check(const struct snap_disk *sd, const struct disk *d, char *err, size_t errlen)
{
    uint64_t size, dev, ino;
    int64_t mtime;
    disk_identity(d, &size, &dev, &ino, &mtime);
    if (size == sd->size && dev == sd->dev && ino == sd->ino && mtime == sd->mtime_ns &&
        disk_is_cow(d) == (bool)sd->cow && disk_read_only(d) == (bool)sd->read_only)
        return 0;
    snprintf(err, errlen,
             "%s is not the file the snapshot was taken with (size, inode or mtime "
             "changed): the guest's cached view of it would be wrong",
             sd->path);
    return -ESTALE;
}

int session_snapshot_restore(struct boot_session *s, const struct snap_state *st,
                             const int *overlay_fd, char *err, size_t errlen)
{
    if (st->nvirtio != s->vdevs.n || st->ndisks != s->opt.ndisks) {
        snprintf(err, errlen, "the snapshot has %u virtio devices and %u disks, this VM %u and %u",
                 st->nvirtio, st->ndisks, s->vdevs.n, s->opt.ndisks);
        return -EINVAL;
    }
    /* KVM first: the irqchips must be in place before a device raises a
     * line (the vsock reset below does). */
    int e = vm_snapshot_restore(&s->vm, st, err, errlen);
    if (e)
        return e;
    if ((e = serial_load(&s->serial, &st->serial))) {
        snprintf(err, errlen, "serial state: thri_pending is not 0 or 1");
        return e;
    }
    for (unsigned i = 0; i < s->vdevs.n; i++)
        if ((e = virtio_mmio_load(&s->vdevs.devs[i].transport, &st->virtio[i], err, errlen)))
            return e;
    if ((e = session_overlays_load(s, st, overlay_fd, err, errlen)))
        return e;
    if (s->vsock) {
        struct virtio_mmio *t = &s->vsock_vdev->transport;
        pthread_mutex_lock(&t->lock);
        virtio_vsock_transport_reset(s->vsock, t);
        pthread_mutex_unlock(&t->lock);
    }
    return 0;
}
