#include "vmm/snapshot/snapshot_file.h"

#include <errno.h>
#include <libfdt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/snapshot/snapshot_fields.h"

#define COMPATIBLE "airlock,snapshot"
#define NAME_LEN   24 /* "virtio@ff" and the like */
#define PATH_LEN   64 /* "/virtio@ff/queue@ff" and the like */

/* ---- shared ------------------------------------------------------------ */

static uint64_t member_uint(const uint8_t *m, size_t size)
{
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v64 = 0;
    switch (size) {
    case 1: memcpy(&v8, m, 1); return v8;
    case 2: memcpy(&v16, m, 2); return v16;
    case 4: memcpy(&v32, m, 4); return v32;
    default: memcpy(&v64, m, 8); return v64;
    }
}

static void set_member_uint(uint8_t *m, size_t size, uint64_t v)
{
    uint8_t v8 = (uint8_t)v;
    uint16_t v16 = (uint16_t)v;
    uint32_t v32 = (uint32_t)v;
    switch (size) {
    case 1: memcpy(m, &v8, 1); break;
    case 2: memcpy(m, &v16, 2); break;
    case 4: memcpy(m, &v32, 4); break;
    default: memcpy(m, &v, 8); break;
    }
}

/* Bytes of the property that holds a SNAP_UINT member. */
static int uint_prop_len(const struct snap_field *f)
{
    return f->size == 8 ? 8 : 4;
}

/* parent + "/" + name; parents are at most "/virtio@ff" and names come
 * from the tables or shown(), so it fits (truncated would still be safe). */
static void join(char *out, const char *parent, const char *name)
{
    if (snprintf(out, PATH_LEN, "%s/%s", parent, name) >= PATH_LEN)
        out[PATH_LEN - 1] = '\0';
}

/* A vcpu's record arrays (SNAP_MSRS, SNAP_CPUID): where the count lives
 * and how many property bytes one record takes. */
struct records {
    uint32_t *count;
    size_t bytes;
};

static struct records records_of(const struct snap_field *f, struct snap_vcpu *v)
{
    if (f->kind == SNAP_MSRS)
        return (struct records){&v->nmsrs, SNAP_MSR_RECORD};
    return (struct records){&v->ncpuid, SNAP_CPUID_RECORD};
}

/* ---- encode ------------------------------------------------------------- */

/* libfdt's sequential writer reports a full buffer as -FDT_ERR_NOSPACE;
 * snap_encode then retries with a bigger one.  Other libfdt errors cannot
 * happen with names we choose. */
static int fdt_rc(int rc, char *err, size_t errlen)
{
    if (rc == -FDT_ERR_NOSPACE)
        return -ENOSPC;
    if (rc < 0) {
        snap_fail(err, errlen, "libfdt: %s", fdt_strerror(rc));
        return -EIO;
    }
    return 0;
}

static int put_records(void *fdt, const char *path, const struct snap_field *f,
                       const struct snap_vcpu *v, char *err, size_t errlen)
{
    const struct records r = records_of(f, (struct snap_vcpu *)(uintptr_t)v);
    if (*r.count > f->max)
        return snap_fail(err, errlen, "%s/%s has %u entries, at most %llu", path, f->name,
                         *r.count, (unsigned long long)f->max);
    uint8_t *p;
    int rc = fdt_property_placeholder(fdt, f->name, (int)(*r.count * r.bytes), (void **)&p);
    if (rc < 0)
        return fdt_rc(rc, err, errlen);
    for (uint32_t i = 0; i < *r.count; i++, p += r.bytes) {
        if (f->kind == SNAP_MSRS) {
            fdt32_st(p, v->msrs[i].index);
            fdt64_st(p + 4, v->msrs[i].data);
        } else {
            const struct kvm_cpuid_entry2 *e = &v->cpuid[i];
            const uint32_t w[7] = {e->function, e->index, e->flags, e->eax, e->ebx, e->ecx,
                                   e->edx};
            for (unsigned k = 0; k < 7; k++)
                fdt32_st(p + 4 * k, w[k]);
        }
    }
    return 0;
}

