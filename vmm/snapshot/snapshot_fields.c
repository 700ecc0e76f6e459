#include "vmm/snapshot/snapshot_fields.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MEMBER_SIZE(T, m) sizeof(((T *)0)->m)
#define UINT(name, T, m, lo, hi) {name, SNAP_UINT, offsetof(T, m), MEMBER_SIZE(T, m), lo, hi, 0}
#define BOOL(name, T, m)         UINT(name, T, m, 0, 1)
#define U8(name, T, m)           UINT(name, T, m, 0, UINT8_MAX)
#define U16(name, T, m)          UINT(name, T, m, 0, UINT16_MAX)
#define U32(name, T, m)          UINT(name, T, m, 0, UINT32_MAX)
#define U64(name, T, m)          UINT(name, T, m, 0, UINT64_MAX)
#define STR(name, T, m, fl)      {name, SNAP_STR, offsetof(T, m), MEMBER_SIZE(T, m), 0, 0, fl}
#define RAW(name, T, m)          {name, SNAP_RAW, offsetof(T, m), MEMBER_SIZE(T, m), 0, 0, 0}
#define NODE(name, table)        {name, table, sizeof(table) / sizeof(table[0])}

/* LAYOUT_MEM_MIN_MIB..LAYOUT_MEM_MAX_MIB, what gmem_init accepts. */
#define SNAP_MEM_MIN_MIB 8
#define SNAP_MEM_MAX_MIB 1048576

typedef struct snap_state S;

static const struct snap_field machine_fields[] = {
    UINT("mem-mib", S, mem_mib, SNAP_MEM_MIN_MIB, SNAP_MEM_MAX_MIB),
    UINT("ncpus", S, ncpus, 1, SNAP_MAX_VCPUS),
    U64("cid", S, cid),
    STR("memory", S, memory, SNAP_STR_NONEMPTY | SNAP_STR_NAME),
    BOOL("memory-zlib", S, memory_zlib),
    STR("cmdline", S, cmdline, 0),
};

static const struct snap_field irqchip_fields[] = {
    RAW("pic-master", S, pic_master),
    RAW("pic-slave", S, pic_slave),
    RAW("ioapic", S, ioapic),
};

static const struct snap_field pit_fields[] = {RAW("state", S, pit)};
static const struct snap_field clock_fields[] = {RAW("data", S, clock)};

static const struct snap_field serial_fields[] = {
    U8("ier", S, serial.ier), U8("lcr", S, serial.lcr), U8("mcr", S, serial.mcr),
    U8("scr", S, serial.scr), U8("dll", S, serial.dll), U8("dlm", S, serial.dlm),
    U8("fcr", S, serial.fcr), BOOL("thri-pending", S, serial.thri_pending),
};

const struct snap_node snap_singletons[] = {
    NODE("machine", machine_fields), NODE("irqchip", irqchip_fields), NODE("pit", pit_fields),
    NODE("clock", clock_fields),     NODE("serial", serial_fields),
};
const size_t snap_nsingletons = sizeof(snap_singletons) / sizeof(snap_singletons[0]);

static const struct snap_field virtio_fields[] = {
    U32("device-id", struct snap_virtio, device_id),
    U32("status", struct snap_virtio, status),
    U32("device-features-sel", struct snap_virtio, device_features_sel),
    U32("driver-features-sel", struct snap_virtio, driver_features_sel),
    U32("queue-sel", struct snap_virtio, queue_sel),
    U32("interrupt-status", struct snap_virtio, interrupt_status),
    U32("config-generation", struct snap_virtio, config_generation),
    U64("driver-features", struct snap_virtio, driver_features),
};

static const struct snap_field queue_fields[] = {
    U16("size", struct snap_queue, size),
    BOOL("ready", struct snap_queue, ready),
    U64("desc-gpa", struct snap_queue, desc_gpa),
    U64("avail-gpa", struct snap_queue, avail_gpa),
    U64("used-gpa", struct snap_queue, used_gpa),
    U16("last-avail", struct snap_queue, last_avail),
    U16("used-idx", struct snap_queue, used_idx),
    U16("signalled-used", struct snap_queue, signalled_used),
};

static const struct snap_field disk_fields[] = {
    STR("path", struct snap_disk, path, SNAP_STR_NONEMPTY),
    U64("size", struct snap_disk, size),
    U64("ino", struct snap_disk, ino),
    U64("dev", struct snap_disk, dev),
    U64("mtime-ns", struct snap_disk, mtime_ns),
    BOOL("read-only", struct snap_disk, read_only),
    BOOL("cow", struct snap_disk, cow),
    U64("cow-cap", struct snap_disk, cow_cap),
    STR("overlay", struct snap_disk, overlay, SNAP_STR_NAME),
};

static const struct snap_field vcpu_fields[] = {
    RAW("regs", struct snap_vcpu, regs),
    RAW("sregs", struct snap_vcpu, sregs),
    RAW("xsave", struct snap_vcpu, xsave),
    RAW("xcrs", struct snap_vcpu, xcrs),
    RAW("lapic", struct snap_vcpu, lapic),
    RAW("mp-state", struct snap_vcpu, mp_state),
    RAW("events", struct snap_vcpu, events),
    RAW("debugregs", struct snap_vcpu, debugregs),
    {"msrs", SNAP_MSRS, offsetof(struct snap_vcpu, msrs), MEMBER_SIZE(struct snap_vcpu, msrs),
     0, SNAP_MAX_MSRS, 0},
    {"cpuid", SNAP_CPUID, offsetof(struct snap_vcpu, cpuid), MEMBER_SIZE(struct snap_vcpu, cpuid),
     0, SNAP_MAX_CPUID, 0},
};

const struct snap_node snap_virtio_node = NODE("virtio", virtio_fields);
const struct snap_node snap_queue_node = NODE("queue", queue_fields);
const struct snap_node snap_disk_node = NODE("disk", disk_fields);
const struct snap_node snap_vcpu_node = NODE("vcpu", vcpu_fields);

int snap_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (errlen) {
        int n = snprintf(err, errlen, "state: ");
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < errlen)
            vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

int snap_check_uint(const char *path, const struct snap_field *f, uint64_t v, char *err,
                    size_t errlen)
{
    if (v < f->min || v > f->max)
        return snap_fail(err, errlen, "%s/%s is %llu, want %llu..%llu", path, f->name,
                         (unsigned long long)v, (unsigned long long)f->min,
                         (unsigned long long)f->max);
    return 0;
}

int snap_check_text(const char *path, const struct snap_field *f, const char *text, char *err,
                    size_t errlen)
{
    if ((f->flags & SNAP_STR_NONEMPTY) && !text[0])
        return snap_fail(err, errlen, "%s/%s is empty", path, f->name);
    /* The restore opens these names inside the snapshot directory: a '/' or
     * a dot name would reach outside it.  Only the characters airlock's
     * own names use, so a damaged name is refused rather than printed. */
    if ((f->flags & SNAP_STR_NAME) && text[0] &&
        (strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
             strlen(text) ||
         !strcmp(text, ".") || !strcmp(text, "..")))
        return snap_fail(err, errlen,
                         "%s/%s is not a plain file name (letters, digits, . _ -; not . or ..)",
                         path, f->name);
    return 0;
}

int snap_check_disk(const char *path, const struct snap_disk *d, char *err, size_t errlen)
{
    if (d->overlay[0] && !d->cow)
        return snap_fail(err, errlen, "%s/overlay is set but %s/cow is 0", path, path);
    return 0;
}
