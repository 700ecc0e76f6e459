/* vmm/util/spawner.c's request codec: what the spawner accepts from the
 * daemon before it forks.  The daemon is its only peer (a socketpair made
 * before the spawner was forked), so this is not a trust boundary to fuzz;
 * but a daemon subverted under its filter could send anything, and the
 * spawner runs with the daemon's starting privileges: every malformed
 * request is refused with a reason, and only the programs the daemon
 * spawns are run. */
#include <errno.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "vmm/util/spawner.h"

static char buf[SPAWN_MAX_MSG];
static struct spawn_parsed out;

static ssize_t build(enum spawn_prog prog, unsigned flags, char *const argv[], unsigned nfds)
{
    static const uint8_t target[SPAWN_MAX_FDS] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    return spawn_build(buf, sizeof(buf), prog, flags, argv, target, nfds);
}

static struct spawn_head *head(void)
{
    return (struct spawn_head *)buf; /* buf is static: aligned enough for its u32s */
}

START_TEST(round_trip)
{
    char *vm[] = {"airlock", "sandbox-vm", "--control-fd", "3", "", NULL};
    ssize_t n = build(SPAWN_SELF, SPAWN_NEW_PGRP, vm, 4);
    ck_assert_int_gt(n, (ssize_t)sizeof(struct spawn_head));
    const char *why;
    ck_assert_int_eq(spawn_parse(buf, (size_t)n, 4, &out, &why), 0);
    ck_assert_int_eq(out.prog, SPAWN_SELF);
    ck_assert_uint_eq(out.flags, SPAWN_NEW_PGRP);
    ck_assert_uint_eq(out.argc, 5);
    ck_assert_str_eq(out.argv[1], "sandbox-vm");
    ck_assert_str_eq(out.argv[4], ""); /* an empty argument is one */
    ck_assert_ptr_null(out.argv[5]);
    ck_assert_uint_eq(out.nfds, 4);
    ck_assert_uint_eq(out.target[3], 3);
    char *tool[] = {"e2fsck", "-fy", "/v/data.ext4", NULL};
    n = build(SPAWN_TOOL, 0, tool, 3);
    ck_assert_int_eq(spawn_parse(buf, (size_t)n, 3, &out, &why), 0);
    ck_assert_str_eq(out.argv[0], "e2fsck");
    char *snap[] = {"airlock", "snapshot", NULL};
    n = build(SPAWN_SELF, 0, snap, 0);
    ck_assert_int_eq(spawn_parse(buf, (size_t)n, 0, &out, &why), 0);
}
END_TEST

/* Each bad request: refused, and why names what was wrong. */
static void refused(size_t len, unsigned nfds, int want, const char *says)
{
    const char *why = NULL;
    ck_assert_int_eq(spawn_parse(buf, len, nfds, &out, &why), want);
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, says), "why: %s, want %s", why, says);
}