static int put_field(void *fdt, const char *path, const struct snap_field *f, const void *base,
                     char *err, size_t errlen)
{
    const uint8_t *m = (const uint8_t *)base + f->off;
    int rc;
    switch (f->kind) {
    case SNAP_UINT: {
        uint64_t v = member_uint(m, f->size);
        if ((rc = snap_check_uint(path, f, v, err, errlen)))
            return rc;
        rc = f->size == 8 ? fdt_property_u64(fdt, f->name, v)
                          : fdt_property_u32(fdt, f->name, (uint32_t)v);
        break;
    }
    case SNAP_STR: {
        const char *text = (const char *)m;
        if (strnlen(text, f->size) == f->size)
            return snap_fail(err, errlen, "%s/%s is not NUL-terminated within its %zu bytes",
                             path, f->name, f->size);
        if ((rc = snap_check_text(path, f, text, err, errlen)))
            return rc;
        rc = fdt_property_string(fdt, f->name, text);
        break;
    }
    case SNAP_RAW:
        rc = fdt_property(fdt, f->name, m, (int)f->size);
        break;
    default:
        return put_records(fdt, path, f, base, err, errlen);
    }
    return fdt_rc(rc, err, errlen);
}

/* Writes node `name` with every field of `n` read from `base`; leaves it
 * open so the caller can add subnodes, then end it. */
static int put_node(void *fdt, const char *name, const struct snap_node *n, const void *base,
                    const char *path, char *err, size_t errlen)
{
    int rc = fdt_rc(fdt_begin_node(fdt, name), err, errlen);
    for (size_t i = 0; !rc && i < n->nfields; i++)
        rc = put_field(fdt, path, &n->fields[i], base, err, errlen);
    return rc;
}

static int put_indexed(void *fdt, const char *parent, const struct snap_node *n, unsigned idx,
                       const void *base, char *path, char *err, size_t errlen)
{
    char name[NAME_LEN];
    snprintf(name, sizeof(name), "%s@%x", n->name, idx);
    join(path, parent, name);
    return put_node(fdt, name, n, base, path, err, errlen);
}

static int put_virtio(void *fdt, unsigned idx, const struct snap_virtio *v, char *err,
                      size_t errlen)
{
    char path[PATH_LEN], qpath[PATH_LEN];
    int rc = put_indexed(fdt, "", &snap_virtio_node, idx, v, path, err, errlen);
    if (!rc && v->nqueues > SNAP_MAX_QUEUES)
        return snap_fail(err, errlen, "%s has %u queues, at most %d", path, v->nqueues,
                         SNAP_MAX_QUEUES);
    for (unsigned q = 0; !rc && q < v->nqueues; q++) {
        rc = put_indexed(fdt, path, &snap_queue_node, q, &v->queues[q], qpath, err, errlen);
        if (!rc)
            rc = fdt_rc(fdt_end_node(fdt), err, errlen);
    }
    return rc ? rc : fdt_rc(fdt_end_node(fdt), err, errlen);
}

static int put_tree(void *fdt, int size, const struct snap_state *s, char *err, size_t errlen)
{
    char path[PATH_LEN];
    int rc = fdt_rc(fdt_create(fdt, size), err, errlen);
    if (!rc)
        rc = fdt_rc(fdt_finish_reservemap(fdt), err, errlen);
    if (!rc)
        rc = fdt_rc(fdt_begin_node(fdt, ""), err, errlen);
    if (!rc)
        rc = fdt_rc(fdt_property_string(fdt, "compatible", COMPATIBLE), err, errlen);
    if (!rc)
        rc = fdt_rc(fdt_property_u32(fdt, "version", SNAP_VERSION), err, errlen);
    for (size_t i = 0; !rc && i < snap_nsingletons; i++) {
        join(path, "", snap_singletons[i].name);
        rc = put_node(fdt, snap_singletons[i].name, &snap_singletons[i], s, path, err, errlen);
        if (!rc)
            rc = fdt_rc(fdt_end_node(fdt), err, errlen);
    }
    for (unsigned i = 0; !rc && i < s->nvirtio; i++)
        rc = put_virtio(fdt, i, &s->virtio[i], err, errlen);
    for (unsigned i = 0; !rc && i < s->ndisks; i++) {
        rc = put_indexed(fdt, "", &snap_disk_node, i, &s->disks[i], path, err, errlen);
        if (!rc)
            rc = snap_check_disk(path, &s->disks[i], err, errlen);
        if (!rc)
            rc = fdt_rc(fdt_end_node(fdt), err, errlen);
    }
    for (unsigned i = 0; !rc && i < s->ncpus; i++) {
        rc = put_indexed(fdt, "", &snap_vcpu_node, i, &s->vcpus[i], path, err, errlen);
        if (!rc)
            rc = fdt_rc(fdt_end_node(fdt), err, errlen);
    }
    if (!rc)
        rc = fdt_rc(fdt_end_node(fdt), err, errlen);
    return rc ? rc : fdt_rc(fdt_finish(fdt), err, errlen);
}

