/* vmm/image/dir_disk.c: the cache key of a host folder (the same tree keeps
 * it; a file's content, mtime, mode, a link's target, a new entry each
 * change it), the walk's bounds and refusals, and the disk itself: made
 * with mke2fs -d, a symlink out of the folder kept as a link, every entry
 * owned by 65534, found again without being made again, a new disk for a
 * changed tree, the cache's bound, and a folder of more than 10,000 entries
 * refused before mke2fs runs. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/image/dir_disk.h"
#include "vmm/image/rootfs_disk.h"
#include "vmm/util/rmtree.h"

static char top[64], src[96], err[512];
static struct layer_limits lim;

/* File times come from a coarse clock (a tick is up to 4 ms): a change
 * waits past one, so its ctime differs from the last change's, as two
 * edits a person makes do. */
static void tick(void)
{
    usleep(10000);
}

static void put(const char *rel, const char *text)
{
    char p[256];
    tick();
    snprintf(p, sizeof(p), "%s/%s", src, rel);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void at(const char *rel, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", src, rel);
}

/* A small source tree: files, a folder, a link out of it, a relative one. */
static void setup(void)
{
    snprintf(top, sizeof(top), "/tmp/airlock-dirdisk.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(top));
    snprintf(src, sizeof(src), "%s/src", top);
    ck_assert_int_eq(mkdir(src, 0755), 0);
    char p[256];
    at("sub", p, sizeof(p));
    ck_assert_int_eq(mkdir(p, 0755), 0);
    put("a.py", "print(6*7)\n");
    put("sub/b.txt", "bee\n");
    at("passwd", p, sizeof(p));
    ck_assert_int_eq(symlink("/etc/passwd", p), 0);
    at("sub/rel", p, sizeof(p));
    ck_assert_int_eq(symlink("../a.py", p), 0);
    dir_disk_limits(&lim);
}

static void teardown(void)
{
    rmtree(top);
    unsetenv("AIRLOCK_HOME");
}

static void key_of(char out[DIR_DISK_KEY_HEX + 1])
{
    struct dir_walk w;
    ck_assert_msg(dir_disk_walk(src, &lim, &w, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(strlen(w.key), DIR_DISK_KEY_HEX);
    memcpy(out, w.key, DIR_DISK_KEY_HEX + 1);
}

/* By content (an overlay's upper folder, vmm/runtime/root_disk.c): a copy of
 * the tree elsewhere, made later, has the same key; a byte changed, or a
 * mode, does not; and the kind of walk is in the key. */
START_TEST(key_by_content)
{
    struct dir_walk a, b, id;
    char copy[160], cmd[400];
    snprintf(copy, sizeof(copy), "%s/copy", top);
    snprintf(cmd, sizeof(cmd), "cp -r %s %s", src, copy);
    tick();
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(dir_disk_walk_as(src, "f", true, &lim, &a, err, sizeof(err)), 0);
    ck_assert_int_eq(dir_disk_walk_as(copy, "f", true, &lim, &b, err, sizeof(err)), 0);
    ck_assert_str_eq(a.key, b.key);
    ck_assert_int_eq(dir_disk_walk_as(copy, "f", false, &lim, &id, err, sizeof(err)), 0);
    ck_assert_str_ne(id.key, b.key);
    put("a.py", "print(6*8)\n"); /* the same size, another byte */
    ck_assert_int_eq(dir_disk_walk_as(src, "f", true, &lim, &a, err, sizeof(err)), 0);
    ck_assert_str_ne(a.key, b.key);
    ck_assert_int_eq(dir_disk_walk_as(src, "g", true, &lim, &id, err, sizeof(err)), 0);
    ck_assert_str_ne(id.key, a.key);
    char p[256];
    snprintf(p, sizeof(p), "%s/sub", copy);
    ck_assert_int_eq(chmod(p, 0700), 0);
    ck_assert_int_eq(dir_disk_walk_as(copy, "f", true, &lim, &id, err, sizeof(err)), 0);
    ck_assert_str_ne(id.key, b.key);
}
END_TEST

/* Sets a file's mtime to t (seconds): what `touch -d` or a checkout does. */
static void set_mtime(const char *rel, time_t t)
{
    char p[256];
    tick();
    at(rel, p, sizeof(p));
    struct timespec ts[2] = {{.tv_sec = t}, {.tv_sec = t}};
    ck_assert_int_eq(utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW), 0);
}

START_TEST(key_follows_the_tree)
{
    char k0[65], k1[65], k[65];
    key_of(k0);
    key_of(k1);
    ck_assert_str_eq(k0, k1); /* unchanged: the same key */

    /* the same size, the old mtime put back: the ctime still moved */
    set_mtime("a.py", 1000000000);
    key_of(k1);
    ck_assert_str_ne(k0, k1);
    put("a.py", "print(7*6)\n");
    set_mtime("a.py", 1000000000);
    key_of(k);
    ck_assert_str_ne(k, k1);
    memcpy(k1, k, sizeof(k));
    key_of(k);
    ck_assert_str_eq(k, k1);

    set_mtime("sub/b.txt", 1000000001); /* the mtime alone */
    key_of(k);
    ck_assert_str_ne(k, k1);
    memcpy(k1, k, sizeof(k));

    char p[256];
    at("sub/b.txt", p, sizeof(p));
    tick();
    ck_assert_int_eq(chmod(p, 0600), 0); /* a mode */
    key_of(k);
    ck_assert_str_ne(k, k1);
    memcpy(k1, k, sizeof(k));

    at("passwd", p, sizeof(p)); /* a link's target, same length */
    tick();
    ck_assert_int_eq(unlink(p), 0);
    ck_assert_int_eq(symlink("/etc/shadow", p), 0);
    key_of(k);
    ck_assert_str_ne(k, k1);
    memcpy(k1, k, sizeof(k));

    put("new", ""); /* an entry */
    key_of(k);
    ck_assert_str_ne(k, k1);
}
END_TEST

START_TEST(walk_counts_and_refuses)
{
    struct dir_walk w;
    ck_assert_int_eq(dir_disk_walk(src, &lim, &w, err, sizeof(err)), 0);
    ck_assert_uint_eq(w.entries, 6); /* ., a.py, passwd, sub, sub/b.txt, sub/rel */
    ck_assert_uint_eq(w.bytes, 11 + 4);
    ck_assert_uint_eq(w.depth, 2);

    struct layer_limits small = lim;
    small.max_entries = 5;
    ck_assert_int_eq(dir_disk_walk(src, &small, &w, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "more than 5 entries (the limit image import uses)"));
    small = lim;
    small.max_depth = 1;
    ck_assert_int_eq(dir_disk_walk(src, &small, &w, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "deeper than 1 folders"));
    small = lim;
    small.max_bytes = 14;
    ck_assert_int_eq(dir_disk_walk(src, &small, &w, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "MiB of files"));

    /* a newline in a name would be a second debugfs command */
    put("evil\nrm a.py", "");
    ck_assert_int_eq(dir_disk_walk(src, &lim, &w, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "evil\\x0arm a.py: a control character in the name");
}
END_TEST

/* debugfs's answer to one request on the disk, whole. */
static void debugfs_says(const char *disk, const char *req, char *out, size_t cap)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "debugfs -R '%s' %s 2>/dev/null", req, disk);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, cap - 1, p) : 0;
    out[n] = '\0';
    if (p)
        pclose(p);
}

static bool have_e2fsprogs(void)
{
    return system("PATH=$PATH:/usr/sbin:/sbin command -v mke2fs >/dev/null && "
                  "PATH=$PATH:/usr/sbin:/sbin command -v debugfs >/dev/null") == 0;
}

static void open_store(struct image_store *st)
{
    char home[128];
    snprintf(home, sizeof(home), "%s/store", top);
    setenv("AIRLOCK_HOME", home, 1);
    ck_assert_msg(image_store_open(st, err, sizeof(err)) == 0, "%s", err);
}

START_TEST(disk_made_then_cached)
{
    if (!have_e2fsprogs()) {
        unit_skip("no mke2fs/debugfs (e2fsprogs) on this host");
        return;
    }
    struct image_store st;
    open_store(&st);
    struct dir_disk d, again;
    ck_assert_msg(dir_disk_get(&st, src, &lim, &d, err, sizeof(err)) == 0, "%s", err);
    ck_assert(!d.cached);
    ck_assert_ptr_nonnull(strstr(d.path, "/mounts/"));
    ck_assert_ptr_nonnull(strstr(d.path, d.walk.key));
    char out[4096];
    debugfs_says(d.path, "cat /a.py", out, sizeof(out));
    ck_assert_str_eq(out, "print(6*7)\n");
    debugfs_says(d.path, "stat /passwd", out, sizeof(out));
    ck_assert_msg(strstr(out, "Type: symlink") && strstr(out, "\"/etc/passwd\""), "%s", out);
    debugfs_says(d.path, "stat /sub/b.txt", out, sizeof(out));
    ck_assert_msg(strstr(out, "User: 65534   Group: 65534"), "%s", out);
    debugfs_says(d.path, "stat /", out, sizeof(out));
    ck_assert_msg(strstr(out, "User: 65534   Group: 65534"), "%s", out);

    struct stat s0, s1;
    ck_assert_int_eq(stat(d.path, &s0), 0);
    ck_assert_msg(dir_disk_get(&st, src, &lim, &again, err, sizeof(err)) == 0, "%s", err);
    ck_assert(again.cached);
    ck_assert_str_eq(again.path, d.path);
    ck_assert_int_eq(stat(d.path, &s1), 0);
    ck_assert_uint_eq(s0.st_ino, s1.st_ino);
    ck_assert_int_eq(s0.st_mtim.tv_sec, s1.st_mtim.tv_sec);
    ck_assert_int_eq(s0.st_mtim.tv_nsec, s1.st_mtim.tv_nsec);

    put("sub/b.txt", "changed\n");
    ck_assert_msg(dir_disk_get(&st, src, &lim, &again, err, sizeof(err)) == 0, "%s", err);
    ck_assert(!again.cached);
    ck_assert_str_ne(again.path, d.path);
    debugfs_says(again.path, "cat /sub/b.txt", out, sizeof(out));
    ck_assert_str_eq(out, "changed\n");

    /* nothing half-made is left: two disks, no temporaries */
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "test $(ls -A %s/store/mounts | wc -l) = 2", top);
    ck_assert_int_eq(system(cmd), 0);

    /* the bound: one disk left, the one named kept */
    const char *keep = strrchr(d.path, '/') + 1;
    ck_assert_uint_eq(dir_disk_evict(&st, keep, 1, 1ULL << 40), 1);
    ck_assert_int_eq(access(d.path, F_OK), 0);
    ck_assert_int_eq(access(again.path, F_OK), -1);
}
END_TEST

