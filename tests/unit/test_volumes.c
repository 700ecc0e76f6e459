/* Named volumes (vmm/volume/, docs/volumes.md): names and sizes as
 * hostile text, `--volume NAME:GUESTDIR[:ro|:rw]`, the store (records
 * written atomically, read back after a "restart"), the holders' rule
 * (one writer or readers, the holder in the way named), release and the
 * prune of a dead daemon's holds, an `airlock run` holder whose process is
 * gone, a damaged record, an API answer's record read back (the checks
 * `airlock volume ls --socket` relies on), and e2fsck before an attach
 * (clean, repaired by -p, by -fy when -p refuses). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/cli/mount_options.h"
#include "vmm/util/rmtree.h"
#include "vmm/volume/volume_check.h"
#include "vmm/volume/volume_hold.h"

static char top[64], err[1024];
static struct volume_store vs;
static struct volume_rec rec;

static void setup(void)
{
    snprintf(top, sizeof(top), "/tmp/airlock-volumes.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(top));
    ck_assert_int_eq(volume_store_open(&vs, top, err, sizeof(err)), 0);
}

static void teardown(void)
{
    rmtree(top);
}

START_TEST(names)
{
    static const char *const good[] = {"a", "Z", "0", "data", "a.b-c_d", "a..b", "9-",
                                       "x123456789012345678901234567890123456789012345678901234567890123"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        ck_assert_msg(volume_name_ok(good[i], strlen(good[i])), "%s", good[i]);
    static const char *const bad[] = {"", ".", "..", ".hidden", "-a", "_a", "a/b", "../x", "a b",
                                      "a\nb", "a:b", "a,b", "\xc3\xa9", "a\x7f",
                                      "x1234567890123456789012345678901234567890123456789012345678901234"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(!volume_name_ok(bad[i], strlen(bad[i])), "%s", bad[i]);
    ck_assert(!volume_name_ok("ab\0c", 4)); /* a NUL inside */
    ck_assert(!volume_name_ok(NULL, 0));
}
END_TEST

START_TEST(sizes)
{
    uint32_t v = 7;
    ck_assert_int_eq(volume_size_parse("1", &v), 0);
    ck_assert_uint_eq(v, 1);
    ck_assert_int_eq(volume_size_parse("1048576", &v), 0);
    ck_assert_uint_eq(v, 1048576);
    ck_assert_int_eq(volume_size_parse("0064", &v), 0);
    ck_assert_uint_eq(v, 64);
    static const char *const bad[] = {"", "0", "1048577", "-1", "+1", "1k", " 1", "1 ", "0x10",
                                      "99999999999999999999999", "4294967297", "1.5", NULL};
    for (size_t i = 0; bad[i]; i++) {
        v = 7;
        ck_assert_msg(volume_size_parse(bad[i], &v) == -EINVAL, "%s", bad[i]);
        ck_assert_uint_eq(v, 7);
    }
    ck_assert_int_eq(volume_size_parse(NULL, &v), -EINVAL);
}
END_TEST