int snap_encode(const struct snap_state *s, void **blob, size_t *len, char *err, size_t errlen)
{
    *blob = NULL;
    *len = 0;
    if (s->version != SNAP_VERSION)
        return snap_fail(err, errlen, "version %u, this airlock writes %d", s->version,
                         SNAP_VERSION);
    /* Counts bound the loops over the arrays: check them before any walk.
     * ncpus is one of /machine's fields, checked before any vCPU is read;
     * nqueues and nmsrs are checked where their node is written. */
    if (s->nvirtio > SNAP_MAX_VIRTIO)
        return snap_fail(err, errlen, "%u virtio devices, at most %d", s->nvirtio,
                         SNAP_MAX_VIRTIO);
    if (s->ndisks > SNAP_MAX_DISKS)
        return snap_fail(err, errlen, "%u disks, at most %d", s->ndisks, SNAP_MAX_DISKS);
    /* About 8 KiB per vCPU; retry with twice the room when that is short. */
    size_t size = 64 * 1024 + (size_t)(s->ncpus <= SNAP_MAX_VCPUS ? s->ncpus : 0) * 12 * 1024;
    for (;;) {
        void *buf = malloc(size);
        if (!buf)
            return -ENOMEM;
        int rc = put_tree(buf, (int)size, s, err, errlen);
        if (!rc) {
            *blob = buf;
            *len = fdt_totalsize(buf);
            return 0;
        }
        free(buf);
        if (rc != -ENOSPC)
            return rc;
        if (size >= SNAP_BLOB_MAX)
            return snap_fail(err, errlen, "encoded state exceeds %u bytes", SNAP_BLOB_MAX);
        size *= 2;
    }
}

/* ---- decode ------------------------------------------------------------- */

/* A name from the file, printable and short, for an error message: the
 * message must stay one line whatever bytes the file holds. */
static const char *shown(const char *name, char *buf, size_t buflen)
{
    size_t i = 0;
    for (; name[i] && i + 1 < buflen; i++)
        buf[i] = name[i] > 0x20 && name[i] < 0x7f ? name[i] : '?';
    buf[i] = '\0';
    return buf;
}

/* A node's name; fdt_check_full vouched for it, so "?" (an unknown node)
 * only if libfdt disagrees with itself. */
static const char *name_of(const void *fdt, int node)
{
    const char *name = fdt_get_name(fdt, node, NULL);
    return name ? name : "?";
}

static int get_records(const char *path, const struct snap_field *f, const uint8_t *p, int len,
                       struct snap_vcpu *v, char *err, size_t errlen)
{
    const struct records r = records_of(f, v);
    if (len % (int)r.bytes)
        return snap_fail(err, errlen, "%s/%s is %d bytes, not a multiple of %zu", path,
                         f->name, len, r.bytes);
    if ((uint64_t)len / r.bytes > f->max)
        return snap_fail(err, errlen, "%s/%s has %d entries, at most %llu", path, f->name,
                         len / (int)r.bytes, (unsigned long long)f->max);
    *r.count = (uint32_t)((size_t)len / r.bytes);
    for (uint32_t i = 0; i < *r.count; i++, p += r.bytes) {
        if (f->kind == SNAP_MSRS) {
            v->msrs[i].index = fdt32_ld((const fdt32_t *)p);
            v->msrs[i].data = fdt64_ld((const fdt64_t *)(p + 4));
        } else {
            uint32_t w[7];
            for (unsigned k = 0; k < 7; k++)
                w[k] = fdt32_ld((const fdt32_t *)(p + 4 * k));
            v->cpuid[i] = (struct kvm_cpuid_entry2){.function = w[0], .index = w[1],
                                                    .flags = w[2], .eax = w[3], .ebx = w[4],
                                                    .ecx = w[5], .edx = w[6]};
        }
    }
    return 0;
}

