/* vmm/sandbox/tar_in.c: uploads as a recording sink sees them.  Tars are made
 * here with libarchive's writer (pax and GNU names, gzip), then hostile
 * ones: "..", absolute names, hardlinks, devices, fifos, a component over
 * 255 bytes, a name too long for its destination, a root that is a file,
 * a cut-off archive, bytes that are no tar, a gzip bomb's limit. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/sandbox/tar_in.h"
#include "vmm/util/tar_name.h"
#include "tests/unit/helpers.h"

struct mem {
    const uint8_t *p;
    size_t len, off, step; /* step: at most this many bytes per read */
};

static ssize_t mem_read(void *opaque, void *buf, size_t len)
{
    struct mem *m = opaque;
    size_t n = m->len - m->off;
    if (n > len)
        n = len;
    if (m->step && n > m->step)
        n = m->step;
    memcpy(buf, m->p + m->off, n);
    m->off += n;
    return (ssize_t)n;
}

/* The sink records "D rel mode", "L rel target", "F rel mode size sum". */
static char log_buf[8192];

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = strlen(log_buf);
    vsnprintf(log_buf + n, sizeof(log_buf) - n, fmt, ap);
    va_end(ap);
}

static int rec_dir(void *o, const char *rel, uint32_t mode)
{
    (void)o;
    note("D %s %o;", rel, mode);
    return 0;
}

static int rec_symlink(void *o, const char *rel, const char *target)
{
    (void)o;
    note("L %s %s;", rel, target);
    return 0;
}

static int rec_file(void *o, const char *rel, uint32_t mode, uint64_t size, struct tar_in *t)
{
    (void)o;
    uint8_t b[1000];
    uint64_t got = 0, sum = 0;
    ssize_t n;
    while ((n = tar_in_data(t, b, sizeof(b))) > 0) {
        for (ssize_t i = 0; i < n; i++)
            sum += b[i];
        got += (uint64_t)n;
    }
    note("F %s %o %llu %llu;", rel, mode, (unsigned long long)size, (unsigned long long)sum);
    return n < 0 || got != size ? -EIO : 0;
}

static const struct tar_sink sink = {rec_dir, rec_symlink, rec_file, NULL};

/* A tar in memory: members given as (type, name, mode, data or link). */
struct spec {
    int type; /* AE_IF* ; AE_IFREG with link set: a hardlink */
    const char *name;
    unsigned mode;
    const char *data;
    const char *link;
};

static uint8_t tarbuf[1 << 20];

static size_t make_tar(const struct spec *s, size_t n, int gzip, int format)
{
    struct archive *a = archive_write_new();
    archive_write_set_format(a, format);
    if (gzip)
        archive_write_add_filter_gzip(a);
    size_t used = 0;
    ck_assert_int_eq(archive_write_open_memory(a, tarbuf, sizeof(tarbuf), &used), ARCHIVE_OK);
    for (size_t i = 0; i < n; i++) {
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, s[i].name);
        archive_entry_set_filetype(e, (mode_t)s[i].type);
        archive_entry_set_perm(e, s[i].mode);
        if (s[i].type == AE_IFLNK)
            archive_entry_set_symlink(e, s[i].link);
        else if (s[i].link)
            archive_entry_set_hardlink(e, s[i].link);
        if (s[i].type == AE_IFREG && s[i].data)
            archive_entry_set_size(e, (la_int64_t)strlen(s[i].data));
        ck_assert_int_ge(archive_write_header(a, e), ARCHIVE_WARN);
        if (s[i].type == AE_IFREG && s[i].data)
            archive_write_data(a, s[i].data, strlen(s[i].data));
        archive_entry_free(e);
    }
    ck_assert_int_eq(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
    return used;
}

static int extract(const uint8_t *p, size_t len, size_t step, size_t max_name,
                   struct tar_in_result *res)
{
    log_buf[0] = '\0';
    struct mem m = {p, len, 0, step};
    return tar_in_extract(mem_read, &m, max_name, &sink, res);
}

