/* vmm/sandbox/prom_text.c: Prometheus's text format as its parsers read
 * it: HELP and TYPE lines, label values escaped (backslash, quote,
 * newline) and HELP text (backslash, newline), whole numbers without a
 * fraction, histogram buckets cumulative up to +Inf (= _count) with _sum;
 * a value on a bound falls in that bound's bucket (le). */
#include <stdio.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "vmm/sandbox/prom_text.h"

START_TEST(family_and_samples)
{
    struct prom_buf b = {0};
    prom_family(&b, "airlock_x_total", "counter", "Things \\ counted\nacross lines.");
    prom_sample(&b, "airlock_x_total", NULL, 42);
    prom_sample(&b, "airlock_x_total", (const char *const[]){"how", "cold", "image", "p", NULL}, 0.25);
    prom_sample(&b, "airlock_x_total", (const char *const[]){NULL}, 1e20);
    ck_assert(!b.failed);
    ck_assert_str_eq(b.p, "# HELP airlock_x_total Things \\\\ counted\\nacross lines.\n"
                          "# TYPE airlock_x_total counter\n"
                          "airlock_x_total 42\n"
                          "airlock_x_total{how=\"cold\",image=\"p\"} 0.25\n"
                          "airlock_x_total 1e+20\n");
    prom_buf_free(&b);
}
END_TEST

START_TEST(label_values_escaped)
{
    struct prom_buf b = {0};
    prom_sample(&b, "m", (const char *const[]){"image", "a\\b\"c\nd", NULL}, 1);
    ck_assert_str_eq(b.p, "m{image=\"a\\\\b\\\"c\\nd\"} 1\n");
    prom_buf_free(&b);
    prom_sample(&b, "m", (const char *const[]){"image", "", NULL}, -3);
    ck_assert_str_eq(b.p, "m{image=\"\"} -3\n");
    prom_buf_free(&b);
}
END_TEST

START_TEST(special_values)
{
    struct prom_buf b = {0};
    prom_sample(&b, "m", NULL, 1.0 / 0.0);
    prom_sample(&b, "m", NULL, -1.0 / 0.0);
    prom_sample(&b, "m", NULL, 0.0 / 0.0);
    ck_assert_str_eq(b.p, "m +Inf\nm -Inf\nm NaN\n");
    prom_buf_free(&b);
}
END_TEST

START_TEST(histogram_cumulative)
{
    static const double bounds[] = {0.1, 1, 10};
    uint64_t counts[4] = {0};
    struct prom_histogram h = {.bounds = bounds, .n = 3, .counts = counts};
    const double seen[] = {0.05, 0.1, 0.5, 5, 50, 0.5};
    for (size_t i = 0; i < sizeof(seen) / sizeof(seen[0]); i++)
        prom_histogram_observe(&h, seen[i]);
    ck_assert_uint_eq(h.count, 6);
    ck_assert_uint_eq(counts[0], 2); /* 0.1 is in le="0.1" */
    ck_assert_uint_eq(counts[3], 1); /* 50: above every bound */
    struct prom_buf b = {0};
    prom_histogram_write(&b, "airlock_create_seconds", "How long.", &h);
    ck_assert_str_eq(b.p, "# HELP airlock_create_seconds How long.\n"
                          "# TYPE airlock_create_seconds histogram\n"
                          "airlock_create_seconds_bucket{le=\"0.1\"} 2\n"
                          "airlock_create_seconds_bucket{le=\"1\"} 4\n"
                          "airlock_create_seconds_bucket{le=\"10\"} 5\n"
                          "airlock_create_seconds_bucket{le=\"+Inf\"} 6\n"
                          "airlock_create_seconds_sum 56.15\n"
                          "airlock_create_seconds_count 6\n");
    prom_buf_free(&b);
}
END_TEST

START_TEST(histogram_empty)
{
    static const double bounds[] = {0.05};
    uint64_t counts[2] = {0};
    struct prom_histogram h = {.bounds = bounds, .n = 1, .counts = counts};
    struct prom_buf b = {0};
    prom_histogram_write(&b, "h", "H.", &h);
    ck_assert_ptr_nonnull(strstr(b.p, "h_bucket{le=\"0.05\"} 0\nh_bucket{le=\"+Inf\"} 0\n"
                                      "h_sum 0\nh_count 0\n"));
    prom_buf_free(&b);
}
END_TEST

START_TEST(grows)
{
    struct prom_buf b = {0};
    char name[64];
    for (int i = 0; i < 2000; i++) {
        snprintf(name, sizeof(name), "airlock_metric_%d", i);
        prom_sample(&b, name, NULL, i);
    }
    ck_assert(!b.failed);
    ck_assert_ptr_nonnull(strstr(b.p, "airlock_metric_0 0\n"));
    ck_assert_ptr_nonnull(strstr(b.p, "\nairlock_metric_1999 1999\n"));
    ck_assert_uint_eq(b.len, strlen(b.p));
    prom_buf_free(&b);
}
END_TEST

Suite *prom_text_suite(void)
{
    Suite *s = suite_create("prom_text");
    TCase *tc = tcase_create("prom_text");
    tcase_add_test(tc, family_and_samples);
    tcase_add_test(tc, label_values_escaped);
    tcase_add_test(tc, special_values);
    tcase_add_test(tc, histogram_cumulative);
    tcase_add_test(tc, histogram_empty);
    tcase_add_test(tc, grows);
    suite_add_tcase(s, tc);
    return s;
}
