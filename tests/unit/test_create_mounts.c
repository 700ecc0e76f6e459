/* A create's "mounts" (vmm/sandbox/create_mounts.c) with hostile entries:
 * each refusal a real answer (400 or 403) naming its field
 * ("mounts[1].volume"), once; volumes read-write unless told, folders
 * read-only; the disks' numbers (volumes first); folders of one source
 * and mode sharing a disk; and --mount-root
 * (vmm/sandbox/mount_roots.c): TCP with no root refused, a source outside
 * every root, through a link leading out or with "..", and one beneath a
 * root given as its real path. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/sandbox/create_mounts.h"
#include "vmm/util/rmtree.h"
#include "vmm/util/user_dirs.h"

static char top[64];
static struct create_mounts cm;
static struct mount_roots roots;
static int status;
static char field[64], error[1024];

static void setup(void)
{
    snprintf(top, sizeof(top), "/tmp/airlock-cmounts.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(top));
    memset(&roots, 0, sizeof(roots));
}

static void teardown(void)
{
    for (unsigned i = 0; i < roots.n; i++)
        close(roots.fd[i]);
    rmtree(top);
}

/* Parses body (with %s standing for top) under the policy; status 0 when
 * nothing was answered, else the answer's status, field and error. */
static void parse(const char *fmt, const struct mount_policy *p)
{
    char body[4096];
    snprintf(body, sizeof(body), fmt, top, top, top);
    /* the daemon's reader refuses \u0000 itself; these checks must not lean on it */
    json_t *o = json_loads(body, JSON_ALLOW_NUL, NULL);
    ck_assert_msg(o, "%s", body);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct api_conn *c = calloc(1, sizeof(*c));
    ck_assert_ptr_nonnull(c);
    c->fd = sv[0];
    struct fields f = {c, o, false};
    create_mounts_parse(&f, &cm, p);
    close(sv[0]);
    char buf[8192];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof(buf) - 1 && (r = read(sv[1], buf + n, sizeof(buf) - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = '\0';
    close(sv[1]);
    free(c);
    json_decref(o);
    status = 0;
    field[0] = error[0] = '\0';
    ck_assert_int_eq(f.failed, n > 0);
    if (!n)
        return;
    ck_assert_int_eq(sscanf(buf, "HTTP/1.1 %d ", &status), 1);
    const char *b = strstr(buf, "\r\n\r\n");
    ck_assert_ptr_nonnull(b);
    json_t *ans = json_loads(b + 4, 0, NULL);
    ck_assert_msg(ans, "%s", b + 4); /* one answer, whole */
    snprintf(field, sizeof(field), "%s", json_string_value(json_object_get(ans, "field")) ?: "");
    snprintf(error, sizeof(error), "%s", json_string_value(json_object_get(ans, "error")) ?: "");
    json_decref(ans);
}

START_TEST(good)
{
    parse("{\"mounts\": [{\"source\": \"/src\", \"target\": \"/s\"},"
          " {\"volume\": \"data\", \"target\": \"/data\"},"
          " {\"volume\": \"ref\", \"target\": \"/ref\", \"readonly\": true},"
          " {\"source\": \"/out\", \"target\": \"/o\", \"readonly\": false}]}", NULL);
    ck_assert_int_eq(status, 0);
    ck_assert_uint_eq(cm.n, 4);
    ck_assert(!cm.volume[0] && !cm.rw[0]); /* a folder: read-only unless told */
    ck_assert_str_eq(cm.spec[0], "/src:/s:ro");
    ck_assert(cm.volume[1] && cm.rw[1]);   /* a volume: read-write unless told */
    ck_assert_str_eq(cm.name[1], "data");
    ck_assert(cm.volume[2] && !cm.rw[2]);
    ck_assert_str_eq(cm.spec[3], "/out:/o:rw");
    /* the volumes are --disk (1, 2), before the --mount folders (3, 4) */
    ck_assert_uint_eq(create_mounts_device(&cm, 1), 1);
    ck_assert_uint_eq(create_mounts_device(&cm, 2), 2);
    ck_assert_uint_eq(create_mounts_device(&cm, 0), 3);
    ck_assert_uint_eq(create_mounts_device(&cm, 3), 4);
    parse("{}", NULL);
    ck_assert_int_eq(status, 0);
    ck_assert_uint_eq(cm.n, 0);
}
END_TEST

START_TEST(hostile)
{
    static const struct { const char *body, *field, *says; } bad[] = {
        {"{\"mounts\": {}}", "mounts", "at most 8"},
        {"{\"mounts\": \"/x\"}", "mounts", "at most 8"},
        {"{\"mounts\": [1,2,3,4,5,6,7,8,9]}", "mounts", "at most 8"},
        {"{\"mounts\": [7]}", "mounts[0]", "an object"},
        {"{\"mounts\": [{\"volume\": \"a\", \"target\": \"/a\"}, {\"target\": \"/b\"}]}",
         "mounts[1].source", "a source (a host folder) or a volume"},
        {"{\"mounts\": [{\"source\": \"/a\", \"volume\": \"a\", \"target\": \"/a\"}]}", "mounts[0]",
         "not both"},
        {"{\"mounts\": [{\"volume\": \"a\", \"target\": \"/a\", \"mode\": \"rw\"}]}", "mounts[0]",
         "unknown field 'mode'"},
        {"{\"mounts\": [{\"volume\": 5, \"target\": \"/a\"}]}", "mounts[0].volume", "want a name"},
        {"{\"mounts\": [{\"volume\": \"../etc\", \"target\": \"/a\"}]}", "mounts[0].volume",
         "want a name"},
        {"{\"mounts\": [{\"volume\": \"\", \"target\": \"/a\"}]}", "mounts[0].volume", "want a name"},
        {"{\"mounts\": [{\"volume\": \".hidden\", \"target\": \"/a\"}]}", "mounts[0].volume",
         "want a name"},
        {"{\"mounts\": [{\"volume\": \"a\\u0000b\", \"target\": \"/a\"}]}", "mounts[0].volume",
         "want a name"},
        {"{\"mounts\": [{\"volume\": \"x12345678901234567890123456789012345678901234567890123456"
         "789012345\", \"target\": \"/a\"}]}", "mounts[0].volume", "want a name"},
        {"{\"mounts\": [{\"volume\": \"a\"}]}", "mounts[0].target", "needs a target"},
        {"{\"mounts\": [{\"volume\": \"a\", \"target\": 3}]}", "mounts[0].target", "needs a target"},
        {"{\"mounts\": [{\"volume\": \"a\", \"target\": \"/proc\"}]}", "mounts[0].target",
         "want an absolute guest folder"},
        {"{\"mounts\": [{\"volume\": \"a\", \"target\": \"/a/../b\"}]}", "mounts[0].target",
         "want an absolute guest folder"},
        {"{\"mounts\": [{\"volume\": \"a\", \"target\": \"/a:b\"}]}", "mounts[0].target",
         "want an absolute guest folder"},
        {"{\"mounts\": [{\"volume\": \"a\", \"target\": \"/a\\u0000b\"}]}", "mounts[0].target",
         "want an absolute guest folder"},
        {"{\"mounts\": [{\"volume\": \"a\", \"target\": \"/a\", \"readonly\": \"yes\"}]}",
         "mounts[0].readonly", "true or false"},
        {"{\"mounts\": [{\"volume\": \"a\", \"target\": \"/a\"}, {\"volume\": \"a\", \"target\": "
         "\"/b\"}]}", "mounts[1].volume", "mounted twice"},
        {"{\"mounts\": [{\"volume\": \"a\", \"target\": \"/a\"}, {\"source\": \"/x\", \"target\": "
         "\"/a\"}]}", "mounts[1].target", "mounted twice"},
        {"{\"mounts\": [{\"source\": \"rel\", \"target\": \"/a\"}]}", "mounts[0].source",
         "absolute host folder"},
        {"{\"mounts\": [{\"source\": \"/a:b\", \"target\": \"/a\"}]}", "mounts[0].source",
         "absolute host folder"},
        {"{\"mounts\": [{\"source\": 1, \"target\": \"/a\"}]}", "mounts[0].source",
         "a source (a host folder) or a volume"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        parse(bad[i].body, NULL);
        ck_assert_msg(status == 400, "%s: %d", bad[i].body, status);
        ck_assert_msg(!strcmp(field, bad[i].field), "%s: field %s", bad[i].body, field);
        ck_assert_msg(strstr(error, bad[i].says), "%s: %s", bad[i].body, error);
    }
}
END_TEST

START_TEST(mount_root)
{
    char dir[128], err[256];
    snprintf(dir, sizeof(dir), "%s/root/share/sub", top);
    ck_assert_int_eq(make_dirs(dir, 0700), 0);
    snprintf(dir, sizeof(dir), "%s/outside", top);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    char link[128];
    snprintf(link, sizeof(link), "%s/root/leak", top);
    ck_assert_int_eq(symlink(dir, link), 0);
    snprintf(link, sizeof(link), "%s/root/inner", top);
    ck_assert_int_eq(symlink("share", link), 0);
    struct mount_policy unix_none = {&roots, false}, tcp = {&roots, true};

    /* no root: the Unix socket takes any folder, TCP none */
    parse("{\"mounts\": [{\"source\": \"%s/outside\", \"target\": \"/a\"}]}", &unix_none);
    ck_assert_int_eq(status, 0);
    parse("{\"mounts\": [{\"source\": \"%s/outside\", \"target\": \"/a\"}]}", &tcp);
    ck_assert_int_eq(status, 403);
    ck_assert_str_eq(field, "mounts[0].source");
    ck_assert_ptr_nonnull(strstr(error, "--mount-root"));

    snprintf(dir, sizeof(dir), "%s/root/", top); /* a '/' at its end is dropped */
    ck_assert_int_eq(mount_roots_add(&roots, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(mount_roots_add(&roots, "relative", err, sizeof(err)), -1);
    ck_assert_int_eq(mount_roots_add(&roots, "/no/such/root", err, sizeof(err)), -1);
    parse("{\"mounts\": [{\"source\": \"%s/root/share/sub\", \"target\": \"/a\"}]}", &tcp);
    ck_assert_int_eq(status, 0);
    char want[256];
    snprintf(want, sizeof(want), "%s/root/share/sub:/a:ro", top);
    ck_assert_str_eq(cm.spec[0], want);
    /* a link that stays beneath: the VM gets the folder's own path */
    parse("{\"mounts\": [{\"source\": \"%s/root/inner/sub\", \"target\": \"/a\"}]}", &tcp);
    ck_assert_int_eq(status, 0);
    ck_assert_str_eq(cm.spec[0], want);
    static const struct { const char *body; int status; const char *says; } bad[] = {
        {"{\"mounts\": [{\"source\": \"%s/outside\", \"target\": \"/a\"}]}", 403,
         "not under a --mount-root"},
        {"{\"mounts\": [{\"source\": \"%s/rootx\", \"target\": \"/a\"}]}", 403,
         "not under a --mount-root"},
        {"{\"mounts\": [{\"source\": \"%s/root/leak\", \"target\": \"/a\"}]}", 403,
         "a link on its way leads out"},
        {"{\"mounts\": [{\"source\": \"%s/root/share/../../outside\", \"target\": \"/a\"}]}", 400,
         "no '..' part"},
        {"{\"mounts\": [{\"source\": \"%s/root/..\", \"target\": \"/a\"}]}", 400, "no '..' part"},
        {"{\"mounts\": [{\"source\": \"%s/root/nope\", \"target\": \"/a\"}]}", 400,
         "No such file"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        parse(bad[i].body, &unix_none); /* with a root, the Unix socket is held to it too */
        ck_assert_msg(status == bad[i].status, "%s: %d %s", bad[i].body, status, error);
        ck_assert_str_eq(field, "mounts[0].source");
        ck_assert_msg(strstr(error, bad[i].says), "%s: %s", bad[i].body, error);
    }
}
END_TEST

/* Folder mounts of one source and mode share one disk: one --mount (the
 * first's), the same device for each target; a different mode, a source
 * whose name another's begins, one written with a '/' more, and volumes
 * never share.  A link beneath a --mount-root resolved to a folder given
 * as itself elsewhere: one disk. */
START_TEST(shared)
{
    /* the runtime-tools suite's eight binds of /etc */
    parse("{\"mounts\": [{\"source\": \"/etc\", \"target\": \"/mnt/etc-shared\"},"
          " {\"source\": \"/etc\", \"target\": \"/mnt/etc-rshared\"},"
          " {\"source\": \"/etc\", \"target\": \"/mnt/etc-slave\"},"
          " {\"source\": \"/etc\", \"target\": \"/mnt/etc-rslave\"},"
          " {\"source\": \"/etc\", \"target\": \"/mnt/etc-private\"},"
          " {\"source\": \"/etc\", \"target\": \"/mnt/etc-rprivate\"},"
          " {\"source\": \"/etc\", \"target\": \"/mnt/etc-unbindable\"},"
          " {\"source\": \"/etc\", \"target\": \"/mnt/etc-runbindable\"}]}", NULL);
    ck_assert_int_eq(status, 0);
    ck_assert_uint_eq(cm.n, 8);
    ck_assert_uint_eq(create_mounts_disks(&cm), 1);
    for (unsigned i = 0; i < 8; i++) {
        ck_assert_uint_eq(create_mounts_owner(&cm, i), 0);
        ck_assert_uint_eq(create_mounts_device(&cm, i), 1);
    }

    parse("{\"mounts\": [{\"source\": \"/x\", \"target\": \"/a\"},"           /* 0 */
          " {\"volume\": \"v\", \"target\": \"/v\"},"                              /* 1 */
          " {\"source\": \"/x\", \"target\": \"/b\", \"readonly\": false},"       /* 2 */
          " {\"source\": \"/xy\", \"target\": \"/c\"},"                             /* 3 */
          " {\"source\": \"/x/\", \"target\": \"/d\"},"                             /* 4 */
          " {\"source\": \"/x\", \"target\": \"/e\", \"readonly\": true},"        /* 5 */
          " {\"volume\": \"w\", \"target\": \"/w\", \"readonly\": true},"         /* 6 */
          " {\"source\": \"/x\", \"target\": \"/f\", \"readonly\": false}]}",     /* 7 */
          NULL);
    ck_assert_int_eq(status, 0);
    ck_assert_uint_eq(cm.n, 8);
    static const unsigned owner[] = {0, 1, 2, 3, 4, 0, 6, 2};
    /* volumes 1, 2; the folders' disks in their owners' order: 0, 2, 3, 4 */
    static const unsigned device[] = {3, 1, 4, 5, 6, 3, 2, 4};
    for (unsigned i = 0; i < 8; i++) {
        ck_assert_uint_eq(create_mounts_owner(&cm, i), owner[i]);
        ck_assert_uint_eq(create_mounts_device(&cm, i), device[i]);
    }
    ck_assert_uint_eq(create_mounts_disks(&cm), 6);

    /* a link beneath a root and the folder it names: the same source */
    char dir[128], link[128], err[256];
    snprintf(dir, sizeof(dir), "%s/root/share", top);
    ck_assert_int_eq(make_dirs(dir, 0700), 0);
    snprintf(link, sizeof(link), "%s/root/inner", top);
    ck_assert_int_eq(symlink("share", link), 0);
    snprintf(dir, sizeof(dir), "%s/root", top);
    ck_assert_int_eq(mount_roots_add(&roots, dir, err, sizeof(err)), 0);
    struct mount_policy p = {&roots, false};
    parse("{\"mounts\": [{\"source\": \"%s/root/share\", \"target\": \"/a\"},"
          " {\"source\": \"%s/root/inner\", \"target\": \"/b\"}]}", &p);
    ck_assert_int_eq(status, 0);
    ck_assert_uint_eq(create_mounts_owner(&cm, 1), 0);
    ck_assert_uint_eq(create_mounts_disks(&cm), 1);
}
END_TEST

Suite *create_mounts_suite(void)
{
    Suite *s = suite_create("create_mounts");
    TCase *tc = tcase_create("create_mounts");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, good);
    tcase_add_test(tc, hostile);
    tcase_add_test(tc, mount_root);
    tcase_add_test(tc, shared);
    suite_add_tcase(s, tc);
    return s;
}