START_TEST(good_tree)
{
    static const struct spec s[] = {
        {AE_IFDIR, "./", 0755, NULL, NULL},
        {AE_IFDIR, "./top/", 0750, NULL, NULL},
        {AE_IFREG, "./top/a.sh", 0755, "abc", NULL},
        {AE_IFLNK, "top/link", 0777, NULL, "../elsewhere"},
        {AE_IFREG, "top/empty", 0600, "", NULL},
    };
    static const char want[] = "D top 750;F top/a.sh 755 3 294;L top/link ../elsewhere;"
                               "F top/empty 600 0 0;";
    struct tar_in_result r;
    for (int gz = 0; gz < 2; gz++) {
        size_t n = make_tar(s, 5, gz, ARCHIVE_FORMAT_TAR_PAX_RESTRICTED);
        ck_assert_int_eq(extract(tarbuf, n, gz ? 7 : 0, 4000, &r), 0);
        ck_assert_str_eq(log_buf, want);
        ck_assert_uint_eq(r.written, 5); /* the root "./" counts as taken */
        ck_assert_uint_eq(r.bytes, 3);
    }
    /* GNU format, a name over 100 bytes */
    char longname[300];
    memset(longname, 'x', 250);
    memcpy(longname + 250, "/f", 3);
    struct spec g[] = {{AE_IFREG, longname, 0644, "z", NULL}};
    size_t n = make_tar(g, 1, 0, ARCHIVE_FORMAT_TAR_GNUTAR);
    ck_assert_int_eq(extract(tarbuf, n, 0, 4000, &r), 0);
    ck_assert(strstr(log_buf, "/f 644 1 122;"));
}
END_TEST

/* One hostile member after a good one: refused with status and name. */
static void refused(const struct spec *bad, int status, const char *entry, const char *why)
{
    struct spec s[2] = {{AE_IFREG, "fine", 0644, "ok", NULL}, *bad};
    size_t n = make_tar(s, 2, 0, ARCHIVE_FORMAT_TAR_PAX_RESTRICTED);
    struct tar_in_result r;
    ck_assert_int_eq(extract(tarbuf, n, 0, 4000, &r), -1);
    ck_assert_int_eq(r.status, status);
    ck_assert_str_eq(r.entry, entry);
    ck_assert_msg(strstr(r.why, why), "why: %s", r.why);
    ck_assert_uint_eq(r.written, 1);
    ck_assert_str_eq(log_buf, "F fine 644 2 218;");
}

START_TEST(hostile_members)
{
    refused(&(struct spec){AE_IFREG, "a/../../x", 0644, "x", NULL}, 400, "a/../../x", "'..'");
    refused(&(struct spec){AE_IFREG, "../x", 0644, "x", NULL}, 400, "../x", "'..'");
    refused(&(struct spec){AE_IFREG, "/etc/x", 0644, "x", NULL}, 400, "/etc/x", "absolute");
    refused(&(struct spec){AE_IFREG, "a//b", 0644, "x", NULL}, 400, "a//b", "empty");
    refused(&(struct spec){AE_IFREG, "a/./b", 0644, "x", NULL}, 400, "a/./b", "'.'");
    refused(&(struct spec){AE_IFREG, "hl", 0644, NULL, "fine"}, 400, "hl", "hardlink");
    refused(&(struct spec){AE_IFCHR, "dev", 0644, NULL, NULL}, 400, "dev", "device");
    refused(&(struct spec){AE_IFIFO, "fifo", 0644, NULL, NULL}, 400, "fifo", "device, fifo");
    refused(&(struct spec){AE_IFREG, ".", 0644, "x", NULL}, 400, ".", "root of the archive");
    refused(&(struct spec){AE_IFREG, "caf\xc3\xa9\x01", 0644, NULL, "fine"}, 400,
            "caf\\xc3\\xa9\\x01", "hardlink"); /* a name shown escaped */
    char comp[300];
    memset(comp, 'c', 256);
    comp[256] = '\0';
    refused(&(struct spec){AE_IFREG, comp, 0644, "x", NULL}, 400, comp, "over 255 bytes");
}
END_TEST