static int get_field(const char *path, const struct snap_field *f, const void *val, int len,
                     void *base, char *err, size_t errlen)
{
    uint8_t *m = (uint8_t *)base + f->off;
    int rc;
    switch (f->kind) {
    case SNAP_UINT: {
        if (len != uint_prop_len(f))
            return snap_fail(err, errlen, "%s/%s is %d bytes, want %d", path, f->name, len,
                             uint_prop_len(f));
        uint64_t v = len == 8 ? fdt64_ld(val) : fdt32_ld(val);
        if ((rc = snap_check_uint(path, f, v, err, errlen)))
            return rc;
        set_member_uint(m, f->size, v);
        return 0;
    }
    case SNAP_STR:
        /* Exactly one string: a NUL at the end and none before it. */
        if (len < 1 || memchr(val, '\0', (size_t)len) != (const char *)val + len - 1)
            return snap_fail(err, errlen, "%s/%s is not one NUL-terminated string", path,
                             f->name);
        if ((size_t)len > f->size)
            return snap_fail(err, errlen, "%s/%s is %d bytes, at most %zu", path, f->name, len,
                             f->size);
        if ((rc = snap_check_text(path, f, val, err, errlen)))
            return rc;
        memcpy(m, val, (size_t)len);
        return 0;
    case SNAP_RAW:
        if ((size_t)len != f->size)
            return snap_fail(err, errlen, "%s/%s is %d bytes, want %zu", path, f->name, len,
                             f->size);
        memcpy(m, val, f->size);
        return 0;
    default:
        return get_records(path, f, val, len, base, err, errlen);
    }
}

/* Reads every property of `node` into `base` by the table of `n`: each
 * must be known, appear once, and be valid; none may be missing. */
static int get_props(const void *fdt, int node, const char *path, const struct snap_node *n,
                     void *base, char *err, size_t errlen)
{
    uint32_t seen = 0; /* every table has fewer than 32 fields */
    int prop;
    fdt_for_each_property_offset(prop, fdt, node)
    {
        const char *name;
        int len;
        const void *val = fdt_getprop_by_offset(fdt, prop, &name, &len);
        if (!val)
            return snap_fail(err, errlen, "%s: %s", path, fdt_strerror(len));
        size_t i = 0;
        while (i < n->nfields && strcmp(n->fields[i].name, name))
            i++;
        char buf[PATH_LEN];
        if (i == n->nfields)
            return snap_fail(err, errlen, "%s/%s: unknown property", path,
                             shown(name, buf, sizeof(buf)));
        if (seen & (1u << i))
            return snap_fail(err, errlen, "%s/%s appears twice", path, name);
        seen |= 1u << i;
        int rc = get_field(path, &n->fields[i], val, len, base, err, errlen);
        if (rc)
            return rc;
    }
    if (prop != -FDT_ERR_NOTFOUND)
        return snap_fail(err, errlen, "%s: %s", path, fdt_strerror(prop));
    for (size_t i = 0; i < n->nfields; i++)
        if (!(seen & (1u << i)))
            return snap_fail(err, errlen, "%s/%s is missing", path, n->fields[i].name);
    return 0;
}

/* Whether `name` is of family n->name ("vcpu@..."); if so it must be the
 * one with unit address `idx` (contiguous from 0, in order) and below
 * `max`.  Returns 1 (it is: path set), 0 (another family) or -EINVAL. */
static int indexed(const char *parent, const char *name, const struct snap_node *n,
                   unsigned idx, unsigned max, char *path, char *err, size_t errlen)
{
    size_t fl = strlen(n->name);
    if (strncmp(name, n->name, fl) || name[fl] != '@')
        return 0;
    char want[PATH_LEN], buf[PATH_LEN];
    if (idx >= max)
        return snap_fail(err, errlen, "%s has more than %u %s nodes", *parent ? parent : "/",
                         max, n->name);
    snprintf(want, sizeof(want), "%s@%x", n->name, idx);
    if (strcmp(name, want))
        return snap_fail(err, errlen, "%s/%s where %s/%s belongs (indexes run from 0, in order)",
                         parent, shown(name, buf, sizeof(buf)), parent, want);
    join(path, parent, want);
    return 1;
}

static int no_subnodes(const void *fdt, int node, const char *path, char *err, size_t errlen)
{
    int sub = fdt_first_subnode(fdt, node);
    char buf[PATH_LEN];
    if (sub >= 0)
        return snap_fail(err, errlen, "%s/%s: unknown node", path,
                         shown(name_of(fdt, sub), buf, sizeof(buf)));
    return 0;
}

