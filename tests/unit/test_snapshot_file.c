/* vmm/snapshot/snapshot_file: the state file's writer and its strict reader.  A
 * valid sample goes through byte for byte; every truncation, random
 * corruption and each rule the reader enforces gets a clean one-line error
 * (and a zeroed struct), never a crash. */
#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "tests/unit/snap_sample.h"
#include "vmm/snapshot/snapshot_file.h"

static struct snap_state *s, *t;
static const struct snap_state zero_state;
static char err[256];

static void setup(void)
{
    s = malloc(sizeof(*s));
    t = malloc(sizeof(*t));
    ck_assert(s && t);
    err[0] = '\0';
}

static void teardown(void)
{
    free(s);
    free(t);
}

/* The sample every rule test edits: 2 vCPUs, 3 transports (0, 1 and 2
 * queues), disk@0 plain and disk@1 copy-on-write with an overlay. */
static void *sample_blob(size_t *len)
{
    void *blob;
    snap_sample(s, 2, 3, 2, 7);
    ck_assert_int_eq(snap_encode(s, &blob, len, err, sizeof(err)), 0);
    return blob;
}

/* An editable copy (libfdt read-write API) with room to grow. */
static void *editable_blob(void *blob, size_t len)
{
    void *fdt = malloc(len + 65536);
    ck_assert_ptr_nonnull(fdt);
    ck_assert_int_eq(fdt_open_into(blob, fdt, (int)len + 65536), 0);
    free(blob);
    return fdt;
}

static void *editable(void)
{
    size_t len;
    void *blob = sample_blob(&len);
    return editable_blob(blob, len);
}

static int node(void *fdt, const char *path)
{
    int off = fdt_path_offset(fdt, path);
    ck_assert_msg(off >= 0, "no node %s", path);
    return off;
}

/* Copies every property of node `from` to node `to` (looked up again
 * after each change, since offsets move as the tree grows). */
static void copy_props(void *fdt, const char *from, const char *to)
{
    for (int i = 0;; i++) {
        int prop = fdt_first_property_offset(fdt, node(fdt, from));
        for (int k = 0; k < i && prop >= 0; k++)
            prop = fdt_next_property_offset(fdt, prop);
        if (prop < 0)
            return;
        const char *name;
        int len;
        const void *val = fdt_getprop_by_offset(fdt, prop, &name, &len);
        char nm[64];
        snprintf(nm, sizeof(nm), "%s", name);
        void *v = malloc((size_t)len + 1);
        memcpy(v, val, (size_t)len);
        ck_assert_int_eq(fdt_setprop(fdt, node(fdt, to), nm, v, len), 0);
        free(v);
    }
}

/* Gives family PARENT/NAME@0..count-1 one more valid member, keeping the
 * indexes contiguous: libfdt adds a subnode in front of its siblings, so
 * the others move up one and the new one becomes @0, a copy of the old. */
static void grow_family(void *fdt, const char *parent, const char *name, unsigned count)
{
    char path[64], newname[32];
    for (unsigned k = count; k-- > 0;) {
        snprintf(path, sizeof(path), "%s/%s@%x", parent, name, k);
        snprintf(newname, sizeof(newname), "%s@%x", name, k + 1);
        ck_assert_int_eq(fdt_set_name(fdt, node(fdt, path), newname), 0);
    }
    snprintf(newname, sizeof(newname), "%s@0", name);
    ck_assert_int_ge(fdt_add_subnode(fdt, node(fdt, *parent ? parent : "/"), newname), 0);
    char from[64], to[64];
    snprintf(from, sizeof(from), "%s/%s@1", parent, name);
    snprintf(to, sizeof(to), "%s/%s@0", parent, name);
    copy_props(fdt, from, to);
}

/* Decodes an exact-size copy of `len` bytes (ASan sees any over-read). */
static int decode_exact(const void *blob, size_t len)
{
    void *copy = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, blob, len);
    err[0] = '\0';
    int rc = snap_decode(copy, len, t, err, sizeof(err));
    free(copy);
    return rc;
}

