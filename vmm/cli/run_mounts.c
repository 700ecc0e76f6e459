/* --mount's disks; see run_mounts.h. */
#include "vmm/cli/run_mounts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm/image/dir_disk.h"
#include "vmm/image/image_store.h"
#include "vmm/util/timings.h"
#include "vmm/util/user_dirs.h"
#include "vmm/volume/volume_check.h"
#include "vmm/volume/volume_hold.h"

/* Whether this use found the disk or made it, and what that cost: only
 * with --timings (the test of the cache reads the store, not this). */
static void say(const struct mount_spec *m, const struct dir_disk *d)
{
    if (!timings_enabled())
        return;
    if (d->cached)
        fprintf(stderr, "airlock: --mount %s: cached disk %s (walk %u ms, %llu entries)\n",
                m->arg, d->path, d->walk_ms, (unsigned long long)d->walk.entries);
    else
        fprintf(stderr, "airlock: --mount %s: made disk %s in %u ms (walks %u ms, %llu entries, "
                "%llu MiB of files)\n", m->arg, d->path, d->make_ms, d->walk_ms,
                (unsigned long long)d->walk.entries,
                (unsigned long long)((d->walk.bytes + (1 << 20) - 1) >> 20));
}

/* A --volume's disk: held by this process (until it ends: a holder whose
 * process is gone is dropped by the next look), then checked. */
static int attach_volume(struct volume_store *vs, struct mount_spec *m, char *err, size_t errlen)
{
    struct volume_holder me, in_way;
    char why[600], did[400], who[80];
    bool readers_before;
    volume_holder_self(&me, !m->rw);
    int rc = volume_hold(vs, m->name, &me, &readers_before, &in_way);
    if (rc == -ENOENT) {
        snprintf(err, errlen, "--volume '%.200s': no volume '%s' in %s (airlock volume create %s)",
                 m->arg, m->name, vs->dir, m->name);
        return -EINVAL;
    }
    if (rc == -EBUSY) {
        volume_holder_text(&in_way, who, sizeof(who));
        snprintf(err, errlen, "--volume '%.200s': the volume %s is in use by %s (%s)", m->arg,
                 m->name, who, in_way.readonly ? "read-only" : "read-write");
        return -EINVAL;
    }
    if (rc) {
        snprintf(err, errlen, "--volume '%.200s': %s", m->arg,
                 rc == -EIO ? "its record is damaged" : strerror(-rc));
        return -EINVAL;
    }
    if (volume_check(vs, m->name, readers_before, did, sizeof(did), why, sizeof(why))) {
        volume_release(vs, m->name, &me);
        snprintf(err, errlen, "--volume '%.200s': %s", m->arg, why);
        return -EINVAL;
    }
    if (strcmp(did, "clean"))
        fprintf(stderr, "airlock: --volume %s: %s\n", m->arg, did);
    /* the disk itself, read-write (its writes are the volume's), or
     * read-only (the device refuses writes, as a :ro --mount's) */
    char disk[PATH_MAX];
    volume_disk_path(vs, m->name, disk, sizeof(disk));
    snprintf(m->disk_spec, sizeof(m->disk_spec), "%s%s", disk, m->rw ? "" : ",ro");
    return 0;
}

int run_mounts_attach(struct mount_list *l, struct boot_options *o, const char *state_dir,
                      char *err, size_t errlen)
{
    if (!l->n)
        return 0;
    struct image_store st;
    struct volume_store vs;
    char why[1024], state[PATH_MAX];
    bool volumes = false, folders = false;
    for (unsigned i = 0; i < l->n; i++) {
        volumes = volumes || l->m[i].volume;
        folders = folders || !l->m[i].volume;
    }
    if (volumes) {
        if (!state_dir)
            user_dir(USER_DIR_STATE, state, sizeof(state));
        if (volume_store_open(&vs, state_dir ? state_dir : state, why, sizeof(why))) {
            snprintf(err, errlen, "--volume: %s", why);
            return -EINVAL;
        }
    }
    if (folders && image_store_open(&st, why, sizeof(why))) {
        snprintf(err, errlen, "--mount: %s", why);
        return -EINVAL;
    }
    if (folders && strchr(st.root, ',')) { /* a --disk spec ends its path at a ',' */
        snprintf(err, errlen, "--mount: the image store's path %.300s holds a ','; set "
                 "AIRLOCK_HOME to one without", st.root);
        return -EINVAL;
    }
    struct layer_limits lim;
    dir_disk_limits(&lim);
    for (unsigned i = 0; i < l->n; i++) {
        struct mount_spec *m = &l->m[i];
        struct dir_disk d;
        unsigned owner = mount_list_owner(l, i);
        if (owner != i) { /* the same folder and mode as an earlier --mount: its disk */
            m->device = l->m[owner].device;
            if (timings_enabled())
                fprintf(stderr, "airlock: --mount %s: the disk of --mount %s\n", m->arg,
                        l->m[owner].arg);
            continue;
        }
        if (o->ndisks >= LAYOUT_VIRTIO_SLOTS || o->ndisks > AGENT_MOUNT_MAX_DEVICE) {
            snprintf(err, errlen, "%s '%.200s': no virtio slot left for its disk", m->flag, m->arg);
            return -EINVAL;
        }
        if (m->volume) {
            if (attach_volume(&vs, m, err, errlen))
                return -EINVAL;
        } else {
            if (dir_disk_get(&st, m->host, &lim, &d, why, sizeof(why))) {
                snprintf(err, errlen, "--mount '%.200s': HOSTDIR: %s", m->arg, why);
                return -EINVAL;
            }
            say(m, &d);
            snprintf(m->disk_spec, sizeof(m->disk_spec), "%s,%s", d.path, m->rw ? "cow" : "ro");
        }
        m->device = o->ndisks;
        o->disks[o->ndisks] = m->disk_spec;
        o->disk_flags[o->ndisks] = m->flag;
        o->ndisks++;
    }
    return 0;
}
