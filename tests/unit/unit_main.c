/* Runs every unit-test suite; exits non-zero when any check fails.
 *
 * Two things check itself does not do in CK_FORK=no mode (which `make
 * unit-test` uses, so that ASan and LSan see the whole run in one process):
 *
 *   - Skips.  check has no skip state: a test that cannot run here calls
 *     unit_skip() (helpers.h), and this runner counts it as skipped, not
 *     passed.  It prints "SKIP: unit: TEST: WHY" for each, then
 *     "unit: N passed, N failed, N skipped" (what tests/run-all counts).
 *
 *   - Timeouts.  tcase_set_timeout() is a no-op without fork.  A watchdog
 *     thread keeps each test to its tcase's bound (check's: 4 s unless
 *     CK_DEFAULT_TIMEOUT or tcase_set_timeout say otherwise, times
 *     CK_TIMEOUT_MULTIPLIER): a test still running past it is named, counted
 *     as failed, and ends the run (exit 1) with the summary so far.
 *
 * The runner learns when a test starts, what bound its tcase has and when
 * an assertion failed by wrapping check's own entry points at link time
 * (-Wl,--wrap, tests/unit/unit.mk): tcase_fn_start (check calls it just
 * before each test function), tcase_create, _tcase_add_test,
 * tcase_set_timeout and _ck_assert_failed. */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/helpers.h"

/* ---- what the suites declared ---------------------------------------- */

#define MAX_TCASES 256
#define MAX_TESTS 2048

static struct {
    TCase *tc;
    const char *name;
    double timeout;
} tcases[MAX_TCASES];
static unsigned ntcases;

static struct {
    const char *name; /* the TTest's own name pointer: tcase_fn_start gets it */
    TCase *tc;
} tests[MAX_TESTS];
static unsigned ntests;

static double env_number(const char *name, double dflt)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return dflt;
    double v = strtod(s, &end);
    return *end || v <= 0 ? dflt : v;
}

static unsigned tcase_slot(TCase *tc)
{
    for (unsigned i = 0; i < ntcases; i++)
        if (tcases[i].tc == tc)
            return i;
    if (ntcases == MAX_TCASES) {
        fprintf(stderr, "unit: more than %d tcases: raise MAX_TCASES in unit_main.c\n", MAX_TCASES);
        exit(EXIT_FAILURE);
    }
    tcases[ntcases].tc = tc;
    tcases[ntcases].timeout = env_number("CK_DEFAULT_TIMEOUT", 4);
    return ntcases++;
}

TCase *__real_tcase_create(const char *name);
TCase *__wrap_tcase_create(const char *name)
{
    TCase *tc = __real_tcase_create(name);
    tcases[tcase_slot(tc)].name = name;
    return tc;
}

void __real_tcase_set_timeout(TCase *tc, double timeout);
void __wrap_tcase_set_timeout(TCase *tc, double timeout)
{
    tcases[tcase_slot(tc)].timeout = timeout;
    __real_tcase_set_timeout(tc, timeout);
}

void __real__tcase_add_test(TCase *tc, const TTest *ttest, int sig, int allowed_exit, int start,
                            int end);
void __wrap__tcase_add_test(TCase *tc, const TTest *ttest, int sig, int allowed_exit, int start,
                            int end)
{
    tcase_slot(tc);
    if (ntests == MAX_TESTS) {
        fprintf(stderr, "unit: more than %d tests: raise MAX_TESTS in unit_main.c\n", MAX_TESTS);
        exit(EXIT_FAILURE);
    }
    tests[ntests].name = ttest->name;
    tests[ntests++].tc = tc;
    __real__tcase_add_test(tc, ttest, sig, allowed_exit, start, end);
}

/* The tcase slot of the test check is about to run (by its name pointer). */
static int tcase_of(const char *name)
{
    for (unsigned i = 0; i < ntests; i++)
        if (tests[i].name == name)
            return (int)tcase_slot(tests[i].tc);
    return -1;
}

static double bound_of(const char *name)
{
    double mult = env_number("CK_TIMEOUT_MULTIPLIER", 1);
    int t = tcase_of(name);
    return (t < 0 ? env_number("CK_DEFAULT_TIMEOUT", 4) : tcases[t].timeout) * mult;
}