static void expect_error(int rc, int want, const char *fragment)
{
    ck_assert_msg(rc == want, "rc %d, want %d (error \"%s\", wanted \"%s\")", rc, want, err,
                  fragment);
    ck_assert_msg(strstr(err, fragment), "error \"%s\" lacks \"%s\"", err, fragment);
    ck_assert_msg(!strncmp(err, "state: ", 7) && !strchr(err, '\n'), "error \"%s\"", err);
    ck_assert_msg(!memcmp(t, &zero_state, sizeof(*t)), "a failed decode left fields set");
}

/* Packs an edited tree, decodes it and checks the error. */
static void expect_edit_fails(void *fdt, int want, const char *fragment)
{
    ck_assert_int_eq(fdt_pack(fdt), 0);
    expect_error(decode_exact(fdt, fdt_totalsize(fdt)), want, fragment);
    free(fdt);
}

static void expect_encode_fails(const char *fragment)
{
    void *blob = (void *)1;
    size_t len = 1;
    err[0] = '\0';
    int rc = snap_encode(s, &blob, &len, err, sizeof(err));
    ck_assert_msg(rc == -EINVAL && strstr(err, fragment), "rc %d error \"%s\" lacks \"%s\"", rc,
                  err, fragment);
    ck_assert(blob == NULL && len == 0);
}

/* ---- round trips -------------------------------------------------------- */

static void round_trip(unsigned ncpus, unsigned nvirtio, unsigned ndisks, uint32_t seed)
{
    void *blob;
    size_t len;
    snap_sample(s, ncpus, nvirtio, ndisks, seed);
    ck_assert_int_eq(snap_encode(s, &blob, &len, err, sizeof(err)), 0);
    ck_assert_uint_le(len, SNAP_BLOB_MAX);
    memset(t, 0xa5, sizeof(*t)); /* decode must clear what it does not fill */
    ck_assert_msg(decode_exact(blob, len) == 0, "%s", err);
    /* ... except the vCPU slots past ncpus, which it leaves alone (a
     * restore's RSS carries only the vCPUs the VM has). */
    size_t used = offsetof(struct snap_state, vcpus) + ncpus * sizeof(struct snap_vcpu);
    ck_assert_msg(!memcmp(s, t, used), "round trip changed the state");
    if (ncpus < SNAP_MAX_VCPUS)
        ck_assert_uint_eq(((const uint8_t *)t)[used], 0xa5);
    free(blob);
}

START_TEST(round_trip_full)
{
    round_trip(4, SNAP_MAX_VIRTIO, SNAP_MAX_DISKS, 0);
    round_trip(3, 5, 1, SNAP_MAX_MSRS - 1); /* vCPU 1 has SNAP_MAX_MSRS, vCPU 2 none */
    round_trip(1, 0, 0, 1);
}
END_TEST

/* The most vCPUs: the writer's first buffer is too small and grows. */
START_TEST(round_trip_max_vcpus)
{
    round_trip(SNAP_MAX_VCPUS, SNAP_MAX_VIRTIO, SNAP_MAX_DISKS, 3);
}
END_TEST

/* A caller's buffer need not be 8-byte aligned. */
START_TEST(decode_unaligned)
{
    size_t len;
    void *blob = sample_blob(&len);
    uint8_t *buf = malloc(len + 1);
    memcpy(buf + 1, blob, len);
    ck_assert_int_eq(snap_decode(buf + 1, len, t, err, sizeof(err)), 0);
    ck_assert(!memcmp(s, t, sizeof(*s)));
    free(buf);
    free(blob);
}
END_TEST

/* ---- hostile files ------------------------------------------------------ */

START_TEST(every_truncation_fails)
{
    void *blob;
    size_t len;
    snap_sample(s, 1, 1, 1, 5);
    ck_assert_int_eq(snap_encode(s, &blob, &len, err, sizeof(err)), 0);
    for (size_t n = 0; n < len; n++) {
        int rc = decode_exact(blob, n);
        ck_assert_msg(rc == -EINVAL && !strncmp(err, "state: ", 7) && !strchr(err, '\n'),
                      "length %zu: rc %d \"%s\"", n, rc, err);
    }
    expect_error(decode_exact(blob, 39), -EINVAL, "too short");
    expect_error(decode_exact(blob, len - 1), -EINVAL, "not a valid device tree");
    free(blob);
}
END_TEST