static int get_leaf(const void *fdt, int node, const char *path, const struct snap_node *n,
                    void *base, char *err, size_t errlen)
{
    int rc = get_props(fdt, node, path, n, base, err, errlen);
    return rc ? rc : no_subnodes(fdt, node, path, err, errlen);
}

static int get_virtio(const void *fdt, int node, const char *path, struct snap_virtio *v,
                      char *err, size_t errlen)
{
    int rc = get_props(fdt, node, path, &snap_virtio_node, v, err, errlen);
    int sub;
    fdt_for_each_subnode(sub, fdt, node)
    {
        if (rc)
            return rc;
        char qpath[PATH_LEN], buf[PATH_LEN];
        const char *name = name_of(fdt, sub);
        rc = indexed(path, name, &snap_queue_node, v->nqueues, SNAP_MAX_QUEUES, qpath, err,
                     errlen);
        if (rc == 0)
            return snap_fail(err, errlen, "%s/%s: unknown node", path,
                             shown(name, buf, sizeof(buf)));
        if (rc == 1)
            rc = get_leaf(fdt, sub, qpath, &snap_queue_node, &v->queues[v->nqueues++], err,
                          errlen);
    }
    return rc;
}

/* One child of the root: a singleton or the next of an indexed family. */
static int get_child(const void *fdt, int node, struct snap_state *s, unsigned *seen,
                     unsigned *nvcpus, char *err, size_t errlen)
{
    const char *name = name_of(fdt, node);
    char path[PATH_LEN], buf[PATH_LEN];
    for (size_t i = 0; i < snap_nsingletons; i++) {
        if (strcmp(name, snap_singletons[i].name))
            continue;
        if (*seen & (1u << i))
            return snap_fail(err, errlen, "/%s appears twice", name);
        *seen |= 1u << i;
        join(path, "", name);
        return get_leaf(fdt, node, path, &snap_singletons[i], s, err, errlen);
    }
    int rc = indexed("", name, &snap_virtio_node, s->nvirtio, SNAP_MAX_VIRTIO, path, err, errlen);
    if (rc)
        return rc < 0 ? rc : get_virtio(fdt, node, path, &s->virtio[s->nvirtio++], err, errlen);
    rc = indexed("", name, &snap_disk_node, s->ndisks, SNAP_MAX_DISKS, path, err, errlen);
    if (rc == 1) {
        struct snap_disk *d = &s->disks[s->ndisks++];
        rc = get_leaf(fdt, node, path, &snap_disk_node, d, err, errlen);
        return rc ? rc : snap_check_disk(path, d, err, errlen);
    }
    if (rc)
        return rc;
    rc = indexed("", name, &snap_vcpu_node, *nvcpus, SNAP_MAX_VCPUS, path, err, errlen);
    if (rc == 1) {
        struct snap_vcpu *v = &s->vcpus[(*nvcpus)++];
        memset(v, 0, sizeof(*v)); /* snap_decode zeroed only the part before the vCPUs */
        return get_leaf(fdt, node, path, &snap_vcpu_node, v, err, errlen);
    }
    if (rc)
        return rc;
    return snap_fail(err, errlen, "/%s: unknown node", shown(name, buf, sizeof(buf)));
}

/* compatible and version, before anything else is read: a file that is
 * not ours, or not this version, gets that said rather than a complaint
 * about some field. */
static int get_header(const void *fdt, size_t len, char *err, size_t errlen)
{
    if (fdt_totalsize(fdt) != len)
        return snap_fail(err, errlen, "file is %zu bytes, its header says %u", len,
                         fdt_totalsize(fdt));
    int clen, vlen;
    const char *compat = fdt_getprop(fdt, 0, "compatible", &clen);
    if (!compat || clen != sizeof(COMPATIBLE) || memcmp(compat, COMPATIBLE, sizeof(COMPATIBLE)))
        return snap_fail(err, errlen, "not an airlock snapshot (/compatible is not \"%s\")",
                         COMPATIBLE);
    const void *version = fdt_getprop(fdt, 0, "version", &vlen);
    if (!version)
        return snap_fail(err, errlen, "/version is missing");
    if (vlen != 4)
        return snap_fail(err, errlen, "/version is %d bytes, want 4", vlen);
    if (fdt32_ld(version) != SNAP_VERSION) {
        snap_fail(err, errlen, "version %u, this airlock reads %d", fdt32_ld(version),
                  SNAP_VERSION);
        return -ENOTSUP;
    }
    /* Nothing else at the root; each of the two once. */
    int prop, n = 0;
    fdt_for_each_property_offset(prop, fdt, 0)
    {
        const char *name;
        char buf[PATH_LEN];
        if (!fdt_getprop_by_offset(fdt, prop, &name, NULL))
            return snap_fail(err, errlen, "/: %s", fdt_strerror(prop));
        if (strcmp(name, "compatible") && strcmp(name, "version"))
            return snap_fail(err, errlen, "/%s: unknown property", shown(name, buf, sizeof(buf)));
        n++;
    }
    if (n != 2)
        return snap_fail(err, errlen, "/compatible or /version appears twice");
    return 0;
}