START_TEST(name_room)
{
    /* a name that fits 10 bytes, and one that does not */
    struct spec s[] = {{AE_IFREG, "0123456789", 0644, "x", NULL}};
    size_t n = make_tar(s, 1, 0, ARCHIVE_FORMAT_TAR_PAX_RESTRICTED);
    struct tar_in_result r;
    ck_assert_int_eq(extract(tarbuf, n, 0, 10, &r), 0);
    ck_assert_int_eq(extract(tarbuf, n, 0, 9, &r), -1);
    ck_assert_int_eq(r.status, 400);
    ck_assert(strstr(r.why, "too long"));
}
END_TEST

START_TEST(broken_archives)
{
    struct tar_in_result r;
    /* not a tar at all; empty */
    static const uint8_t noise[2048] = {1, 2, 3, 'n', 'o', 'i', 's', 'e'};
    ck_assert_int_eq(extract(noise, sizeof(noise), 0, 4000, &r), -1);
    ck_assert_int_eq(r.status, 400);
    ck_assert_msg(strstr(r.why, "not a tar archive"), "why: %s", r.why);
    ck_assert_int_eq(extract(noise, 0, 0, 4000, &r), -1);
    ck_assert_int_eq(r.status, 400);
    /* cut inside a member's data: that member is named, the sink's file
     * saw fewer bytes than announced */
    static char big[5000];
    memset(big, 'b', sizeof(big) - 1);
    struct spec s[] = {{AE_IFREG, "first", 0644, "1", NULL}, {AE_IFREG, "big", 0644, big, NULL}};
    size_t n = make_tar(s, 2, 0, ARCHIVE_FORMAT_TAR_PAX_RESTRICTED);
    ck_assert_int_eq(extract(tarbuf, n - 4096 - 2000, 0, 4000, &r), -1);
    ck_assert_int_eq(r.status, 400);
    ck_assert_str_eq(r.entry, "big");
    ck_assert(strstr(r.why, "broke inside this member"));
    ck_assert_uint_eq(r.written, 1);
    /* cut inside a header: after one member */
    for (size_t cut = 1; cut < 6656; cut += 97) { /* the members end at 6656 */
        int rc = extract(tarbuf, cut, 0, 4000, &r);
        ck_assert_msg(rc == -1 && r.status == 400, "cut at %zu: %d %d", cut, rc, r.status);
    }
    /* every byte of the header flipped in turn: refused or taken, never a crash */
    static uint8_t copy[1 << 14];
    n = make_tar(s, 1, 0, ARCHIVE_FORMAT_TAR_USTAR);
    for (size_t i = 0; i < 512 && n <= sizeof(copy); i++) {
        memcpy(copy, tarbuf, n);
        copy[i] ^= 0xa5;
        extract(copy, n, 3, 4000, &r);
    }
}
END_TEST

START_TEST(clean_names)
{
    char out[64];
    const char *why = NULL;
    ck_assert_int_eq(tar_name_clean("./././a/b/", out, sizeof(out), &why), 1);
    ck_assert_str_eq(out, "a/b");
    ck_assert_int_eq(tar_name_clean("./", out, sizeof(out), &why), 0);
    ck_assert_int_eq(tar_name_clean(".", out, sizeof(out), &why), 0);
    ck_assert_int_eq(tar_name_clean("", out, sizeof(out), &why), 0);
    ck_assert_int_eq(tar_name_clean("a/..", out, sizeof(out), &why), -1);
    ck_assert_int_eq(tar_name_clean("..a/b..", out, sizeof(out), &why), 1);
    ck_assert_int_eq(tar_name_clean("a//", out, sizeof(out), &why), -1);
    ck_assert_int_eq(tar_name_clean("//a", out, sizeof(out), &why), -1);
}
END_TEST

Suite *tar_in_suite(void)
{
    Suite *s = suite_create("tar_in");
    TCase *tc = tcase_create("uploads");
    tcase_add_test(tc, good_tree);
    tcase_add_test(tc, hostile_members);
    tcase_add_test(tc, name_room);
    tcase_add_test(tc, broken_archives);
    tcase_add_test(tc, clean_names);
    suite_add_tcase(s, tc);
    return s;
}