/* Random byte changes: each decodes or fails cleanly, and what decodes
 * writes back to a file that decodes to the same state. */
START_TEST(random_corruption)
{
    size_t len;
    void *blob = sample_blob(&len);
    uint8_t *buf = malloc(len);
    uint64_t x = 88172645463325252ull;
    unsigned decoded = 0;
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(buf, blob, len);
        for (int k = 0; k <= iter % 4; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            /* Half the hits in the header and structure block (the first
             * 512 bytes and the last 1024), half anywhere. */
            size_t at = (x >> 8) % len;
            if (x & 1)
                at = (x & 2) ? (x >> 8) % 512 : len - 1 - (x >> 8) % 1024;
            buf[at] ^= (uint8_t)(x >> 32) | 1;
        }
        int rc = decode_exact(buf, len);
        if (rc) {
            ck_assert_msg(!strncmp(err, "state: ", 7) && !strchr(err, '\n'), "\"%s\"", err);
            continue;
        }
        decoded++;
        void *again;
        size_t again_len;
        ck_assert_int_eq(snap_encode(t, &again, &again_len, err, sizeof(err)), 0);
        memcpy(s, t, sizeof(*s));
        ck_assert_int_eq(decode_exact(again, again_len), 0);
        ck_assert(!memcmp(s, t, sizeof(*s)));
        free(again);
    }
    ck_assert_uint_gt(decoded, 0); /* flips inside raw structs still decode */
    free(buf);
    free(blob);
}
END_TEST

START_TEST(rejects_bad_framing)
{
    size_t len;
    void *blob = sample_blob(&len);
    uint8_t *buf = calloc(1, len + 8);
    memcpy(buf, blob, len);
    expect_error(decode_exact(buf, len + 8), -EINVAL, "file is");
    expect_error(decode_exact(buf, len + 8), -EINVAL, "its header says");
    expect_error(snap_decode(buf, (size_t)SNAP_BLOB_MAX + 1, t, err, sizeof(err)), -EFBIG,
                 "at most 67108864");
    memset(buf, 0x5a, 100);
    expect_error(decode_exact(buf, 100), -EINVAL, "not a valid device tree");
    free(buf);
    free(blob);
}
END_TEST

START_TEST(rejects_foreign_and_versions)
{
    void *fdt = editable();
    fdt_setprop_string(fdt, 0, "compatible", "airlock,snapshot2");
    expect_edit_fails(fdt, -EINVAL, "not an airlock snapshot");
    fdt = editable();
    fdt_delprop(fdt, 0, "compatible");
    expect_edit_fails(fdt, -EINVAL, "not an airlock snapshot");
    fdt = editable();
    fdt_setprop_u32(fdt, 0, "version", 3);
    expect_edit_fails(fdt, -ENOTSUP, "version 3, this airlock reads 2");
    fdt = editable();
    fdt_setprop_u32(fdt, 0, "version", 1); /* before vcpu@N/cpuid */
    expect_edit_fails(fdt, -ENOTSUP, "version 1, this airlock reads 2");
    fdt = editable();
    fdt_setprop_u32(fdt, 0, "version", 0);
    expect_edit_fails(fdt, -ENOTSUP, "version 0, this airlock reads 2");
    fdt = editable();
    fdt_setprop_u64(fdt, 0, "version", 2);
    expect_edit_fails(fdt, -EINVAL, "/version is 8 bytes, want 4");
    fdt = editable();
    fdt_delprop(fdt, 0, "version");
    expect_edit_fails(fdt, -EINVAL, "/version is missing");
    fdt = editable();
    fdt_setprop_u32(fdt, 0, "extra", 1);
    expect_edit_fails(fdt, -EINVAL, "/extra: unknown property");
}
END_TEST

