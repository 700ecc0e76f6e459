/* vmm/cli/run_copy.c: a --copy-out creates no host file while it is parsed,
 * and its file gets the HOST name only once the copy is complete,
 * replacing an existing HOST whole; into an existing folder it goes
 * under GUEST's name; bad host paths are refused at once.  A --copy-in
 * of a folder is a tar made at once (its top named as the folder, links
 * as links, modes kept; HOST/. without the top).  (The folder copy-out's
 * unpacking: test_run_copy_tree.c.) */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/cli/run_copy.h"
#include "vmm/jail/seccomp.h"
#include "vmm/util/rmtree.h"

static char dir[64];

static void setup(void)
{
    strcpy(dir, "/tmp/airlock-run-copy.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    rmtree(dir);
}

/* The names in dir, sorted, joined by spaces. */
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

/* Parses "/guest/f:HOST"; an earlier parse into c is released first. */
static bool parsed;
static int parse_out(struct run_copy *c, const char *host)
{
    static char arg[512];
    snprintf(arg, sizeof(arg), "/guest/f:%s", host);
    if (parsed)
        run_copy_release(c);
    memset(c, 0, sizeof(*c));
    parsed = true;
    return run_copy_parse(arg, false, c);
}

static void done_with(struct run_copy *c)
{
    run_copy_release(c);
    parsed = false;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static const char *get(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

START_TEST(nothing_created_until_complete)
{
    struct run_copy c;
    char host[128];
    snprintf(host, sizeof(host), "%s/out", dir);
    ck_assert_int_eq(parse_out(&c, host), 0);
    ck_assert_int_ge(c.fd, 0);
    ck_assert_str_eq(names(), ""); /* parsed: no file yet */
    ck_assert_int_eq(write(c.fd, "data", 4), 4);
    ck_assert_str_eq(names(), ""); /* written, not complete: still none */
    run_copy_completed(&c, RUN_COPY_FILE);
    ck_assert_int_eq(run_copy_finish(&c), 0);
    ck_assert_str_eq(names(), "out ");
    ck_assert_str_eq(get(host), "data");
    struct stat st;
    ck_assert_int_eq(stat(host, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0644 & ~(unsigned)umask(022)); /* as before */
    umask(022);
    ck_assert_int_eq(c.fd, -1);
    done_with(&c);
}
END_TEST

START_TEST(incomplete_leaves_nothing_and_keeps_old)
{
    struct run_copy c;
    char host[128], fresh[128];
    snprintf(host, sizeof(host), "%s/old", dir);
    snprintf(fresh, sizeof(fresh), "%s/fresh", dir);
    put(host, "old contents");
    ck_assert_int_eq(parse_out(&c, host), 0);
    ck_assert_int_eq(write(c.fd, "part", 4), 4); /* a partial copy, never completed */
    ck_assert_int_eq(run_copy_finish(&c), 0);
    ck_assert_str_eq(get(host), "old contents");
    ck_assert_int_eq(parse_out(&c, fresh), 0);
    ck_assert_int_eq(run_copy_finish(&c), 0); /* the run failed before the copy */
    ck_assert_str_eq(names(), "old ");
    done_with(&c);
}
END_TEST

START_TEST(complete_replaces_whole)
{
    struct run_copy c;
    char host[128];
    snprintf(host, sizeof(host), "%s/old", dir);
    put(host, "a much longer old content than the new one");
    ck_assert_int_eq(parse_out(&c, host), 0);
    ck_assert_int_eq(write(c.fd, "new", 3), 3);
    run_copy_completed(&c, RUN_COPY_FILE);
    ck_assert_int_eq(run_copy_finish(&c), 0);
    ck_assert_str_eq(get(host), "new");
    ck_assert_str_eq(names(), "old ");
    done_with(&c);
}
END_TEST

START_TEST(bad_host_paths_refused_at_once)
{
    struct run_copy c;
    char p[160];
    ck_assert_int_eq(parse_out(&c, "/nonexistent/dir/f"), -ENOENT);
    snprintf(p, sizeof(p), "%s/sub/", dir);
    ck_assert_int_eq(parse_out(&c, p), -EISDIR);
    snprintf(p, sizeof(p), "%s/file", dir);
    put(p, "x");
    snprintf(p, sizeof(p), "%s/file/f", dir);
    ck_assert_int_eq(parse_out(&c, p), -ENOTDIR);
    ck_assert_int_eq(parse_out(&c, "/dev/null"), -EINVAL); /* not a regular file */
    ck_assert_str_eq(names(), "file ");
    /* the argument's own shape */
    done_with(&c);
    char arg[] = "relative:/tmp/x";
    memset(&c, 0, sizeof(c));
    ck_assert_int_eq(run_copy_parse(arg, false, &c), -EINVAL);
    run_copy_release(&c);
    char arg2[] = "/g:";
    ck_assert_int_eq(run_copy_parse(arg2, false, &c), -EINVAL);
    run_copy_release(&c);
}
END_TEST

/* A copy-out with GUEST given: "GUEST:HOST". */
static int parse_out_guest(struct run_copy *c, const char *guest, const char *host)
{
    static char arg[512];
    snprintf(arg, sizeof(arg), "%s:%s", guest, host);
    if (parsed)
        run_copy_release(c);
    parsed = true;
    return run_copy_parse(arg, false, c);
}

START_TEST(into_an_existing_folder)
{
    struct run_copy c;
    char want[160], sub[160];
    /* under GUEST's own name, trailing '/' on either side or not */
    ck_assert_int_eq(parse_out_guest(&c, "/guest/out.txt", dir), 0);
    snprintf(want, sizeof(want), "%s/out.txt", dir);
    ck_assert_str_eq(c.host, want);
    ck_assert(!c.onto_file);
    ck_assert_str_eq(names(), ""); /* still nothing */
    ck_assert_int_eq(write(c.fd, "in", 2), 2);
    run_copy_completed(&c, RUN_COPY_FILE);
    ck_assert_int_eq(run_copy_finish(&c), 0);
    ck_assert_str_eq(get(want), "in");
    snprintf(sub, sizeof(sub), "%s/", dir);
    ck_assert_int_eq(parse_out_guest(&c, "/guest/out.txt/", sub), 0);
    ck_assert_str_eq(c.host, want);
    ck_assert(c.onto_file); /* that name is a file now: a file replaces it, a folder may not */
    /* that name a folder already: refused (never merged into) */
    snprintf(sub, sizeof(sub), "%s/work", dir);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    ck_assert_int_eq(parse_out_guest(&c, "/srv/work", dir), -EEXIST);
    ck_assert_msg(strstr(c.why, "is a folder already"), "why: %s", c.why);
    /* no name of its own, or GUEST/. (which would merge) */
    ck_assert_int_eq(parse_out_guest(&c, "/", dir), -EINVAL);
    ck_assert_msg(strstr(c.why, "no name of its own"), "why: %s", c.why);
    ck_assert_int_eq(parse_out_guest(&c, "/srv/..", dir), -EINVAL);
    ck_assert_int_eq(parse_out_guest(&c, "/srv/.", dir), -EINVAL);
    ck_assert_msg(strstr(c.why, "merge"), "why: %s", c.why);
    /* GUEST/. onto a new name is GUEST itself */
    snprintf(sub, sizeof(sub), "%s/fresh", dir);
    ck_assert_int_eq(parse_out_guest(&c, "/srv/.", sub), 0);
    ck_assert_str_eq(c.host, sub);
    ck_assert_str_eq(names(), "out.txt work ");
    done_with(&c);
}
END_TEST

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The members of the tar in fd, sorted: "NAME TYPE MODE[ ->TARGET];" each
 * (a folder's name without its '/'). */
static const char *tar_listing(int fd)
{
    static char out[2048];
    char *lines[32];
    int n = 0;
    struct archive *a = archive_read_new();
    archive_read_support_format_tar(a);
    ck_assert_int_eq(archive_read_open_fd(a, fd, 10240), ARCHIVE_OK);
    struct archive_entry *e;
    while (n < 32 && archive_read_next_header(a, &e) == ARCHIVE_OK) {
        mode_t t = archive_entry_filetype(e);
        char name[512];
        snprintf(name, sizeof(name), "%s", archive_entry_pathname(e));
        size_t l = strlen(name);
        if (l > 1 && name[l - 1] == '/')
            name[l - 1] = 0;
        ck_assert_int_ge(asprintf(&lines[n++], "%s %c %o%s%s;", name,
                                  t == AE_IFDIR ? 'd' : t == AE_IFLNK ? 'l' : t == AE_IFREG ? 'f' : '?',
                                  (unsigned)archive_entry_perm(e), t == AE_IFLNK ? " ->" : "",
                                  t == AE_IFLNK ? archive_entry_symlink(e) : ""), 0);
    }
    archive_read_free(a);
    qsort(lines, (size_t)n, sizeof(*lines), by_name);
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        strncat(out, lines[i], sizeof(out) - strlen(out) - 1);
        free(lines[i]);
    }
    return out;
}

START_TEST(copy_in_of_a_folder)
{
    char src[160], p[200], arg[300];
    snprintf(src, sizeof(src), "%s/proj", dir);
    ck_assert_int_eq(mkdir(src, 0750), 0);
    snprintf(p, sizeof(p), "%s/run.sh", src);
    put(p, "#!/bin/sh\n");
    ck_assert_int_eq(chmod(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/empty", src);
    ck_assert_int_eq(mkdir(p, 0700), 0);
    snprintf(p, sizeof(p), "%s/link", src);
    ck_assert_int_eq(symlink("/etc/passwd", p), 0); /* a link, never followed */
    struct run_copy c;
    snprintf(arg, sizeof(arg), "%s:/work", src);
    ck_assert_int_eq(run_copy_parse(arg, true, &c), 0);
    ck_assert(c.tree && !c.contents);
    ck_assert_str_eq(c.top, "proj");
    ck_assert_str_eq(tar_listing(c.fd), "proj d 750;proj/empty d 700;proj/link l 777 ->/etc/passwd;"
                                        "proj/run.sh f 755;");
    run_copy_release(&c);
    /* HOST/.: what the folder holds, no top; the name of "." resolved */
    snprintf(arg, sizeof(arg), "%s/.:/work", src);
    ck_assert_int_eq(run_copy_parse(arg, true, &c), 0);
    ck_assert(c.tree && c.contents);
    ck_assert_str_eq(tar_listing(c.fd), "empty d 700;link l 777 ->/etc/passwd;run.sh f 755;");
    run_copy_release(&c);
    /* neither a file nor a folder; a relative guest path; a missing host path */
    char dev[] = "/dev/null:/x";
    ck_assert_int_eq(run_copy_parse(dev, true, &c), -EINVAL);
    run_copy_release(&c);
    snprintf(arg, sizeof(arg), "%s:work", src);
    ck_assert_int_eq(run_copy_parse(arg, true, &c), -EINVAL);
    run_copy_release(&c);
    snprintf(arg, sizeof(arg), "%s/none:/work", dir);
    ck_assert_int_eq(run_copy_parse(arg, true, &c), -ENOENT);
    run_copy_release(&c);
}
END_TEST

/* run_copy_finish as the waiting parent runs it: under the "detach"
 * seccomp filter, where a call off its list kills the process. */
static int finish_in_child(void *c)
{
    return run_copy_finish(c) ? 1 : 0;
}

static int finish_under_filter(struct run_copy *c)
{
    int r = unit_under_filter(SECCOMP_DETACH, finish_in_child, c);
    ck_assert_msg(r <= 0, "the finish step was killed by signal %d", r);
    return -r;
}

START_TEST(finish_under_the_detach_filter)
{
    struct run_copy c;
    char host[128];
    snprintf(host, sizeof(host), "%s/old", dir);
    put(host, "old");
    /* O_TMPFILE: linked under a hidden name, then renamed over HOST */
    ck_assert_int_eq(parse_out(&c, host), 0);
    ck_assert(!c.named); /* this /tmp has O_TMPFILE */
    ck_assert_int_eq(write(c.fd, "new", 3), 3);
    run_copy_completed(&c, RUN_COPY_FILE);
    ck_assert_int_eq(finish_under_filter(&c), 0);
    ck_assert_str_eq(get(host), "new");
    ck_assert_str_eq(names(), "old ");
    /* A hidden name made at once (filesystems without O_TMPFILE):
     * renamed when complete, removed when not. */
    for (int complete = 0; complete < 2; complete++) {
        ck_assert_int_eq(parse_out(&c, host), 0);
        close(c.fd);
        c.fd = mkostemp(c.tmp, O_CLOEXEC);
        ck_assert_int_ge(c.fd, 0);
        c.named = true;
        ck_assert_int_eq(write(c.fd, complete ? "third" : "part", complete ? 5 : 4), complete ? 5 : 4);
        if (complete)
            run_copy_completed(&c, RUN_COPY_FILE);
        ck_assert_int_eq(finish_under_filter(&c), 0);
        ck_assert_str_eq(get(host), complete ? "third" : "new");
        ck_assert_str_eq(names(), "old ");
    }
    done_with(&c);
}
END_TEST

Suite *run_copy_suite(void)
{
    Suite *s = suite_create("run_copy");
    TCase *tc = tcase_create("copy_out");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, nothing_created_until_complete);
    tcase_add_test(tc, incomplete_leaves_nothing_and_keeps_old);
    tcase_add_test(tc, complete_replaces_whole);
    tcase_add_test(tc, bad_host_paths_refused_at_once);
    tcase_add_test(tc, finish_under_the_detach_filter);
    tcase_add_test(tc, into_an_existing_folder);
    tcase_add_test(tc, copy_in_of_a_folder);
    suite_add_tcase(s, tc);
    return s;
}