START_TEST(volume_flag)
{
    struct mount_list l = {0};
    char e[1024];
    ck_assert_int_eq(mount_list_add_volume(&l, "data:/data", e, sizeof(e)), 0);
    ck_assert(l.m[0].volume && l.m[0].rw); /* read-write unless :ro */
    ck_assert_str_eq(l.m[0].name, "data");
    ck_assert_str_eq(l.m[0].guest, "/data");
    ck_assert_int_eq(mount_list_add_volume(&l, "other:/ro:ro", e, sizeof(e)), 0);
    ck_assert(!l.m[1].rw);
    static const struct { const char *arg, *says; } bad[] = {
        {"data", "want NAME:GUESTDIR[:ro|:rw]"},
        {":/x", "want NAME:GUESTDIR"},
        {"a/b:/x", "NAME 'a/b': want a letter or digit"},
        {"..:/x", "NAME '..'"},
        {".x:/x", "NAME '.x'"},
        {"x:rel", "GUESTDIR 'rel'"},
        {"x:/proc", "GUESTDIR '/proc'"},
        {"x:/a/../b", "GUESTDIR '/a/../b'"},
        {"x:/y:rx", "the mode 'rx'"},
        {"x:/y:ro:z", "want NAME:GUESTDIR"},
        {"data:/elsewhere", "the volume data is given twice"},
        {"y:/data", "GUESTDIR /data is mounted twice"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(mount_list_add_volume(&l, bad[i].arg, e, sizeof(e)) == -EINVAL, "%s",
                      bad[i].arg);
        ck_assert_msg(strstr(e, bad[i].says) && !strncmp(e, "--volume '", 10), "%s: %s",
                      bad[i].arg, e);
    }
    ck_assert_uint_eq(l.n, 2);
    char names[8][32];
    for (unsigned i = 2; i < MOUNT_MAX; i++) {
        snprintf(names[i], sizeof(names[i]), "v%u:/m%u", i, i);
        ck_assert_int_eq(mount_list_add_volume(&l, names[i], e, sizeof(e)), 0);
    }
    ck_assert_int_eq(mount_list_add_volume(&l, "last:/last", e, sizeof(e)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(e, "at most 8 mounts and volumes"));
}
END_TEST

static struct volume_holder sandbox(const char *id, bool ro)
{
    struct volume_holder h = {.readonly = ro};
    snprintf(h.sandbox, sizeof(h.sandbox), "%s", id);
    return h;
}

static const char *in_way_text(const struct volume_holder *h)
{
    static char t[80];
    volume_holder_text(h, t, sizeof(t));
    return t;
}

static bool keep_c(const char *id, void *opaque)
{
    (void)opaque;
    return !strcmp(id, "cccc");
}

START_TEST(store_and_holders)
{
    ck_assert_int_eq(volume_create(&vs, "data", 16, &rec, err, sizeof(err)), 0);
    ck_assert_str_eq(rec.name, "data");
    ck_assert_uint_eq(rec.size_mib, 16);
    ck_assert_uint_gt(rec.used_bytes, 0);
    char disk[PATH_MAX];
    volume_disk_path(&vs, "data", disk, sizeof(disk));
    struct stat st;
    ck_assert_int_eq(stat(disk, &st), 0);
    ck_assert_int_eq(st.st_size, 16 << 20);
    ck_assert_int_eq(volume_create(&vs, "data", 16, &rec, err, sizeof(err)), -EEXIST);
    ck_assert_int_eq(volume_create(&vs, "../x", 16, &rec, err, sizeof(err)), -EINVAL);
    ck_assert_int_eq(volume_create(&vs, "big", VOLUME_SIZE_MAX_MIB + 1, &rec, err, sizeof(err)),
                     -EINVAL);

    struct volume_holder a = sandbox("aaaa", false), b = sandbox("bbbb", false), in_way;
    bool before;
    ck_assert_int_eq(volume_hold(&vs, "nope", &a, &before, &in_way), -ENOENT);
    ck_assert_int_eq(volume_hold(&vs, "data", &a, &before, &in_way), 0);
    ck_assert(!before);
    ck_assert_int_eq(volume_hold(&vs, "data", &a, &before, &in_way), -EEXIST);
    ck_assert_int_eq(volume_hold(&vs, "data", &b, &before, &in_way), -EBUSY);
    ck_assert_str_eq(in_way_text(&in_way), "sandbox aaaa");
    ck_assert(!in_way.readonly);
    b.readonly = true; /* a reader beside the writer: refused too */
    ck_assert_int_eq(volume_hold(&vs, "data", &b, &before, &in_way), -EBUSY);
    ck_assert_int_eq(volume_remove(&vs, "data", &rec), -EBUSY);
    ck_assert_uint_eq(rec.nholders, 1);

    /* A "restart": a store opened anew reads the same holders. */
    struct volume_store again;
    ck_assert_int_eq(volume_store_open(&again, top, err, sizeof(err)), 0);
    ck_assert_int_eq(volume_get(&again, "data", &rec), 0);
    ck_assert_uint_eq(rec.nholders, 1);
    ck_assert_str_eq(rec.h[0].sandbox, "aaaa");

    volume_release_holder(&vs, "aaaa");
    ck_assert_int_eq(volume_get(&vs, "data", &rec), 0);
    ck_assert_uint_eq(rec.nholders, 0);

    /* readers: any number, the later ones told others read already */
    struct volume_holder c = sandbox("cccc", true), w = sandbox("wwww", false);
    ck_assert_int_eq(volume_hold(&vs, "data", &b, &before, &in_way), 0);
    ck_assert(!before);
    ck_assert_int_eq(volume_hold(&vs, "data", &c, &before, &in_way), 0);
    ck_assert(before);
    ck_assert_int_eq(volume_hold(&vs, "data", &w, &before, &in_way), -EBUSY);
    ck_assert(in_way.readonly);
    char all[400];
    ck_assert_int_eq(volume_get(&vs, "data", &rec), 0);
    volume_holders_text(&rec, all, sizeof(all));
    ck_assert_str_eq(all, "sandbox bbbb (read-only), sandbox cccc (read-only)");

    /* one reader goes; the prune of a dead daemon's sandboxes keeps cccc */
    ck_assert_int_eq(volume_release(&vs, "data", &b), 0);
    ck_assert_int_eq(volume_release(&vs, "data", &b), 0); /* gone already: nothing to do */
    ck_assert_int_eq(volume_hold(&vs, "data", &b, &before, &in_way), 0);
    volume_prune_sandboxes(&vs, keep_c, NULL);
    ck_assert_int_eq(volume_get(&vs, "data", &rec), 0);
    ck_assert_uint_eq(rec.nholders, 1);
    ck_assert_str_eq(rec.h[0].sandbox, "cccc");
    volume_release_holder(&vs, "cccc");
    ck_assert_int_eq(volume_remove(&vs, "data", &rec), 0);
    ck_assert_int_eq(stat(disk, &st), -1);
    ck_assert_int_eq(volume_remove(&vs, "data", &rec), -ENOENT);
}
END_TEST

/* An `airlock run` holder holds while its process lives, not after. */
START_TEST(run_holder)
{
    ck_assert_int_eq(volume_create(&vs, "r", 8, &rec, err, sizeof(err)), 0);
    struct volume_holder me, in_way, other = sandbox("ssss", false);
    bool before;
    volume_holder_self(&me, false);
    ck_assert_int_gt(me.pid_start, 0);
    ck_assert_int_eq(volume_hold(&vs, "r", &me, &before, &in_way), 0);
    ck_assert_int_eq(volume_hold(&vs, "r", &other, &before, &in_way), -EBUSY);
    ck_assert_ptr_nonnull(strstr(in_way_text(&in_way), "airlock run (pid "));
    /* a child holds it, then exits: its hold is gone with it */
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(volume_release(&vs, "r", &me), 0);
    pid_t pid = fork();
    if (pid == 0) {
        struct volume_holder child;
        bool b;
        volume_holder_self(&child, false);
        char ok = volume_hold(&vs, "r", &child, &b, &in_way) == 0 ? 'y' : 'n';
        (void)!write(p[1], &ok, 1);
        _exit(0);
    }
    char ok = 0;
    ck_assert_int_eq(read(p[0], &ok, 1), 1);
    ck_assert_int_eq(ok, 'y');
    waitpid(pid, NULL, 0);
    close(p[0]);
    close(p[1]);
    ck_assert_int_eq(volume_get(&vs, "r", &rec), 0);
    ck_assert_uint_eq(rec.nholders, 0);
    ck_assert_int_eq(volume_hold(&vs, "r", &other, &before, &in_way), 0);
}
END_TEST

START_TEST(damaged_record)
{
    ck_assert_int_eq(volume_create(&vs, "d", 8, &rec, err, sizeof(err)), 0);
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/d.json", vs.dir);
    static const char *const bad[] = {
        "{\"name\":\"d\",\"size_mib\":8,\"holders\":[{\"sandbox\":\"../x\",\"readonly\":true}]}",
        "{\"name\":\"e\",\"size_mib\":8,\"holders\":[]}",
        "{\"name\":\"d\",\"size_mib\":0,\"holders\":[]}",
        "{\"name\":\"d\",\"size_mib\":8,\"holders\":[{\"pid\":0,\"readonly\":true}]}",
        "{\"name\":\"d\",\"size_mib\":8,\"holders\":[{\"sandbox\":\"a\"}]}",
        "{\"name\":\"d\",\"size_mib\":8}",
        "{\"name\":\"d\",\"name\":\"d\",\"size_mib\":8,\"holders\":[]}",
        "{\"name\":\"d\",\"size_mib\":8,\"holders\":[",
        "",
    };
    struct volume_holder a = sandbox("aaaa", false), in_way;
    bool before;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        FILE *f = fopen(p, "w");
        ck_assert_ptr_nonnull(f);
        fputs(bad[i], f);
        fclose(f);
        ck_assert_msg(volume_get(&vs, "d", &rec) == -EIO, "%s", bad[i]);
        ck_assert_msg(volume_hold(&vs, "d", &a, &before, &in_way) == -EIO, "%s", bad[i]);
    }
    /* one past the record's bound is damaged too */
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < VOLUME_RECORD_MAX + 10; i++)
        fputc(' ', f);
    fclose(f);
    ck_assert_int_eq(volume_get(&vs, "d", &rec), -EIO);
    ck_assert_int_eq(volume_create(&vs, "d", 8, &rec, err, sizeof(err)), -EEXIST);
    ck_assert_int_eq(volume_remove(&vs, "d", &rec), 0); /* a damaged one can go */
}
END_TEST