START_TEST(rejects_node_structure)
{
    void *fdt = editable();
    fdt_del_node(fdt, node(fdt, "/irqchip"));
    expect_edit_fails(fdt, -EINVAL, "/irqchip is missing");
    fdt = editable();
    fdt_set_name(fdt, 0, "root"); /* fdt_check_full refuses a named root */
    expect_edit_fails(fdt, -EINVAL, "not a valid device tree (FDT_ERR_BADSTRUCTURE)");
    fdt = editable();
    fdt_add_subnode(fdt, 0, "gpu");
    expect_edit_fails(fdt, -EINVAL, "/gpu: unknown node");
    fdt = editable();
    fdt_add_subnode(fdt, node(fdt, "/machine"), "extra");
    expect_edit_fails(fdt, -EINVAL, "/machine/extra: unknown node");
    fdt = editable();
    fdt_add_subnode(fdt, node(fdt, "/virtio@2"), "ring");
    expect_edit_fails(fdt, -EINVAL, "/virtio@2/ring: unknown node");
    fdt = editable();
    fdt_add_subnode(fdt, node(fdt, "/virtio@1/queue@0"), "x");
    expect_edit_fails(fdt, -EINVAL, "/virtio@1/queue@0/x: unknown node");
    /* A name with a control character is shown without it. */
    fdt = editable();
    fdt_add_subnode(fdt, 0, "a\nb");
    expect_edit_fails(fdt, -EINVAL, "/a?b: unknown node");
    /* The same singleton twice (fdt_set_name does not check siblings). */
    fdt = editable();
    ck_assert_int_ge(fdt_add_subnode(fdt, 0, "serial-copy"), 0);
    copy_props(fdt, "/serial", "/serial-copy");
    ck_assert_int_eq(fdt_set_name(fdt, node(fdt, "/serial-copy"), "serial"), 0);
    expect_edit_fails(fdt, -EINVAL, "/serial appears twice");
}
END_TEST

START_TEST(rejects_bad_indexes)
{
    void *fdt = editable();
    fdt_set_name(fdt, node(fdt, "/vcpu@1"), "vcpu@2");
    expect_edit_fails(fdt, -EINVAL, "/vcpu@2 where /vcpu@1 belongs");
    fdt = editable();
    fdt_set_name(fdt, node(fdt, "/vcpu@1"), "vcpu@01");
    expect_edit_fails(fdt, -EINVAL, "/vcpu@01 where /vcpu@1 belongs");
    fdt = editable();
    fdt_set_name(fdt, node(fdt, "/disk@0"), "disk@1"); /* then two disk@1 */
    expect_edit_fails(fdt, -EINVAL, "/disk@1 where /disk@0 belongs");
    fdt = editable();
    fdt_set_name(fdt, node(fdt, "/virtio@2/queue@0"), "queue@1");
    expect_edit_fails(fdt, -EINVAL, "/virtio@2/queue@1 where /virtio@2/queue@0 belongs");
    fdt = editable();
    fdt_del_node(fdt, node(fdt, "/vcpu@1"));
    expect_edit_fails(fdt, -EINVAL, "/machine/ncpus is 2 but there are 1 vcpu nodes");
    fdt = editable();
    fdt_setprop_u32(fdt, node(fdt, "/machine"), "ncpus", 3);
    expect_edit_fails(fdt, -EINVAL, "/machine/ncpus is 3 but there are 2 vcpu nodes");
}
END_TEST

/* One more node than the arrays hold: rejected before anything is
 * written past them. */
START_TEST(rejects_too_many_nodes)
{
    void *blob, *fdt;
    size_t len;
    snap_sample(s, 1, SNAP_MAX_VIRTIO, SNAP_MAX_DISKS, 9);
    ck_assert_int_eq(snap_encode(s, &blob, &len, err, sizeof(err)), 0);
    void *copy = malloc(len);
    fdt = editable_blob(memcpy(copy, blob, len), len);
    grow_family(fdt, "", "virtio", SNAP_MAX_VIRTIO);
    expect_edit_fails(fdt, -EINVAL, "/ has more than 8 virtio nodes");
    copy = malloc(len);
    fdt = editable_blob(memcpy(copy, blob, len), len);
    grow_family(fdt, "", "disk", SNAP_MAX_DISKS);
    expect_edit_fails(fdt, -EINVAL, "/ has more than 8 disk nodes");
    fdt = editable_blob(blob, len);
    grow_family(fdt, "/virtio@4", "queue", SNAP_MAX_QUEUES); /* virtio@4 has 4 queues */
    expect_edit_fails(fdt, -EINVAL, "/virtio@4 has more than 4 queue nodes");
    snap_sample(s, SNAP_MAX_VCPUS, 0, 0, 0);
    ck_assert_int_eq(snap_encode(s, &blob, &len, err, sizeof(err)), 0);
    fdt = editable_blob(blob, len);
    grow_family(fdt, "", "vcpu", SNAP_MAX_VCPUS);
    expect_edit_fails(fdt, -EINVAL, "/ has more than 254 vcpu nodes");
}
END_TEST

