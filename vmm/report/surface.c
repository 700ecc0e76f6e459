/* `airlock surface`: collects the report (surface_print.c prints it). */
#include "vmm/report/surface.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/disk.h"
#include "devices/virtio/blk.h"
#include "devices/virtio/vsock.h"
#include "vmm/util/exit_codes.h"
#include "vmm/kvm/machine.h"
#include "vmm/report/symtab.h"
#include "vmm/kvm/vsock_host.h"

/* virtio 1.2 §4.2.2: the register pair a guest reads features through. */
#define REG_DEVICE_FEATURES     0x010
#define REG_DEVICE_FEATURES_SEL 0x014

const char *const surface_cb_names[4] = {"features", "config_read", "queue_notify", "reset"};
const char *const surface_host_cb_names[SURFACE_HOST_CBS] = {
    "interrupt", "kick", "queue_notify_event", "vsock_connect_port", "vsock_watch",
    "vsock_fd_event", "vsock_conn_cap",
};

/* Everything one device set needs to exist, with no VM. */
struct machine_kit {
    struct bus bus;
    struct vdevs vdevs;
    struct serial serial;
    struct i8042 kbd;
    struct boot_timer timer;
    struct machine_devices m;
    const char *kinds[LAYOUT_VIRTIO_SLOTS]; /* disk kind per blk slot */
};

struct collect {
    struct surface_report *r;
    struct symtab syms;
    char path[64];
    struct disk *disks[3]; /* raw, ro, cow over one scratch file */
    struct virtio_vsock *vsock;
    struct machine_kit kits[3];
};

static const char *disk_kinds[3] = {"raw", "ro", "cow"};

/* A 4 KiB sparse scratch file, opened three ways: blk's features depend
 * on the disk kind, so the report asks the device about each. */
static int open_disks(struct collect *c, char *err, size_t errlen)
{
    const char *dir = getenv("TMPDIR");
    snprintf(c->path, sizeof(c->path), "%s/airlock-surface.XXXXXX",
             dir && *dir && strlen(dir) < 40 ? dir : "/tmp");
    int fd = mkstemp(c->path);
    if (fd < 0 || ftruncate(fd, 4096) < 0) {
        snprintf(err, errlen, "a scratch disk in %s: %s", c->path, strerror(errno));
        if (fd >= 0)
            close(fd), unlink(c->path);
        return -EIO;
    }
    close(fd);
    char spec[80];
    int e = 0;
    for (unsigned i = 0; i < 3 && !e; i++) {
        snprintf(spec, sizeof(spec), "%s%s%s", c->path, i ? "," : "", i ? disk_kinds[i] : "");
        e = disk_open(spec, &c->disks[i], err, errlen);
    }
    unlink(c->path); /* the fds keep it while we look */
    return e;
}

static uint64_t read_features(struct bus *bus, uint64_t base)
{
    uint64_t f = 0;
    for (uint32_t sel = 0; sel < 2; sel++) {
        uint8_t w[4], v[4];
        virtio_put_le(w, sel, 4);
        bus_access(bus, BUS_MMIO, base + REG_DEVICE_FEATURES_SEL, w, 4, true);
        bus_access(bus, BUS_MMIO, base + REG_DEVICE_FEATURES, v, 4, false);
        f |= virtio_get_le(v, 4) << (32 * sel);
    }
    return f;
}

/* A copy of s in the report's own storage (NULL stays NULL, and so does
 * a name that does not fit, which then prints as unknown). */
static const char *keep(struct surface_report *r, const char *s)
{
    size_t n = s ? strlen(s) + 1 : 0;
    if (!s || n > sizeof(r->strs) - r->strs_used)
        return NULL;
    char *p = memcpy(r->strs + r->strs_used, s, n);
    r->strs_used += n;
    return p;
}

static const char *fn_name(struct collect *c, void (*fn)(void))
{
    return fn && c->syms.map ? keep(c->r, symtab_name(&c->syms, (const void *)fn)) : NULL;
}
#define FN(c, f) fn_name(c, (void (*)(void))(f))

/* Reads the set off its bus: every range, and behind each virtio window
 * the device the transport serves. */
static void add_set(struct collect *c, const char *set, struct machine_kit *k)
{
    struct surface_report *r = c->r;
    for (int sp = BUS_PIO; sp <= BUS_MMIO; sp++) {
        const struct bus_space_map *m = &k->bus.space[sp];
        for (unsigned i = 0; i < m->n && r->nranges < SURFACE_MAX_RANGES; i++) {
            const struct bus_range *br = &m->ranges[i];
            r->ranges[r->nranges++] = (struct surface_range){
                set, (enum bus_space)sp, br->base, br->len, keep(r, br->name), FN(c, br->fn)};
            if (br->fn != virtio_mmio_io || r->ndevices >= SURFACE_MAX_DEVICES)
                continue;
            const struct virtio_mmio *t = br->opaque;
            const struct virtio_device_ops *ops = t->ops;
            unsigned slot = (unsigned)((struct vdev *)t->host_opaque)->slot;
            r->devices[r->ndevices++] = (struct surface_device){
                /* The --disk kinds sit in scratch slots: no slot number. */
                .set = set, .name = keep(r, strcmp(set, "--disk") ? br->name : ops->name),
                .device_id = ops->device_id,
                .disk_kind = ops == &virtio_blk_ops ? k->kinds[slot] : NULL,
                .num_queues = ops->num_queues, .queue_max = ops->queue_max,
                .features = read_features(&k->bus, br->base),
                .cb = {FN(c, ops->features), FN(c, ops->config_read), FN(c, ops->queue_notify),
                       FN(c, ops->reset)},
            };
            r->host_cb[0] = FN(c, t->host->interrupt);
            r->host_cb[1] = FN(c, t->host->kick);
        }
    }
}