/* An API answer's record (what `airlock volume ls --socket` reads) back:
 * the record the daemon made round-trips, holders and used_bytes too; one
 * off in any field is refused, not printed. */
START_TEST(answer_record)
{
    static struct volume_rec back;
    memset(&rec, 0, sizeof(rec));
    snprintf(rec.name, sizeof(rec.name), "data");
    rec.size_mib = 16;
    rec.used_bytes = 3u << 20;
    rec.created_ms = 1796650000000;
    rec.h[rec.nholders++] = sandbox("0123456789abcdef", true);
    rec.h[rec.nholders].pid = 4242;
    rec.h[rec.nholders++].readonly = true;
    json_t *o = volume_rec_json(&rec);
    ck_assert_int_eq(volume_rec_from_json(o, &back), 0);
    json_decref(o);
    ck_assert_str_eq(back.name, "data");
    ck_assert_uint_eq(back.size_mib, 16);
    ck_assert_uint_eq(back.used_bytes, 3u << 20);
    ck_assert_int_eq(back.created_ms, 1796650000000);
    char text[256];
    volume_holders_text(&back, text, sizeof(text));
    ck_assert_str_eq(text,
                     "sandbox 0123456789abcdef (read-only), airlock run (pid 4242) (read-only)");
    static const char *const bad[] = {
        "{\"name\":\"../x\",\"size_mib\":8,\"holders\":[]}",
        "{\"name\":\".h\",\"size_mib\":8,\"holders\":[]}",
        "{\"name\":7,\"size_mib\":8,\"holders\":[]}",
        "{\"name\":\"d\",\"size_mib\":1048577,\"holders\":[]}",
        "{\"name\":\"d\",\"size_mib\":8,\"used_bytes\":-1,\"holders\":[]}",
        "{\"name\":\"d\",\"size_mib\":8,\"holders\":{}}",
        "{\"name\":\"d\",\"size_mib\":8,\"holders\":[{\"sandbox\":\"\",\"readonly\":true}]}",
        "{\"name\":\"d\",\"size_mib\":8,\"holders\":[{\"pid\":-3,\"readonly\":false}]}",
        "{\"name\":\"d\",\"size_mib\":8,\"holders\":[{\"pid\":3,\"readonly\":1}]}",
        "[]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        o = json_loads(bad[i], 0, NULL);
        ck_assert_ptr_nonnull(o);
        ck_assert_msg(volume_rec_from_json(o, &back) == -EIO, "%s", bad[i]);
        json_decref(o);
    }
}
END_TEST