/* What libfdt's sequential writer produces (fdt_create .. fdt_finish):
 * version 17, readable by 16, each block inside the blob.  Checked before
 * fdt_check_full, which libfdt 1.6.1 lets crash on some older-version
 * headers (a NULL read on a version-14 tree with a size_dt_struct past the
 * end, found by fuzz_snapshot). */
static int header_sane(const void *fdt, size_t len, char *err, size_t errlen)
{
    uint64_t struct_end = (uint64_t)fdt_off_dt_struct(fdt) + fdt_size_dt_struct(fdt);
    uint64_t strings_end = (uint64_t)fdt_off_dt_strings(fdt) + fdt_size_dt_strings(fdt);
    if (fdt_magic(fdt) != FDT_MAGIC)
        return snap_fail(err, errlen, "not a valid device tree (no FDT magic)");
    if (fdt_version(fdt) != 17 || fdt_last_comp_version(fdt) != 16)
        return snap_fail(err, errlen,
                         "not a valid device tree (format version %u, readable by %u; want 17, 16)",
                         fdt_version(fdt), fdt_last_comp_version(fdt));
    if (fdt_totalsize(fdt) != len)
        return snap_fail(err, errlen, "not a valid device tree (file is %zu bytes, its header "
                         "says %u)", len, fdt_totalsize(fdt));
    if (struct_end > len || strings_end > len || fdt_off_mem_rsvmap(fdt) >= len)
        return snap_fail(err, errlen, "not a valid device tree (its blocks run past its %zu "
                         "bytes)", len);
    return 0;
}

static int get_tree(const void *fdt, size_t len, struct snap_state *s, char *err, size_t errlen)
{
    int rc = header_sane(fdt, len, err, errlen);
    if (rc)
        return rc;
    rc = fdt_check_full(fdt, len);
    if (rc)
        return snap_fail(err, errlen, "not a valid device tree (%s)", fdt_strerror(rc));
    if ((rc = get_header(fdt, len, err, errlen)))
        return rc;
    unsigned seen = 0, nvcpus = 0;
    int node;
    fdt_for_each_subnode(node, fdt, 0)
    {
        if ((rc = get_child(fdt, node, s, &seen, &nvcpus, err, errlen)))
            return rc;
    }
    for (size_t i = 0; i < snap_nsingletons; i++)
        if (!(seen & (1u << i)))
            return snap_fail(err, errlen, "/%s is missing", snap_singletons[i].name);
    if (nvcpus != s->ncpus)
        return snap_fail(err, errlen, "/machine/ncpus is %u but there are %u vcpu nodes",
                         s->ncpus, nvcpus);
    s->version = SNAP_VERSION;
    return 0;
}

int snap_decode(const void *blob, size_t len, struct snap_state *s, char *err, size_t errlen)
{
    /* Not the 254 vCPU slots (2 MB): each vcpu@N node zeroes its own, so
     * a restore touches (and its monitor's RSS carries) only the vCPUs the
     * VM has. */
    memset(s, 0, offsetof(struct snap_state, vcpus));
    if (len < sizeof(struct fdt_header))
        return snap_fail(err, errlen, "%zu bytes is too short for a state file", len);
    if (len > SNAP_BLOB_MAX) {
        snap_fail(err, errlen, "%zu bytes, a state file has at most %u", len, SNAP_BLOB_MAX);
        return -EFBIG;
    }
    /* libfdt wants the tree 8-byte aligned; a caller's buffer may not be. */
    void *copy = NULL;
    if ((uintptr_t)blob & 7) {
        if (!(copy = malloc(len)))
            return -ENOMEM;
        blob = memcpy(copy, blob, len);
    }
    int rc = get_tree(blob, len, s, err, errlen);
    free(copy);
    if (rc)
        memset(s, 0, sizeof(*s));
    return rc;
}