static int build(struct collect *c, struct machine_kit *k, unsigned nblks, const unsigned *kinds,
                 bool vsock, char *err, size_t errlen)
{
    k->m = (struct machine_devices){.serial = &k->serial, .kbd = &k->kbd, .timer = &k->timer,
                                    .nblks = nblks, .vsock = vsock ? c->vsock : NULL};
    for (unsigned i = 0; i < nblks; i++) {
        if (virtio_blk_create(c->disks[kinds[i]], &k->m.blks[i]))
            return snprintf(err, errlen, "out of memory"), -ENOMEM;
        k->kinds[i] = disk_kinds[kinds[i]];
    }
    return machine_register_devices(&k->bus, NULL, &k->vdevs, &k->m, err, errlen);
}

static void release(struct collect *c)
{
    for (unsigned s = 0; s < 3; s++) {
        vdevs_destroy(&c->kits[s].vdevs);
        for (unsigned i = 0; i < c->kits[s].m.nblks; i++)
            virtio_blk_destroy(c->kits[s].m.blks[i]);
    }
    virtio_vsock_destroy(c->vsock);
    for (unsigned i = 0; i < 3; i++)
        disk_close(c->disks[i]);
    symtab_close(&c->syms);
}

int surface_collect(struct surface_report *r, char *err, size_t errlen)
{
    static const unsigned run_kinds[] = {2};       /* the root image, cow */
    static const unsigned disk_kinds_all[] = {0, 1}; /* what --disk adds */
    struct collect *c = calloc(1, sizeof(*c));
    if (!c)
        return snprintf(err, errlen, "out of memory"), -ENOMEM;
    memset(r, 0, sizeof(*r));
    c->r = r;
    r->symbols = symtab_open(&c->syms) == 0;
    /* `airlock boot` with its defaults (no --disk, no --vsock-uds); `airlock
     * run`: the root image (cow) in slot 0, then vsock (cmd_run.c). */
    int e = open_disks(c, err, errlen);
    if (!e && virtio_vsock_create(VSOCK_GUEST_CID_DEFAULT, &vsock_host_ops, NULL, &c->vsock))
        e = -ENOMEM, snprintf(err, errlen, "cannot create a vsock device");
    if (!e)
        e = build(c, &c->kits[0], 0, NULL, false, err, errlen);
    if (!e)
        e = build(c, &c->kits[1], 1, run_kinds, true, err, errlen);
    if (!e)
        e = build(c, &c->kits[2], 2, disk_kinds_all, false, err, errlen);
    if (!e) {
        add_set(c, "boot", &c->kits[0]);
        add_set(c, "run", &c->kits[1]);
        /* Only the devices: --disk kinds other than the root's. */
        unsigned nr = r->nranges;
        add_set(c, "--disk", &c->kits[2]);
        r->nranges = nr;
        r->host_cb[2] = FN(c, vdev_on_notify);
        r->host_cb[3] = FN(c, vsock_host_ops.connect_port);
        r->host_cb[4] = FN(c, vsock_host_ops.watch);
        r->host_cb[5] = FN(c, virtio_vsock_fd_event);
        r->host_cb[6] = FN(c, vsock_host_ops.conn_cap);
    }
    release(c);
    free(c);
    return e;
}

int cmd_surface(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: airlock surface [--json]\n\n"
                   "Prints what a guest can reach in this build: I/O ranges and their handlers,\n"
                   "virtio features, KVM exits handled, seccomp allowlists, and the lines of C\n"
                   "reachable from guest-triggered entry points.  --json: one JSON object.\n");
            return 0;
        } else {
            fprintf(stderr, "airlock: surface: unknown option '%s' (see airlock surface --help)\n",
                    argv[i]);
            return EXIT_AIRLOCK_ERROR;
        }
    }
    static struct surface_report r;
    char err[256];
    if (surface_collect(&r, err, sizeof(err))) {
        fprintf(stderr, "airlock: surface: %s\n", err);
        return EXIT_AIRLOCK_ERROR;
    }
    if (json)
        surface_print_json(stdout, &r);
    else
        surface_print_text(stdout, &r);
    return fflush(stdout) ? EXIT_AIRLOCK_ERROR : 0;
}