START_TEST(hostile_heads)
{
    char *vm[] = {"airlock", "sandbox-vm", NULL};
    ssize_t n = build(SPAWN_SELF, 0, vm, 3);
    refused(0, 3, -EINVAL, "shorter than its head");
    refused(sizeof(struct spawn_head) - 1, 3, -EINVAL, "shorter than its head");
    refused((size_t)n, 2, -EINVAL, "not the ones it names");  /* an fd missing */
    refused((size_t)n, 4, -EINVAL, "not the ones it names");  /* one too many */
    refused((size_t)n - 1, 3, -EINVAL, "length is not the message's"); /* cut */
    head()->magic ^= 1;
    refused((size_t)n, 3, -EINVAL, "not a spawn request");
    head()->magic ^= 1;
    head()->prog = 7;
    refused((size_t)n, 3, -EINVAL, "unknown program kind");
    head()->prog = SPAWN_SELF;
    head()->flags = 2;
    refused((size_t)n, 3, -EINVAL, "unknown flags");
    head()->flags = 0;
    head()->nfds = SPAWN_MAX_FDS + 1;
    refused((size_t)n, SPAWN_MAX_FDS + 1, -E2BIG, "too many fds");
    head()->nfds = 3;
    head()->target[2] = SPAWN_MAX_TARGET;
    refused((size_t)n, 3, -EINVAL, "number is too high");
    head()->target[2] = 1;
    refused((size_t)n, 3, -EINVAL, "two fds for one number");
    head()->target[2] = 2;
    uint16_t argc = head()->argc;
    head()->argc = 0;
    refused((size_t)n, 3, -EINVAL, "no arguments");
    head()->argc = SPAWN_MAX_ARGS + 1;
    refused((size_t)n, 3, -E2BIG, "too many");
    head()->argc = 3; /* more than the bytes hold */
    refused((size_t)n, 3, -EINVAL, "without its end");
    head()->argc = 1; /* fewer: bytes left over */
    refused((size_t)n, 3, -EINVAL, "past its last argument");
    head()->argc = argc;
    buf[n - 1] = 'x'; /* the last argument's NUL gone */
    refused((size_t)n, 3, -EINVAL, "without its end");
    buf[n - 1] = '\0';
    const char *why;
    ck_assert_int_eq(spawn_parse(buf, (size_t)n, 3, &out, &why), 0); /* repaired: fine again */
}
END_TEST

START_TEST(only_its_programs)
{
    char *run[] = {"airlock", "run", "--", "sh", NULL};
    refused((size_t)build(SPAWN_SELF, 0, run, 0), 0, -EINVAL, "does not run");
    char *other[] = {"sh", "sandbox-vm", NULL};
    refused((size_t)build(SPAWN_SELF, 0, other, 0), 0, -EINVAL, "does not run");
    char *alone[] = {"airlock", NULL};
    refused((size_t)build(SPAWN_SELF, 0, alone, 0), 0, -EINVAL, "does not run");
    char *sh[] = {"sh", "-c", "id", NULL};
    refused((size_t)build(SPAWN_TOOL, 0, sh, 0), 0, -EINVAL, "does not run");
    char *path[] = {"/usr/sbin/e2fsck", NULL}; /* a name, never a path */
    refused((size_t)build(SPAWN_TOOL, 0, path, 0), 0, -EINVAL, "does not run");
    char *self_as_tool[] = {"airlock", "sandbox-vm", NULL};
    refused((size_t)build(SPAWN_TOOL, 0, self_as_tool, 0), 0, -EINVAL, "does not run");
}
END_TEST

START_TEST(build_bounds)
{
    static char big[SPAWN_MAX_MSG];
    memset(big, 'a', sizeof(big) - 1);
    char *argv[] = {"airlock", "sandbox-vm", big, NULL};
    ck_assert_int_eq(build(SPAWN_SELF, 0, argv, 0), -E2BIG);
    static char *many[SPAWN_MAX_ARGS + 2];
    for (unsigned i = 0; i < SPAWN_MAX_ARGS + 1; i++)
        many[i] = "x";
    ck_assert_int_eq(build(SPAWN_SELF, 0, many, 0), -E2BIG);
    char *ok[] = {"airlock", "sandbox-vm", NULL};
    ck_assert_int_eq(spawn_build(buf, sizeof(buf), SPAWN_SELF, 0, ok, NULL, SPAWN_MAX_FDS + 1),
                     -E2BIG);
    ck_assert_int_eq(spawn_build(buf, 4, SPAWN_SELF, 0, ok, NULL, 0), -E2BIG);
}
END_TEST

Suite *spawner_suite(void)
{
    Suite *s = suite_create("spawner");
    TCase *tc = tcase_create("spawner");
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, hostile_heads);
    tcase_add_test(tc, only_its_programs);
    tcase_add_test(tc, build_bounds);
    suite_add_tcase(s, tc);
    return s;
}
