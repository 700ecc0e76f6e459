/* vmm/cli/run_copy_tree.c and the folder half of vmm/cli/run_copy.c: a --copy-out
 * folder's tar, which a guest that took over the VM process may have
 * written, made into a tree beside HOST by the waiting parent.  A good
 * tree comes out whole (folders, an empty one, a symlink kept as a link,
 * an executable, a 0555 folder with files in it, setuid dropped) and only
 * then takes HOST's name, under the real "copyout" seccomp filter too.
 * Hostile tars are refused with the member named, HOST never appears and
 * nothing is written outside the staging folder: "..", absolute names, a
 * symlink and then a write through it, a symlink and then a file of its
 * name, too many members, too much data, too long a tar, a hardlink, a
 * device, a top that is a link or missing. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/cli/run_copy.h"
#include "vmm/cli/run_copy_tree.h"
#include "vmm/jail/seccomp.h"
#include "vmm/util/rmtree.h"

static char dir[64], stage[128], outside[128];

static void setup(void)
{
    strcpy(dir, "/tmp/airlock-copy-tree.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(stage, sizeof(stage), "%s/stage", dir);
    snprintf(outside, sizeof(outside), "%s/outside", dir);
    ck_assert_int_eq(mkdir(stage, 0700), 0);
    ck_assert_int_eq(mkdir(outside, 0700), 0);
}

static void teardown(void)
{
    chmod(stage, 0700);
    rmtree(dir);
}

/* A member: type, name, mode, file data or link target. */
struct spec {
    int type; /* AE_IF*; AE_IFREG with link set: a hardlink */
    const char *name;
    unsigned mode;
    const char *data;
    const char *link;
};

/* The tar of n specs in a fresh unnamed file, as the VM process leaves it. */
static int tar_file(const struct spec *s, size_t n)
{
    int fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    struct archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    ck_assert_int_eq(archive_write_open_fd(a, fd), ARCHIVE_OK);
    for (size_t i = 0; i < n; i++) {
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, s[i].name);
        archive_entry_set_filetype(e, (mode_t)s[i].type);
        archive_entry_set_perm(e, s[i].mode);
        if (s[i].type == AE_IFLNK)
            archive_entry_set_symlink(e, s[i].link);
        else if (s[i].link)
            archive_entry_set_hardlink(e, s[i].link);
        if (s[i].type == AE_IFREG && !s[i].link)
            archive_entry_set_size(e, s[i].data ? (la_int64_t)strlen(s[i].data) : 0);
        ck_assert_int_ge(archive_write_header(a, e), ARCHIVE_WARN);
        if (s[i].type == AE_IFREG && s[i].data)
            archive_write_data(a, s[i].data, strlen(s[i].data));
        archive_entry_free(e);
    }
    ck_assert_int_eq(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
    return fd;
}

static const struct run_copy_tree_limits roomy = {{1000, 1 << 20}, 16 << 20, 1 << 20};
static char err[1024];

static int unpack(const struct spec *s, size_t n, const struct run_copy_tree_limits *lim)
{
    int fd = tar_file(s, n);
    int sfd = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(sfd, 0);
    err[0] = 0;
    int rc = run_copy_tree_unpack(fd, sfd, strlen(stage), lim, err, sizeof(err));
    close(sfd);
    close(fd);
    return rc;
}

/* Nothing but what it held before in `outside`. */
static void outside_untouched(void)
{
    char p[200];
    snprintf(p, sizeof(p), "%s/evil", outside);
    struct stat st;
    ck_assert_msg(lstat(p, &st) < 0, "%s was written", p);
    snprintf(p, sizeof(p), "%s/victim", outside);
    if (lstat(p, &st) == 0) {
        FILE *f = fopen(p, "r");
        char buf[32] = "";
        ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
        fclose(f);
        ck_assert_str_eq(buf, "victim");
    }
}

static unsigned mode_of(const char *rel)
{
    char p[300];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", stage, rel);
    ck_assert_int_eq(lstat(p, &st), 0);
    return st.st_mode & 07777;
}

static const struct spec good[] = {
    {AE_IFDIR, "tree/", 0751, NULL, NULL},
    {AE_IFDIR, "tree/empty/", 0700, NULL, NULL},
    {AE_IFDIR, "tree/ro/", 0555, NULL, NULL},
    {AE_IFREG, "tree/ro/inside", 0444, "held", NULL},
    {AE_IFREG, "tree/run.sh", 0755, "#!/bin/sh\necho hi\n", NULL},
    {AE_IFREG, "tree/suid", 04755, "x", NULL},
    {AE_IFLNK, "tree/link", 0777, NULL, "/etc/passwd"}, /* anywhere: made as a link */
};

