/* --mount's disks; see run_mounts.h. */
#include "vmm/cli/run_mounts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm/image/dir_disk.h"
#include "vmm/image/image_store.h"
#include "vmm/util/timings.h"

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

int run_mounts_attach(struct mount_list *l, struct boot_options *o, char *err, size_t errlen)
{
    if (!l->n)
        return 0;
    struct image_store st;
    char why[1024];
    if (image_store_open(&st, why, sizeof(why))) {
        snprintf(err, errlen, "--mount: %s", why);
        return -EINVAL;
    }
    if (strchr(st.root, ',')) { /* a --disk spec ends its path at a ',' */
        snprintf(err, errlen, "--mount: the image store's path %.300s holds a ','; set "
                 "AIRLOCK_HOME to one without", st.root);
        return -EINVAL;
    }
    struct layer_limits lim;
    dir_disk_limits(&lim);
    for (unsigned i = 0; i < l->n; i++) {
        struct mount_spec *m = &l->m[i];
        struct dir_disk d;
        if (dir_disk_get(&st, m->host, &lim, &d, why, sizeof(why))) {
            snprintf(err, errlen, "--mount '%.200s': HOSTDIR: %s", m->arg, why);
            return -EINVAL;
        }
        say(m, &d);
        if (o->ndisks >= LAYOUT_VIRTIO_SLOTS || o->ndisks > AGENT_MOUNT_MAX_DEVICE) {
            snprintf(err, errlen, "--mount '%.200s': no virtio slot left for its disk", m->arg);
            return -EINVAL;
        }
        snprintf(m->disk_spec, sizeof(m->disk_spec), "%s,%s", d.path, m->rw ? "cow" : "ro");
        m->device = o->ndisks;
        o->disks[o->ndisks] = m->disk_spec;
        o->disk_flags[o->ndisks] = "--mount";
        o->ndisks++;
    }
    return 0;
}