/* debugfs -w with one request, for a damage e2fsck must find. */
static void debugfs_w(const char *disk, const char *req)
{
    char cmd[PATH_MAX + 256];
    snprintf(cmd, sizeof(cmd), "PATH=$PATH:/usr/sbin:/sbin debugfs -w -R '%s' '%s' >/dev/null 2>&1",
             req, disk);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(check)
{
    char did[400], disk[PATH_MAX];
    ck_assert_int_eq(volume_create(&vs, "c", 16, &rec, err, sizeof(err)), 0);
    ck_assert_int_eq(volume_check(&vs, "c", false, did, sizeof(did), err, sizeof(err)), 0);
    ck_assert_str_eq(did, "clean");
    volume_disk_path(&vs, "c", disk, sizeof(disk));
    /* what -p fixes on its own: a wrong link count, the fs marked unclean */
    debugfs_w(disk, "sif <2> links_count 7");
    debugfs_w(disk, "ssv state 0");
    ck_assert_int_eq(volume_check(&vs, "c", false, did, sizeof(did), err, sizeof(err)), 0);
    ck_assert_msg(!strncmp(did, "repaired by e2fsck -p: ", 23), "%s", did);
    ck_assert_int_eq(volume_check(&vs, "c", false, did, sizeof(did), err, sizeof(err)), 0);
    ck_assert_str_eq(did, "clean");
    /* what -p refuses (the root inode cleared): -fy repairs it */
    debugfs_w(disk, "clri <2>");
    debugfs_w(disk, "ssv state 0");
    ck_assert_int_eq(volume_check(&vs, "c", false, did, sizeof(did), err, sizeof(err)), 0);
    ck_assert_msg(!strncmp(did, "repaired by e2fsck -fy: ", 24), "%s", did);
    /* a reader beside readers only reads: damage is refused, not fixed */
    debugfs_w(disk, "sif <2> links_count 9");
    debugfs_w(disk, "ssv state 0");
    ck_assert_int_eq(volume_check(&vs, "c", true, did, sizeof(did), err, sizeof(err)), -EIO);
    ck_assert_msg(strstr(err, "e2fsck -n left it damaged"), "%s", err);
    /* a disk that is not ext4 at all: refused, e2fsck's words given */
    int fd = open(disk, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    static const char zero[8192];
    ck_assert_int_eq(pwrite(fd, zero, sizeof(zero), 0), (ssize_t)sizeof(zero));
    close(fd);
    ck_assert_int_eq(volume_check(&vs, "c", false, did, sizeof(did), err, sizeof(err)), -EIO);
    ck_assert_msg(strstr(err, "left it damaged (status 8)"), "%s", err);
}
END_TEST

Suite *volumes_suite(void)
{
    Suite *s = suite_create("volumes");
    TCase *tc = tcase_create("volumes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, names);
    tcase_add_test(tc, sizes);
    tcase_add_test(tc, volume_flag);
    tcase_add_test(tc, store_and_holders);
    tcase_add_test(tc, run_holder);
    tcase_add_test(tc, damaged_record);
    tcase_add_test(tc, answer_record);
    tcase_add_test(tc, check);
    suite_add_tcase(s, tc);
    return s;
}