/* ---- the running test: skips and failures ------------------------------ */

#define MAX_SKIPS 64

static struct {
    const char *tcase, *test;
    char why[200];
} skips[MAX_SKIPS];
static unsigned nskips; /* skip lines recorded */

/* Tests done so far (the watchdog reads them when it ends the run). */
static _Atomic unsigned ndone, nfailed, nskipped;

static const char *cur_name; /* main thread only */
static bool cur_skipped, cur_failed;
static unsigned cur_skips_from; /* its skip lines start here */

/* Closes the books on the test that just ran (a failed test is failed,
 * whatever part of it was skipped: its skip lines go). */
static void test_done(void)
{
    if (cur_name && cur_failed)
        nskips = cur_skips_from;
    cur_skips_from = nskips;
    if (cur_name) {
        atomic_fetch_add(&ndone, 1);
        if (cur_failed)
            atomic_fetch_add(&nfailed, 1);
        else if (cur_skipped)
            atomic_fetch_add(&nskipped, 1);
    }
    cur_name = NULL;
    cur_skipped = cur_failed = false;
}

static const char *tcase_name_of(const char *test)
{
    int t = test ? tcase_of(test) : -1;
    return t >= 0 && tcases[t].name ? tcases[t].name : "?";
}

void unit_skip(const char *fmt, ...)
{
    cur_skipped = true;
    if (nskips == MAX_SKIPS)
        return; /* counted, not listed; the summary says so */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(skips[nskips].why, sizeof(skips[nskips].why), fmt, ap);
    va_end(ap);
    skips[nskips].tcase = tcase_name_of(cur_name);
    skips[nskips++].test = cur_name ? cur_name : "?";
}

static void print_skips(void)
{
    for (unsigned i = 0; i < nskips; i++)
        printf("SKIP: unit: %s/%s: %s\n", skips[i].tcase, skips[i].test, skips[i].why);
    if (nskips == MAX_SKIPS)
        printf("SKIP: unit: (more skips than the %d listed)\n", MAX_SKIPS);
}

void __real__ck_assert_failed(const char *file, int line, const char *expr, const char *msg, ...)
    __attribute__((noreturn));
void __wrap__ck_assert_failed(const char *file, int line, const char *expr, const char *msg, ...)
{
    cur_failed = true;
    char buf[BUFSIZ];
    if (msg) {
        va_list ap;
        va_start(ap, msg);
        vsnprintf(buf, sizeof(buf), msg, ap);
        va_end(ap);
    }
    /* Said now as well: check lists failures only when the whole run ends. */
    fprintf(stderr, "unit: FAIL %s/%s %s:%d: %s\n", tcase_name_of(cur_name),
            cur_name ? cur_name : "?", file, line, msg ? buf : expr);
    if (!msg)
        __real__ck_assert_failed(file, line, expr, NULL, NULL);
    __real__ck_assert_failed(file, line, expr, "%s", buf, NULL);
}

/* ---- the watchdog -------------------------------------------------------- */

/* The watchdog reads these; the main thread writes them at each test start
 * (seq last, so a changed seq means the rest is the new test's). */
static _Atomic(const char *) wd_name;
static _Atomic(const char *) wd_file;
static _Atomic int wd_line;
static _Atomic double wd_bound;
static _Atomic unsigned long wd_seq;
static _Atomic bool wd_done;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void __real_tcase_fn_start(const char *fname, const char *file, int line);
void __wrap_tcase_fn_start(const char *fname, const char *file, int line)
{
    test_done();
    cur_name = fname;
    atomic_store(&wd_name, fname);
    atomic_store(&wd_file, file);
    atomic_store(&wd_line, line);
    atomic_store(&wd_bound, bound_of(fname));
    atomic_fetch_add(&wd_seq, 1);
    __real_tcase_fn_start(fname, file, line);
}

/* A test past its bound ends the run, failed: in CK_FORK=no mode there is
 * no safe way to abandon it and go on (its threads would run on into the
 * next test's state), and a hang must not hang `make test`. */