START_TEST(a_good_tree_comes_out_whole)
{
    ck_assert_int_eq(unpack(good, 7, &roomy), 0);
    ck_assert_uint_eq(mode_of("tree"), 0751);
    ck_assert_uint_eq(mode_of("tree/empty"), 0700);
    ck_assert_uint_eq(mode_of("tree/ro"), 0555); /* set after its file was made */
    ck_assert_uint_eq(mode_of("tree/ro/inside"), 0444);
    ck_assert_uint_eq(mode_of("tree/run.sh"), 0755);
    ck_assert_uint_eq(mode_of("tree/suid"), 0755); /* setuid dropped */
    char p[300], target[64] = "";
    snprintf(p, sizeof(p), "%s/tree/link", stage);
    ck_assert_int_eq(readlink(p, target, sizeof(target) - 1), 11);
    ck_assert_str_eq(target, "/etc/passwd");
    snprintf(p, sizeof(p), "%s/tree/ro", stage);
    chmod(p, 0755); /* so teardown can remove it */
}
END_TEST

/* One hostile member after a good start: -1, the member and why named,
 * and nothing outside the staging folder. */
static void refused(const struct spec *bad, size_t nbad, const char *want)
{
    struct spec s[8] = {{AE_IFDIR, "tree/", 0755, NULL, NULL}};
    rmtree(stage);
    ck_assert_int_eq(mkdir(stage, 0700), 0);
    memcpy(s + 1, bad, nbad * sizeof(*bad));
    ck_assert_int_eq(unpack(s, nbad + 1, &roomy), -1);
    ck_assert_msg(strstr(err, want), "err: %s (want %s)", err, want);
    outside_untouched();
}

START_TEST(hostile_tars_refused)
{
    char abs_evil[200], rel_evil[200];
    snprintf(abs_evil, sizeof(abs_evil), "%s/evil", outside);
    snprintf(rel_evil, sizeof(rel_evil), "tree/../outside/evil");
    refused(&(struct spec){AE_IFREG, rel_evil, 0644, "x", NULL}, 1, "'..'");
    refused(&(struct spec){AE_IFREG, "../outside/evil", 0644, "x", NULL}, 1, "'..'");
    refused(&(struct spec){AE_IFREG, abs_evil, 0644, "x", NULL}, 1, "an absolute name");
    refused(&(struct spec){AE_IFDIR, "/tmp", 0755, NULL, NULL}, 1, "an absolute name");
    /* a link out, then a write through it: the link is made, the write is not */
    struct spec through[] = {{AE_IFLNK, "tree/l", 0777, NULL, outside},
                             {AE_IFREG, "tree/l/evil", 0644, "x", NULL}};
    refused(through, 2, "l/evil: a path through a symlink (never followed)");
    struct spec through_dir[] = {{AE_IFLNK, "tree/l", 0777, NULL, outside},
                                 {AE_IFDIR, "tree/l/evil", 0755, NULL, NULL}};
    refused(through_dir, 2, "l/evil/: a path through a symlink");
    /* a link to a file, then a file of the link's name: not written through */
    char victim[200];
    snprintf(victim, sizeof(victim), "%s/victim", outside);
    FILE *f = fopen(victim, "w");
    fputs("victim", f);
    fclose(f);
    struct spec over[] = {{AE_IFLNK, "tree/v", 0777, NULL, victim},
                          {AE_IFREG, "tree/v", 0644, "overwritten", NULL}};
    refused(over, 2, "v: File exists");
    struct spec link_over[] = {{AE_IFLNK, "tree/w", 0777, NULL, victim},
                               {AE_IFLNK, "tree/w", 0777, NULL, "/"}};
    refused(link_over, 2, "w: File exists");
    refused(&(struct spec){AE_IFREG, "tree/hl", 0644, NULL, "tree"}, 1, "hardlink");
    refused(&(struct spec){AE_IFCHR, "tree/dev", 0644, NULL, NULL}, 1, "device");
    refused(&(struct spec){AE_IFREG, "tree/missing/f", 0644, "x", NULL}, 1,
            "missing/f: No such file or directory");
}
END_TEST

