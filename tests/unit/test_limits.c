/* vmm/audit/limits.c (the token bucket, the limit record), the console's output
 * limits (vmm/kvm/console.c) and agent_exec's output cap arithmetic. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/agent_client/agent_client.h"
#include "vmm/audit/audit.h"
#include "vmm/kvm/console.h"
#include "vmm/audit/limits.h"
#include "vmm/kvm/vsock_host.h"

#define S 1000000000ULL /* one second in ns */

START_TEST(bucket_starts_full_then_refills_at_rate)
{
    struct rate_limit rl;
    rate_limit_init(&rl, 1000, 4000);
    ck_assert_uint_eq(rate_limit_take(&rl, 5 * S, 10000), 4000); /* the burst, no more */
    ck_assert_uint_eq(rate_limit_take(&rl, 5 * S, 1), 0);
    ck_assert_uint_eq(rate_limit_take(&rl, 5 * S + S / 2, 10000), 500);
    /* Half a byte of credit per call: nothing is lost to rounding. */
    uint64_t got = 0;
    for (uint64_t t = 1; t <= 2000; t++)
        got += rate_limit_take(&rl, 5 * S + S / 2 + t * (S / 2000), 1);
    ck_assert_uint_eq(got, 1000);
}
END_TEST

START_TEST(bucket_never_exceeds_burst_or_overflows)
{
    struct rate_limit rl;
    rate_limit_init(&rl, 1ULL << 30, 4ULL << 30);
    /* Years of idle time at 1 GiB/s: credit is capped at the burst. */
    ck_assert_uint_eq(rate_limit_take(&rl, UINT64_MAX / 2, UINT64_MAX), 4ULL << 30);
    ck_assert_uint_eq(rate_limit_take(&rl, UINT64_MAX, UINT64_MAX), 4ULL << 30);
    /* A burst beyond 16 GiB is cut to that. */
    rate_limit_init(&rl, 1, UINT64_MAX);
    ck_assert_uint_eq(rate_limit_take(&rl, 1, UINT64_MAX), 16ULL << 30);
}
END_TEST

START_TEST(bucket_clock_backwards_and_rate_zero)
{
    struct rate_limit rl;
    rate_limit_init(&rl, 100, 100);
    ck_assert_uint_eq(rate_limit_take(&rl, 10 * S, 100), 100);
    ck_assert_uint_eq(rate_limit_take(&rl, 1 * S, 100), 0); /* earlier: no credit */
    ck_assert_uint_eq(rate_limit_take(&rl, 10 * S + S / 10, 100), 10);
    rate_limit_init(&rl, 0, 0);
    ck_assert_uint_eq(rate_limit_take(&rl, 0, UINT64_MAX), UINT64_MAX);
}
END_TEST

START_TEST(output_cap_counts_both_streams_and_cuts_exactly)
{
    struct agent_output_cap cap = {.max = 10};
    ck_assert_uint_eq(agent_output_take(&cap, 4), 4);
    ck_assert_uint_eq(agent_output_take(&cap, 4), 4);
    ck_assert_uint_eq(agent_output_take(&cap, 4), 2); /* cut at the cap */
    ck_assert_uint_eq(agent_output_take(&cap, 4), 0);
    ck_assert_uint_eq(agent_output_take(&cap, 0), 0);
    ck_assert_uint_eq(cap.used, 10);
    ck_assert_uint_eq(cap.dropped, 6);
    struct agent_output_cap none = {.max = UINT64_MAX};
    ck_assert_uint_eq(agent_output_take(&none, AGENT_MAX_CHUNK), AGENT_MAX_CHUNK);
    ck_assert_uint_eq(none.dropped, 0);
}
END_TEST

static off_t file_size(const char *p)
{
    struct stat st;
    ck_assert_int_eq(stat(p, &st), 0);
    return st.st_size;
}

/* --console-max: the file ends at exactly the cap, the rest is counted,
 * and the limit record names it.  No event loop: every line is written by
 * the "vCPU" at once. */