static _Noreturn void overrun(const char *name)
{
    fprintf(stderr, "unit: FAIL %s/%s (%s:%d) still running after its %g s bound "
                    "(tcase_set_timeout or CK_DEFAULT_TIMEOUT, x CK_TIMEOUT_MULTIPLIER): "
                    "hung? the run stops here\n",
            tcase_name_of(name), name, atomic_load(&wd_file), atomic_load(&wd_line),
            atomic_load(&wd_bound));
    unsigned done = atomic_load(&ndone), failed = atomic_load(&nfailed) + 1,
             skipped = atomic_load(&nskipped);
    print_skips();
    printf("unit: %s/%s hung past its %g s bound; the tests after it were not run\n",
           tcase_name_of(name), name, atomic_load(&wd_bound));
    printf("unit: %u passed, %u failed, %u skipped\n", done - (failed - 1) - skipped, failed,
           skipped);
    fflush(stdout);
    _exit(EXIT_FAILURE);
}

static void *watchdog(void *arg)
{
    (void)arg;
    unsigned long seq = 0;
    double started = now_s();
    while (!atomic_load(&wd_done)) {
        struct timespec tick = {.tv_nsec = 100 * 1000 * 1000};
        nanosleep(&tick, NULL);
        unsigned long s = atomic_load(&wd_seq);
        if (s != seq) {
            seq = s;
            started = now_s();
        } else if (s && now_s() - started >= atomic_load(&wd_bound)) {
            overrun(atomic_load(&wd_name));
        }
    }
    return NULL;
}

static int start_watchdog(pthread_t *t)
{
    /* The watchdog takes no signal meant for the process (a test waiting
     * for SIGCHLD on a signalfd must get it). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(t, NULL, watchdog, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc ? -1 : 0;
}

int main(void)
{
    Suite *(*const suites[])(void) = {
        gmem_suite,      elf_suite, smp_unlock_suite, bzimage_suite, loader_suite, memmap_suite, mptable_suite,
        cpu_entry_suite, bus_suite, serial_suite,  i8042_suite,  boot_timer_suite, options_suite,
        kernel_cmdline_suite,
        regressions_suite,
        virtq_suite,
        virtio_mmio_suite,
        disk_suite, blk_suite, blk_spare_suite, disk_control_suite,
        agent_proto_suite, agent_reseed_suite, agent_dir_suite, agent_cred_suite, agent_mount_suite,
        agent_watch_suite,
        agent_exec_proc_suite, agent_ctr_suite, agent_linux_suite, forward_suite,
        mount_options_suite, volumes_suite, create_mounts_suite,
        tar_in_suite,
        run_copy_suite, run_copy_tree_suite,
        vsock_suite,
        http_request_suite, http_server_request_suite, http_response_suite, http_chunked_suite, multipart_suite,
        scrub_suite, base64_suite, e2b_wire_suite, api_pty_suite, exec_output_suite, exec_stream_suite, watch_stream_suite, prom_text_suite, events_suite, record_keeps_suite, spawner_suite, credential_suite, credential_proxy_suite, layer_apply_suite, rootfs_disk_suite, image_source_suite,
        image_user_suite,
        dir_disk_suite,
        egress_policy_suite,
        surface_suite,
        audit_suite, egress_broker_suite, egress_relay_suite, egress_rules_suite, egress_live_suite,
        seccomp_suite,
        oci_runtime_suite, pod_suite,
        limits_suite,
        snapshot_devices_suite,
        snapshot_cpuid_suite,
        snapshot_file_suite, snapshot_memory_suite,
    };
    SRunner *sr = srunner_create(suites[0]());
    for (size_t i = 1; i < sizeof(suites) / sizeof(suites[0]); i++)
        srunner_add_suite(sr, suites[i]());
    pthread_t wd;
    if (start_watchdog(&wd)) {
        fprintf(stderr, "unit: cannot start the watchdog\n");
        return EXIT_FAILURE;
    }
    srunner_run_all(sr, CK_NORMAL);
    test_done();
    atomic_store(&wd_done, true);
    pthread_join(wd, NULL);
    /* check's figures (they count a failed fixture too); the skips are
     * ours, and a skipped test that failed counts as failed. */
    int checks = srunner_ntests_run(sr);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    print_skips();
    unsigned skipped = atomic_load(&nskipped);
    printf("unit: %d passed, %d failed, %u skipped\n", checks - failed - (int)skipped, failed,
           skipped);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