START_TEST(limits_hold)
{
    /* members: a tree of 11 when 10 are allowed */
    static const struct run_copy_tree_limits ten = {{10, 1 << 20}, 16 << 20, 1 << 20};
    struct spec many[11];
    char names[11][16];
    many[0] = (struct spec){AE_IFDIR, "tree/", 0755, NULL, NULL};
    for (int i = 1; i < 11; i++) {
        snprintf(names[i], sizeof(names[i]), "tree/d%d/", i);
        many[i] = (struct spec){AE_IFDIR, names[i], 0755, NULL, NULL};
    }
    ck_assert_int_eq(unpack(many, 10, &ten), 0);
    rmtree(stage);
    ck_assert_int_eq(mkdir(stage, 0700), 0);
    ck_assert_int_eq(unpack(many, 11, &ten), -1);
    ck_assert_msg(strstr(err, "d10/: past the limit of 10 members"), "err: %s", err);
    /* file data: 5 bytes when 4 are allowed */
    static const struct run_copy_tree_limits four = {{10, 4}, 16 << 20, 1 << 20};
    struct spec data[] = {{AE_IFDIR, "tree/", 0755, NULL, NULL},
                          {AE_IFREG, "tree/f", 0644, "12345", NULL}};
    rmtree(stage);
    ck_assert_int_eq(mkdir(stage, 0700), 0);
    ck_assert_int_eq(unpack(data, 2, &four), -1);
    ck_assert_msg(strstr(err, "f: past the limit of 4 bytes of file data"), "err: %s", err);
    /* the tar itself: cut off at 1 KiB, it is a broken one */
    static const struct run_copy_tree_limits short_tar = {{10, 1 << 20}, 1024, 1 << 20};
    rmtree(stage);
    ck_assert_int_eq(mkdir(stage, 0700), 0);
    ck_assert_int_eq(unpack(good, 6, &short_tar), -1);
    /* the folders' names held for their modes */
    static const struct run_copy_tree_limits few_names = {{10, 1 << 20}, 16 << 20, 12};
    rmtree(stage);
    ck_assert_int_eq(mkdir(stage, 0700), 0);
    ck_assert_int_eq(unpack(many, 5, &few_names), -1);
    ck_assert_msg(strstr(err, "more folders' names"), "err: %s", err);
}
END_TEST

START_TEST(the_top_must_be_a_folder)
{
    struct spec link_top[] = {{AE_IFLNK, "tree", 0777, NULL, "/"}};
    ck_assert_int_eq(unpack(link_top, 1, &roomy), -1);
    ck_assert_msg(strstr(err, "holds no folder tree"), "err: %s", err);
    rmtree(stage);
    ck_assert_int_eq(mkdir(stage, 0700), 0);
    struct spec other[] = {{AE_IFDIR, "other/", 0755, NULL, NULL}};
    ck_assert_int_eq(unpack(other, 1, &roomy), -1);
    ck_assert_msg(strstr(err, "holds no folder tree"), "err: %s", err);
    rmtree(stage);
    ck_assert_int_eq(mkdir(stage, 0700), 0);
    static const uint8_t noise[4096] = {'n', 'o', 't', ' ', 'a', ' ', 't', 'a', 'r'};
    int fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    ck_assert_int_eq(write(fd, noise, sizeof(noise)), (ssize_t)sizeof(noise));
    int sfd = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_eq(run_copy_tree_unpack(fd, sfd, strlen(stage), &roomy, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "not a tar archive"), "err: %s", err);
    close(sfd);
    close(fd);
}
END_TEST

/* ---- the whole finish step: parse, the VM process's tar, the parent ---- */

/* The names in dir, sorted, joined by spaces (hidden ones too). */
static const char *names(void)
{
    static char out[512];
    struct dirent **list;
    int n = scandir(dir, &list, NULL, alphasort);
    ck_assert_int_ge(n, 0);
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(list[i]->d_name, ".") && strcmp(list[i]->d_name, "..")) {
            strncat(out, list[i]->d_name, sizeof(out) - strlen(out) - 2);
            strcat(out, " ");
        }
        free(list[i]);
    }
    free(list);
    return out;
}

/* The finish step in a child under the "copyout" filter: -errno, or the
 * signal that killed it (> 0). */
static int finish_in_child(void *c)
{
    return -run_copy_finish(c);
}