START_TEST(rejects_missing_unknown_and_twice)
{
    void *fdt = editable();
    fdt_delprop(fdt, node(fdt, "/machine"), "cmdline");
    expect_edit_fails(fdt, -EINVAL, "/machine/cmdline is missing");
    fdt = editable();
    fdt_delprop(fdt, node(fdt, "/vcpu@1"), "msrs");
    expect_edit_fails(fdt, -EINVAL, "/vcpu@1/msrs is missing");
    fdt = editable();
    fdt_setprop_u32(fdt, node(fdt, "/serial"), "baud", 9600);
    expect_edit_fails(fdt, -EINVAL, "/serial/baud: unknown property");
    /* Point cid's name at "ncpus": ncpus twice (the writer never does). */
    fdt = editable();
    int m = node(fdt, "/machine"), len;
    const struct fdt_property *ncpus = fdt_get_property(fdt, m, "ncpus", &len);
    struct fdt_property *cid = fdt_get_property_w(fdt, m, "cid", &len);
    cid->nameoff = ncpus->nameoff;
    expect_edit_fails(fdt, -EINVAL, "/machine/ncpus appears twice");
}
END_TEST

/* Raw structs and integers must have their exact length. */
START_TEST(rejects_bad_lengths)
{
    uint8_t junk[5000] = {0};
    void *fdt = editable();
    fdt_setprop(fdt, node(fdt, "/vcpu@1"), "sregs", junk, 300);
    expect_edit_fails(fdt, -EINVAL, "/vcpu@1/sregs is 300 bytes, want 312");
    fdt = editable();
    fdt_setprop(fdt, node(fdt, "/vcpu@0"), "xsave", junk, 4097);
    expect_edit_fails(fdt, -EINVAL, "/vcpu@0/xsave is 4097 bytes, want 4096");
    fdt = editable();
    fdt_setprop(fdt, node(fdt, "/pit"), "state", junk, 0);
    expect_edit_fails(fdt, -EINVAL, "/pit/state is 0 bytes, want");
    fdt = editable();
    fdt_setprop_u64(fdt, node(fdt, "/machine"), "ncpus", 2);
    expect_edit_fails(fdt, -EINVAL, "/machine/ncpus is 8 bytes, want 4");
    fdt = editable();
    fdt_setprop_u32(fdt, node(fdt, "/machine"), "mem-mib", 256);
    expect_edit_fails(fdt, -EINVAL, "/machine/mem-mib is 4 bytes, want 8");
    fdt = editable();
    fdt_setprop(fdt, node(fdt, "/vcpu@0"), "msrs", junk, 13);
    expect_edit_fails(fdt, -EINVAL, "/vcpu@0/msrs is 13 bytes, not a multiple of 12");
    fdt = editable();
    fdt_setprop(fdt, node(fdt, "/vcpu@0"), "msrs", junk, 12 * (SNAP_MAX_MSRS + 1));
    expect_edit_fails(fdt, -EINVAL, "/vcpu@0/msrs has 129 entries, at most 128");
    fdt = editable();
    fdt_setprop(fdt, node(fdt, "/vcpu@1"), "cpuid", junk, 29);
    expect_edit_fails(fdt, -EINVAL, "/vcpu@1/cpuid is 29 bytes, not a multiple of 28");
    static uint8_t big[28 * (SNAP_MAX_CPUID + 1)];
    fdt = editable();
    fdt_setprop(fdt, node(fdt, "/vcpu@0"), "cpuid", big, sizeof(big));
    expect_edit_fails(fdt, -EINVAL, "/vcpu@0/cpuid has 257 entries, at most 256");
}
END_TEST

