/* vmm/report/surface.c: the report shows every range the shared registration
 * makes, with the handler the bus really has, and names every feature the
 * devices offer. */
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/virtio/blk.h"
#include "devices/virtio/vsock.h"
#include "tests/unit/helpers.h"
#include "vmm/cli/boot_options.h"
#include "vmm/kvm/machine.h"
#include "vmm/report/surface.h"
#include "vmm/report/symtab.h"
#include "vmm/kvm/vcpu_exits.h"
#include "vmm/kvm/vsock_host.h"

static struct surface_report rep;

static const struct surface_range *find(const char *set, enum bus_space sp,
                                        const struct bus_range *br)
{
    for (unsigned i = 0; i < rep.nranges; i++) {
        const struct surface_range *x = &rep.ranges[i];
        if (!strcmp(x->set, set) && x->space == sp && x->base == br->base && x->len == br->len &&
            x->device && !strcmp(x->device, br->name))
            return x;
    }
    return NULL;
}

/* Registers `airlock run`'s set the way boot does and checks each range
 * the bus holds against the report: a handler registered anywhere in
 * machine_register_devices without showing up fails here. */
START_TEST(every_range_reported)
{
    char err[256], path[] = "/tmp/airlock-test-surface.XXXXXX", spec[64];
    ck_assert_int_eq(surface_collect(&rep, err, sizeof(err)), 0);
    ck_assert(rep.symbols);
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 4096), 0);
    close(fd);
    snprintf(spec, sizeof(spec), "%s,cow", path);
    struct disk *disk;
    ck_assert_int_eq(disk_open(spec, &disk, err, sizeof(err)), 0);
    unlink(path);
    struct serial serial = {0};
    struct i8042 kbd = {0};
    struct boot_timer timer = {0};
    struct machine_devices m = {.serial = &serial, .kbd = &kbd, .timer = &timer, .nblks = 1};
    ck_assert_int_eq(virtio_blk_create(disk, &m.blks[0]), 0);
    ck_assert_int_eq(virtio_vsock_create(VSOCK_GUEST_CID_DEFAULT, &vsock_host_ops, NULL, &m.vsock), 0);
    static struct bus bus;
    static struct vdevs vs;
    memset(&bus, 0, sizeof(bus));
    memset(&vs, 0, sizeof(vs));
    ck_assert_int_eq(machine_register_devices(&bus, NULL, &vs, &m, err, sizeof(err)), 0);

    struct symtab syms;
    ck_assert_int_eq(symtab_open(&syms), 0);
    unsigned seen = 0;
    for (int sp = BUS_PIO; sp <= BUS_MMIO; sp++) {
        for (unsigned i = 0; i < bus.space[sp].n; i++) {
            const struct bus_range *br = &bus.space[sp].ranges[i];
            const struct surface_range *x = find("run", (enum bus_space)sp, br);
            ck_assert_msg(x, "range %s is registered but not in the report", br->name);
            const char *fn = symtab_name(&syms, (const void *)br->fn);
            ck_assert_ptr_nonnull(fn);
            ck_assert_ptr_nonnull(x->handler);
            ck_assert_str_eq(x->handler, fn);
            seen++;
        }
    }
    ck_assert_uint_eq(seen, 6); /* COM1, two i8042 ports, the boot timer, blk, vsock */
    /* and nothing the bus does not hold */
    unsigned in_run = 0;
    for (unsigned i = 0; i < rep.nranges; i++)
        in_run += !strcmp(rep.ranges[i].set, "run");
    ck_assert_uint_eq(in_run, seen);
    symtab_close(&syms);
    vdevs_destroy(&vs);
    virtio_vsock_destroy(m.vsock);
    virtio_blk_destroy(m.blks[0]);
    disk_close(disk);
}
END_TEST

START_TEST(features_named_and_legal)
{
    char err[256];
    ck_assert_int_eq(surface_collect(&rep, err, sizeof(err)), 0);
    ck_assert_uint_ge(rep.ndevices, 4); /* run: blk + vsock; --disk: raw, ro */
    for (unsigned i = 0; i < rep.ndevices; i++) {
        const struct surface_device *d = &rep.devices[i];
        ck_assert(d->features & VIRTIO_BIT(VIRTIO_F_VERSION_1));
        ck_assert(!(d->features & VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC)));
        ck_assert(!(d->features & VIRTIO_BIT(VIRTIO_F_EVENT_IDX)));
        for (unsigned b = 0; b < 64; b++)
            if ((d->features >> b) & 1)
                ck_assert_msg(surface_feature_name(d->device_id, b),
                              "%s offers bit %u, which the report cannot name", d->name, b);
        ck_assert_ptr_nonnull(d->cb[2]); /* queue_notify */
    }
    for (unsigned k = 0; k < 6; k++)
        ck_assert_msg(rep.host_cb[k], "monitor callback %s unnamed", surface_host_cb_names[k]);
}
END_TEST

/* The dispatcher's table is the report's list. */
START_TEST(exits_listed)
{
    const struct vcpu_exit *ex[64];
    unsigned n = vcpu_exit_list(ex, 64), found = 0;
    ck_assert_uint_le(n, 64);
    for (uint32_t reason = 0; reason < 256; reason++) {
        const struct vcpu_exit *e = vcpu_exit_find(reason);
        if (!e)
            continue;
        ck_assert_uint_eq(e->reason, reason);
        ck_assert_ptr_eq(ex[found], e);
        found++;
    }
    ck_assert_uint_eq(found, n);
    ck_assert_ptr_nonnull(vcpu_exit_find(KVM_EXIT_IO));
    ck_assert_ptr_nonnull(vcpu_exit_find(KVM_EXIT_MMIO));
    ck_assert_ptr_null(vcpu_exit_find(KVM_EXIT_HYPERCALL));
}
END_TEST

/* No generated call graph in the unit binary: "unknown", not a number;
 * the seccomp section is there. */
START_TEST(reach_unknown_without_data)
{
    char err[256];
    ck_assert_int_eq(surface_collect(&rep, err, sizeof(err)), 0);
    ck_assert_ptr_null(&surface_reach_data);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    surface_print_json(f, &rep);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "\"reachable\": \"unknown\""));
    /* The seccomp lists are the real ones (vmm/jail/seccomp.c is linked in). */
    ck_assert_ptr_nonnull(strstr(buf, "{\"thread\": \"vcpu\", \"syscalls\": [{\"name\": "));
    ck_assert_ptr_nonnull(strstr(buf, "\"KVM_RUN"));
    free(buf);
}
END_TEST

Suite *surface_suite(void)
{
    Suite *s = suite_create("surface");
    TCase *tc = tcase_create("surface");
    tcase_add_test(tc, every_range_reported);
    tcase_add_test(tc, features_named_and_legal);
    tcase_add_test(tc, exits_listed);
    tcase_add_test(tc, reach_unknown_without_data);
    suite_add_tcase(s, tc);
    return s;
}
