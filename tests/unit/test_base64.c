/* vmm/util/base64.c: exact lengths around OpenSSL's block codec (its padding
 * counted as zero bytes), round trips of every length up to 300, and text
 * that is not base64. */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "vmm/util/base64.h"

START_TEST(known)
{
    char *e = base64_encode("\xff\xfeok", 4);
    ck_assert_str_eq(e, "//5vaw==");
    size_t n;
    unsigned char *d = base64_decode(e, &n);
    ck_assert_uint_eq(n, 4);
    ck_assert_mem_eq(d, "\xff\xfeok", 4);
    free(d);
    free(e);
    d = base64_decode("", &n);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(n, 0);
    free(d);
}
END_TEST

START_TEST(round_trips)
{
    unsigned char buf[300];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)(i * 151 + 7);
    for (size_t len = 0; len <= sizeof(buf); len++) {
        char *e = base64_encode(buf, len);
        ck_assert_uint_eq(strlen(e), 4 * ((len + 2) / 3));
        size_t n;
        unsigned char *d = base64_decode(e, &n);
        ck_assert_ptr_nonnull(d);
        ck_assert_uint_eq(n, len);
        ck_assert(len == 0 || memcmp(d, buf, len) == 0);
        free(d);
        free(e);
    }
}
END_TEST

START_TEST(not_base64)
{
    static const char *const bad[] = {"abc", "ab!d", "a===", "ab c", "abcd\n", "=abc"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t n;
        unsigned char *d = base64_decode(bad[i], &n);
        ck_assert_msg(d == NULL, "'%s' decoded", bad[i]);
    }
}
END_TEST

Suite *base64_suite(void)
{
    Suite *s = suite_create("base64");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, known);
    tcase_add_test(tc, round_trips);
    tcase_add_test(tc, not_base64);
    suite_add_tcase(s, tc);
    return s;
}