START_TEST(rejects_out_of_range)
{
    static const struct {
        const char *path, *prop;
        uint64_t v;
        int u64;
        const char *msg;
    } cases[] = {
        {"/machine", "ncpus", 0, 0, "/machine/ncpus is 0, want 1..254"},
        {"/machine", "ncpus", 255, 0, "/machine/ncpus is 255, want 1..254"},
        {"/machine", "mem-mib", 7, 1, "/machine/mem-mib is 7, want 8..1048576"},
        {"/machine", "mem-mib", 1048577, 1, "/machine/mem-mib is 1048577, want 8..1048576"},
        {"/machine", "memory-zlib", 2, 0, "/machine/memory-zlib is 2, want 0..1"},
        {"/serial", "ier", 256, 0, "/serial/ier is 256, want 0..255"},
        {"/serial", "thri-pending", 0xffffffff, 0, "/serial/thri-pending is 4294967295"},
        {"/virtio@1/queue@0", "size", 65536, 0, "/virtio@1/queue@0/size is 65536, want 0..65535"},
        {"/virtio@1/queue@0", "ready", 2, 0, "/virtio@1/queue@0/ready is 2, want 0..1"},
        {"/virtio@2/queue@1", "signalled-used", 70000, 0, "signalled-used is 70000"},
        {"/disk@0", "cow", 5, 0, "/disk@0/cow is 5, want 0..1"},
        {"/disk@1", "read-only", 2, 0, "/disk@1/read-only is 2, want 0..1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        void *fdt = editable();
        int n = node(fdt, cases[i].path);
        if (cases[i].u64)
            fdt_setprop_u64(fdt, n, cases[i].prop, cases[i].v);
        else
            fdt_setprop_u32(fdt, n, cases[i].prop, (uint32_t)cases[i].v);
        expect_edit_fails(fdt, -EINVAL, cases[i].msg);
    }
}
END_TEST

START_TEST(rejects_bad_strings)
{
    char big[PATH_MAX + 1];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    static const struct {
        const char *path, *prop, *val;
        int len; /* 0: strlen + 1 */
        const char *msg;
    } cases[] = {
        {"/machine", "memory", "abc", 3, "/machine/memory is not one NUL-terminated string"},
        {"/machine", "memory", "ab\0cd", 6, "/machine/memory is not one NUL-terminated string"},
        {"/machine", "cmdline", "", -1, "/machine/cmdline is not one NUL-terminated string"},
        {"/machine", "memory", "", 0, "/machine/memory is empty"},
        {"/machine", "memory", "../memory", 0, "/machine/memory is not a plain file name"},
        {"/machine", "memory", "a/b", 0, "/machine/memory is not a plain file name"},
        {"/machine", "memory", ".", 0, "/machine/memory is not a plain file name"},
        {"/machine", "memory", "..", 0, "/machine/memory is not a plain file name"},
        {"/disk@1", "overlay", "/tmp/x", 0, "/disk@1/overlay is not a plain file name"},
        {"/disk@0", "overlay", "o", 0, "/disk@0/overlay is set but /disk@0/cow is 0"},
        {"/disk@0", "path", "", 0, "/disk@0/path is empty"},
        {"/machine", "memory",
         "0123456789012345678901234567890123456789012345678901234567890123", 0,
         "/machine/memory is 65 bytes, at most 64"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        void *fdt = editable();
        int len = cases[i].len > 0 ? cases[i].len : cases[i].len < 0 ? 0 :
                                                                     (int)strlen(cases[i].val) + 1;
        fdt_setprop(fdt, node(fdt, cases[i].path), cases[i].prop, cases[i].val, len);
        expect_edit_fails(fdt, -EINVAL, cases[i].msg);
    }
    void *fdt = editable();
    fdt_setprop_string(fdt, node(fdt, "/disk@0"), "path", big);
    expect_edit_fails(fdt, -EINVAL, "/disk@0/path is 4097 bytes, at most 4096");
    /* "" is a valid overlay, and dots, dashes and underscores are plain... */
    fdt = editable();
    fdt_setprop_string(fdt, node(fdt, "/disk@1"), "overlay", "");
    fdt_setprop_string(fdt, node(fdt, "/machine"), "memory", "...mem_o-ry");
    ck_assert_int_eq(fdt_pack(fdt), 0);
    ck_assert_msg(decode_exact(fdt, fdt_totalsize(fdt)) == 0, "%s", err);
    ck_assert_str_eq(t->memory, "...mem_o-ry");
    /* ... but spaces, control and non-ASCII bytes are not (a damaged name
     * is refused, not printed in an error). */
    free(fdt);
    static const char *const odd[] = {"mem ory", "mem\tory", "\xff\xffry"};
    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
        fdt = editable();
        fdt_setprop_string(fdt, node(fdt, "/machine"), "memory", odd[i]);
        expect_edit_fails(fdt, -EINVAL, "/machine/memory is not a plain file name");
    }
}
END_TEST

/* The writer checks the same rules: it never writes a file the reader
 * would refuse, and never reads past an array. */
START_TEST(encode_rejects_invalid)
{
    snap_sample(s, 2, 2, 2, 1);
    s->ncpus = 0;
    expect_encode_fails("/machine/ncpus is 0, want 1..254");
    snap_sample(s, 2, 2, 2, 1);
    s->ncpus = SNAP_MAX_VCPUS + 1;
    expect_encode_fails("/machine/ncpus is 255");
    snap_sample(s, 2, 2, 2, 1);
    s->version = 1;
    expect_encode_fails("version 1, this airlock writes 2");
    snap_sample(s, 2, 2, 2, 1);
    s->vcpus[1].nmsrs = SNAP_MAX_MSRS + 1;
    expect_encode_fails("/vcpu@1/msrs has 129 entries, at most 128");
    snap_sample(s, 2, 2, 2, 1);
    s->vcpus[0].ncpuid = SNAP_MAX_CPUID + 1;
    expect_encode_fails("/vcpu@0/cpuid has 257 entries, at most 256");
    snap_sample(s, 2, 2, 2, 1);
    s->nvirtio = SNAP_MAX_VIRTIO + 1;
    expect_encode_fails("9 virtio devices, at most 8");
    snap_sample(s, 2, 2, 2, 1);
    s->ndisks = SNAP_MAX_DISKS + 1;
    expect_encode_fails("9 disks, at most 8");
    snap_sample(s, 2, 2, 2, 1);
    s->virtio[1].nqueues = SNAP_MAX_QUEUES + 1;
    expect_encode_fails("/virtio@1 has 5 queues, at most 4");
    snap_sample(s, 2, 2, 2, 1);
    memset(s->cmdline, 'x', sizeof(s->cmdline));
    expect_encode_fails("/machine/cmdline is not NUL-terminated within its 2048 bytes");
    snap_sample(s, 2, 2, 2, 1);
    strcpy(s->memory, "..");
    expect_encode_fails("/machine/memory is not a plain file name");
    snap_sample(s, 2, 2, 2, 1);
    s->disks[1].cow = 0;
    expect_encode_fails("/disk@1/overlay is set but /disk@1/cow is 0");
    snap_sample(s, 2, 2, 2, 1);
    s->virtio[1].queues[0].ready = 2;
    expect_encode_fails("/virtio@1/queue@0/ready is 2, want 0..1");
    snap_sample(s, 2, 2, 2, 1);
    s->mem_mib = 4;
    expect_encode_fails("/machine/mem-mib is 4, want 8..1048576");
}
END_TEST

Suite *snapshot_file_suite(void)
{
    Suite *su = suite_create("snapshot_file");
    TCase *tc = tcase_create("codec");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, round_trip_full);
    tcase_add_test(tc, round_trip_max_vcpus);
    tcase_add_test(tc, decode_unaligned);
    tcase_add_test(tc, every_truncation_fails);
    tcase_add_test(tc, random_corruption);
    tcase_add_test(tc, rejects_bad_framing);
    tcase_add_test(tc, rejects_foreign_and_versions);
    tcase_add_test(tc, rejects_node_structure);
    tcase_add_test(tc, rejects_bad_indexes);
    tcase_add_test(tc, rejects_too_many_nodes);
    tcase_add_test(tc, rejects_missing_unknown_and_twice);
    tcase_add_test(tc, rejects_bad_lengths);
    tcase_add_test(tc, rejects_out_of_range);
    tcase_add_test(tc, rejects_bad_strings);
    tcase_add_test(tc, encode_rejects_invalid);
    suite_add_tcase(su, tc);
    return su;
}