START_TEST(get_refuses)
{
    struct image_store st;
    open_store(&st);
    struct dir_disk d;
    char p[256];
    at("a.py", p, sizeof(p));
    ck_assert_int_eq(dir_disk_get(&st, p, &lim, &d, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "not a folder");
    at("missing", p, sizeof(p));
    ck_assert_int_eq(dir_disk_get(&st, p, &lim, &d, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "No such file or directory");
    /* the folder that holds the store */
    ck_assert_int_eq(dir_disk_get(&st, top, &lim, &d, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "holds airlock's image store"));
    ck_assert_int_eq(dir_disk_get(&st, "/", &lim, &d, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "holds airlock's image store"));
}
END_TEST

/* A folder past rootfs_disk's bound: refused before mke2fs runs (which
 * would take time in the square of its entries), named, no disk and no
 * temporary left. */
START_TEST(get_refuses_a_wide_folder)
{
    struct image_store st;
    open_store(&st);
    char p[256];
    at("sub/wide", p, sizeof(p));
    ck_assert_int_eq(mkdir(p, 0755), 0);
    for (unsigned i = 0; i <= ROOTFS_MAX_FOLDER_ENTRIES; i++) {
        snprintf(p, sizeof(p), "%s/sub/wide/f%u", src, i);
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        close(fd);
    }
    struct dir_disk d;
    ck_assert_int_eq(dir_disk_get(&st, src, &lim, &d, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "making its disk: /sub/wide: more than 10000 entries in one folder "
                          "(mke2fs -d's time grows with the square of a folder's entries)");
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s/store/mounts)\"", top);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *dir_disk_suite(void)
{
    Suite *s = suite_create("dir_disk");
    TCase *t = tcase_create("key");
    tcase_add_checked_fixture(t, setup, teardown); /* teardown runs after a failure too */
    tcase_add_test(t, key_follows_the_tree);
    tcase_add_test(t, key_by_content);
    tcase_add_test(t, walk_counts_and_refuses);
    tcase_add_test(t, get_refuses);
    suite_add_tcase(s, t);
    t = tcase_create("disk");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, disk_made_then_cached);
    tcase_add_test(t, get_refuses_a_wide_folder);
    suite_add_tcase(s, t);
    return s;
}
