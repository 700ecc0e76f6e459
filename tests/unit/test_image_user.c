/* vmm/image/image_user.c: an image config's User to numbers from the image's
 * own /etc/passwd and /etc/group, which are hostile; and vmm/image/image_ref.c:
 * what an --image value names. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/image/image_ref.h"
#include "vmm/image/image_user.h"
#include "tests/unit/helpers.h"

static char tree[64];
static int root = -1;

static void put(const char *rel, const char *text)
{
    char p[200];
    snprintf(p, sizeof(p), "%s/%s", tree, rel);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    snprintf(tree, sizeof(tree), "/tmp/airlock-user-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tree));
    char etc[100];
    snprintf(etc, sizeof(etc), "%s/etc", tree);
    ck_assert_int_eq(mkdir(etc, 0755), 0);
    root = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(root, 0);
}

static void teardown(void)
{
    close(root);
    char cmd[120];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tree);
    ck_assert_int_eq(system(cmd), 0);
}

static uint32_t uid, gid;
static char why[400];

static int resolve(const char *user)
{
    uid = gid = 77777;
    why[0] = '\0';
    return image_user_resolve(root, user, &uid, &gid, why, sizeof(why));
}

START_TEST(names_and_numbers)
{
    put("etc/passwd", "root:x:0:0:root:/root:/bin/sh\napp:x:1000:1001::/home/app:/bin/sh\n");
    put("etc/group", "root:x:0:\napp:x:1001:\nstaff:x:50:app\n");
    ck_assert_int_eq(resolve("app"), 0);
    ck_assert_uint_eq(uid, 1000);
    ck_assert_uint_eq(gid, 1001); /* its passwd group */
    ck_assert_int_eq(resolve("app:staff"), 0);
    ck_assert_uint_eq(uid, 1000);
    ck_assert_uint_eq(gid, 50);
    ck_assert_int_eq(resolve("1000"), 0);
    ck_assert_uint_eq(gid, 1001); /* a number with an entry: the entry's group */
    ck_assert_int_eq(resolve("4242"), 0);
    ck_assert_uint_eq(uid, 4242);
    ck_assert_uint_eq(gid, 0); /* without one: group 0, as docker */
    ck_assert_int_eq(resolve("4242:7"), 0);
    ck_assert_uint_eq(gid, 7);
    ck_assert_int_eq(resolve("app:9"), 0);
    ck_assert_uint_eq(gid, 9);
}
END_TEST

START_TEST(refusals)
{
    put("etc/passwd", "app:x:1000:1001::/:/bin/sh\n");
    ck_assert_int_eq(resolve("ghost"), -1);
    ck_assert_str_eq(why, "User 'ghost': 'ghost' is not in the image's /etc/passwd");
    ck_assert_int_eq(resolve("app:nogroup"), -1); /* no /etc/group at all */
    ck_assert_ptr_nonnull(strstr(why, "group 'nogroup'"));
    ck_assert_int_eq(resolve(""), -1);
    ck_assert_int_eq(resolve("-1"), -1);
    ck_assert_int_eq(resolve("4294967295"), -1); /* (uid_t)-1 is no user */
}
END_TEST

/* The image's /etc/passwd is a symlink to the host's: resolved inside the
 * tree (as the guest would), so the host's file is never read. */
START_TEST(symlink_stays_inside)
{
    char p[200];
    snprintf(p, sizeof(p), "%s/etc/passwd", tree);
    ck_assert_int_eq(symlink("/etc/passwd", p), 0); /* loops onto itself in the tree */
    ck_assert_int_eq(resolve("root"), -1);
    unlink(p);
    ck_assert_int_eq(symlink("../../../../../../../etc/shadow-ish", p), 0);
    ck_assert_int_eq(resolve("root"), -1);
    unlink(p);
    snprintf(p, sizeof(p), "%s/etc/passwd", tree);
    ck_assert_int_eq(mkdir(p, 0755), 0); /* not a regular file */
    ck_assert_int_eq(resolve("root"), -1);
}
END_TEST

START_TEST(refs)
{
    char home[64], err[600];
    snprintf(home, sizeof(home), "/tmp/airlock-home-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(home));
    setenv("AIRLOCK_HOME", home, 1);
    struct image_ref ref;
    ck_assert_int_eq(image_ref_resolve(NULL, &ref, err, sizeof(err)), 0);
    ck_assert_str_eq(ref.name, "python");
    ck_assert(ref.own_agent);
    ck_assert_ptr_nonnull(strstr(ref.disk, "python.ext4"));
    ck_assert_int_eq(image_ref_resolve("small", &ref, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(strstr(ref.disk, "rootfs.ext4"));
    ck_assert_int_eq(image_ref_resolve("nope", &ref, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "--image 'nope': no such image"));
    ck_assert_int_eq(image_ref_resolve("/some/disk.ext4", &ref, err, sizeof(err)), 0);
    ck_assert(ref.own_agent);
    /* a store record */
    char p[200];
    snprintf(p, sizeof(p), "%s/images/mine.json", home);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"name\":\"mine\",\"id\":\"sha256:ab\",\"disk\":\"/x/ab.ext4\",\"config\":{}}", f);
    fclose(f);
    ck_assert_int_eq(image_ref_resolve("mine", &ref, err, sizeof(err)), 0);
    ck_assert(!ref.own_agent);
    ck_assert_str_eq(ref.disk, "/x/ab.ext4");
    ck_assert_ptr_nonnull(ref.rec);
    image_ref_release(&ref);
    f = fopen(p, "w");
    fputs("{\"name\":\"mine\"}", f); /* no disk */
    fclose(f);
    ck_assert_int_eq(image_ref_resolve("mine", &ref, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "broken"));
    ck_assert(image_is_builtin("python") && !image_is_builtin("mine"));
    json_t *b = image_builtin_record("small");
    ck_assert(json_is_true(json_object_get(b, "builtin")));
    json_decref(b);
    ck_assert_ptr_null(image_builtin_record("mine"));
    unsetenv("AIRLOCK_HOME");
    char cmd[120];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", home);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *image_user_suite(void)
{
    Suite *s = suite_create("image_user");
    TCase *t = tcase_create("image_user");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, names_and_numbers);
    tcase_add_test(t, refusals);
    tcase_add_test(t, symlink_stays_inside);
    tcase_add_test(t, refs);
    suite_add_tcase(s, t);
    return s;
}