START_TEST(console_max_caps_the_file)
{
    char path[] = "/tmp/airlock-console-XXXXXX", apath[] = "/tmp/airlock-climit-XXXXXX";
    close(mkstemp(path));
    close(mkstemp(apath));
    struct audit au;
    ck_assert_int_eq(audit_open(&au, apath), 0);
    limits_set_audit(&au);
    static struct console c;
    char err[256];
    ck_assert_int_eq(console_open(&c, path, err, sizeof(err)), 0);
    console_set_limits(&c, 0, 1);
    for (unsigned i = 0; i < (3u << 20) / 2; i++)
        console_tx(&c, i % 64 == 63 ? '\n' : 'x');
    ck_assert_uint_eq(c.dropped, (1u << 20) / 2);
    console_close(&c);
    limits_set_audit(NULL);
    audit_close(&au);
    ck_assert_int_eq(file_size(path), 1 << 20);
    char rec[1024] = {0};
    int fd = open(apath, O_RDONLY);
    ck_assert_int_gt(read(fd, rec, sizeof(rec) - 1), 0);
    close(fd);
    ck_assert_ptr_nonnull(strstr(rec, "\"event\":\"limit\",\"limit\":\"console_max\",\"max\":1048576"));
    ck_assert_ptr_null(strchr(strchr(rec, '\n') + 1, '\n')); /* reported once */
    unlink(path);
    unlink(apath);
}
END_TEST

/* The vsock connection cap (VSOCK_MAX_CONNS) through the device's host
 * ops (vmm/kvm/vsock_host.c): however often a guest hits it, one stderr line
 * and one limit record. */
START_TEST(vsock_conn_cap_reported_once)
{
    char apath[] = "/tmp/airlock-vlimit-XXXXXX";
    close(mkstemp(apath));
    struct audit au;
    ck_assert_int_eq(audit_open(&au, apath), 0);
    limits_set_audit(&au);
    static struct vsock_host h;
    vsock_host_init(&h);
    for (int i = 0; i < 3; i++)
        vsock_host_ops.conn_cap(&h, VSOCK_MAX_CONNS);
    limits_set_audit(NULL);
    audit_close(&au);
    char rec[1024] = {0};
    int fd = open(apath, O_RDONLY);
    ck_assert_int_gt(read(fd, rec, sizeof(rec) - 1), 0);
    close(fd);
    ck_assert_ptr_nonnull(strstr(rec, "\"event\":\"limit\",\"limit\":\"vsock_conns\",\"max\":256,"));
    ck_assert_ptr_null(strchr(strchr(rec, '\n') + 1, '\n')); /* reported once */
    unlink(apath);
}
END_TEST

/* --console-rate: a burst passes, then the rest of a flood is dropped. */
START_TEST(console_rate_drops_a_flood)
{
    char path[] = "/tmp/airlock-console-XXXXXX";
    close(mkstemp(path));
    static struct console c;
    char err[256];
    ck_assert_int_eq(console_open(&c, path, err, sizeof(err)), 0);
    console_set_limits(&c, 1, 0); /* 1 KiB/s, bursts of 4 KiB */
    for (unsigned i = 0; i < 100000; i++)
        console_tx(&c, 'y');
    console_close(&c);
    off_t n = file_size(path);
    ck_assert_int_ge(n, 4096);
    ck_assert_int_lt(n, 4096 + 1024 * 10); /* even on a slow, sanitized run */
    unlink(path);
}
END_TEST

START_TEST(console_limit_values)
{
    uint64_t v;
    char err[200];
    ck_assert_int_eq(console_parse_limit("--console-rate", "0", &v, err, sizeof(err)), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(console_parse_limit("--console-max", "16777216", &v, err, sizeof(err)), 0);
    ck_assert_int_ne(console_parse_limit("--console-max", "16777217", &v, err, sizeof(err)), 0);
    ck_assert_str_eq(err, "--console-max '16777217': want whole MiB, 0 (no limit) to 16777216");
    ck_assert_int_ne(console_parse_limit("--console-rate", "-1", &v, err, sizeof(err)), 0);
    ck_assert_int_ne(console_parse_limit("--console-rate", "", &v, err, sizeof(err)), 0);
}
END_TEST

Suite *limits_suite(void)
{
    Suite *s = suite_create("limits");
    TCase *tc = tcase_create("limits");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bucket_starts_full_then_refills_at_rate);
    tcase_add_test(tc, bucket_never_exceeds_burst_or_overflows);
    tcase_add_test(tc, bucket_clock_backwards_and_rate_zero);
    tcase_add_test(tc, output_cap_counts_both_streams_and_cuts_exactly);
    tcase_add_test(tc, console_max_caps_the_file);
    tcase_add_test(tc, vsock_conn_cap_reported_once);
    tcase_add_test(tc, console_rate_drops_a_flood);
    tcase_add_test(tc, console_limit_values);
    suite_add_tcase(s, tc);
    return s;
}