/* Parses "/guest/w:HOST", writes the tar of s into its file as the VM
 * process would (complete or not), and runs the finish step (under the
 * "copyout" filter when asked).  Its result. */
static int copy_out(const char *host, const struct spec *s, size_t n, bool complete, bool filtered)
{
    static char arg[300];
    struct run_copy c;
    snprintf(arg, sizeof(arg), "/guest/w:%s", host);
    ck_assert_int_eq(run_copy_parse(arg, false, &c), 0);
    int t = tar_file(s, n);
    lseek(t, 0, SEEK_SET);
    char buf[65536];
    ssize_t k;
    while ((k = read(t, buf, sizeof(buf))) > 0)
        ck_assert_int_eq(write(c.fd, buf, (size_t)k), k);
    close(t);
    if (complete)
        run_copy_completed(&c, RUN_COPY_TREE);
    int rc;
    if (filtered) {
        rc = unit_under_filter(SECCOMP_COPYOUT, finish_in_child, &c);
        ck_assert_msg(rc <= 0, "the finish step was killed by signal %d", rc);
        close(c.fd); /* the child closed its copy */
        c.fd = -1;
    } else {
        rc = run_copy_finish(&c);
    }
    run_copy_release(&c);
    return rc;
}

START_TEST(a_folder_copy_out_is_named_whole)
{
    char host[128];
    snprintf(host, sizeof(host), "%s/result", dir);
    rmtree(stage);
    rmtree(outside);
    for (int filtered = 0; filtered < 2; filtered++) {
        ck_assert_int_eq(copy_out(host, good, 7, true, filtered), 0);
        ck_assert_str_eq(names(), "result ");
        struct stat st;
        char p[200];
        snprintf(p, sizeof(p), "%s/ro/inside", host);
        ck_assert_int_eq(stat(p, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0444);
        snprintf(p, sizeof(p), "%s/ro", host);
        chmod(p, 0755);
        /* once there, the next copy goes inside it, under GUEST's name */
        ck_assert_int_eq(copy_out(host, good, 7, true, filtered), 0);
        snprintf(p, sizeof(p), "%s/w/run.sh", host);
        ck_assert_int_eq(stat(p, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0755);
        snprintf(p, sizeof(p), "%s/w/ro", host);
        chmod(p, 0755);
        ck_assert_str_eq(names(), "result ");
        rmtree(host);
    }
}
END_TEST

START_TEST(a_failed_folder_copy_out_leaves_nothing)
{
    char host[128];
    snprintf(host, sizeof(host), "%s/result", dir);
    rmtree(stage);
    rmtree(outside);
    struct spec evil[] = {{AE_IFDIR, "tree/", 0755, NULL, NULL},
                          {AE_IFLNK, "tree/l", 0777, NULL, dir},
                          {AE_IFREG, "tree/l/evil", 0644, "x", NULL}};
    for (int filtered = 0; filtered < 2; filtered++) {
        ck_assert_int_ne(copy_out(host, evil, 3, true, filtered), 0);
        ck_assert_str_eq(names(), ""); /* no HOST, no staging folder, no evil */
        /* not complete (the run failed during the copy): nothing either */
        ck_assert_int_eq(copy_out(host, good, 6, false, filtered), 0);
        ck_assert_str_eq(names(), "");
    }
    /* a folder onto an existing file: refused, the file as it was */
    FILE *f = fopen(host, "w");
    fputs("old", f);
    fclose(f);
    ck_assert_int_eq(copy_out(host, good, 6, true, false), -EEXIST);
    ck_assert_str_eq(names(), "result ");
    struct stat st;
    ck_assert_int_eq(stat(host, &st), 0);
    ck_assert(S_ISREG(st.st_mode) && st.st_size == 3);
}
END_TEST

Suite *run_copy_tree_suite(void)
{
    Suite *s = suite_create("run_copy_tree");
    TCase *tc = tcase_create("hostile_tars");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_good_tree_comes_out_whole);
    tcase_add_test(tc, hostile_tars_refused);
    tcase_add_test(tc, limits_hold);
    tcase_add_test(tc, the_top_must_be_a_folder);
    tcase_add_test(tc, a_folder_copy_out_is_named_whole);
    tcase_add_test(tc, a_failed_folder_copy_out_leaves_nothing);
    suite_add_tcase(s, tc);
    return s;
}
