/* vmm/http/multipart: the boundary, well-formed bodies as fetch's
 * FormData sends them, and hostile ones, each refused with a reason. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "vmm/http/multipart.h"

static struct multipart_part part;

START_TEST(boundary_forms)
{
    char b[MULTIPART_BOUNDARY_MAX + 1];
    ck_assert_int_eq(multipart_boundary("multipart/form-data; boundary=abc", b), 0);
    ck_assert_str_eq(b, "abc");
    ck_assert_int_eq(multipart_boundary("Multipart/Form-Data;boundary=\"x'y(z)\"", b), 0);
    ck_assert_str_eq(b, "x'y(z)");
    ck_assert_int_eq(multipart_boundary("multipart/form-data; charset=x; boundary=q1", b), 0);
    ck_assert_str_eq(b, "q1");
    ck_assert_int_eq(multipart_boundary("multipart/mixed; boundary=abc", b), -1);
    ck_assert_int_eq(multipart_boundary("multipart/form-data", b), -1);
    ck_assert_int_eq(multipart_boundary("multipart/form-data; boundary=", b), -1);
    ck_assert_int_eq(multipart_boundary("multipart/form-data; boundary=a; boundary=b", b), -1);
    ck_assert_int_eq(multipart_boundary("multipart/form-data; boundary=\"a\"b", b), -1);
    ck_assert_int_eq(multipart_boundary("multipart/form-data; boundary=\"a\rb\"", b), -1);
    ck_assert_int_eq(multipart_boundary("multipart/form-data; boundary=\"a{b\"", b), -1);
    char lng[200];
    snprintf(lng, sizeof(lng), "multipart/form-data; boundary=%071d", 0);
    ck_assert_int_eq(multipart_boundary(lng, b), -1);
    snprintf(lng, sizeof(lng), "multipart/form-data; boundary=%070d", 0);
    ck_assert_int_eq(multipart_boundary(lng, b), 0);
}
END_TEST

static int parse(const char *body, size_t n, int want_parts)
{
    struct multipart m;
    multipart_init(&m, "B", body, n);
    int rc, parts = 0;
    while ((rc = multipart_next(&m, &part)) == 1)
        parts++;
    if (rc == 0)
        ck_assert_int_eq(parts, want_parts);
    return rc;
}
#define P(s, want) parse(s, sizeof(s) - 1, want)

START_TEST(good_bodies)
{
    static const char two[] =
        "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a/b.txt\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\nhel\r\nlo\r\n"
        "--B\r\nContent-Disposition: form-data; name=file; filename=\"/c d\"\r\n\r\n"
        "\r\n--B--\r\nepilogue --B junk";
    struct multipart m;
    multipart_init(&m, "B", two, sizeof(two) - 1);
    ck_assert_int_eq(multipart_next(&m, &part), 1);
    ck_assert_str_eq(part.name, "file");
    ck_assert(part.has_filename);
    ck_assert_str_eq(part.filename, "a/b.txt");
    ck_assert_uint_eq(part.len, 7);
    ck_assert(!memcmp(part.data, "hel\r\nlo", 7));
    ck_assert_int_eq(multipart_next(&m, &part), 1);
    ck_assert_str_eq(part.filename, "/c d");
    ck_assert_uint_eq(part.len, 0);
    ck_assert_int_eq(multipart_next(&m, &part), 0);
    ck_assert_int_eq(multipart_next(&m, &part), 0);
    ck_assert_int_eq(P("--B--", 0), 0);
    ck_assert_int_eq(P("--B\r\ncontent-disposition:form-data;name=x\r\n\r\n\r\n--B--", 1), 0);
    /* binary data with NULs and near-boundaries */
    static const char bin[] = "--B\r\nContent-Disposition: form-data; name=f\r\n\r\n"
                              "\0\r\n-\r\n--C\r\n--\0B\r\n--B--";
    ck_assert_int_eq(parse(bin, sizeof(bin) - 1, 1), 0);
}
END_TEST

START_TEST(hostile_bodies)
{
    ck_assert_int_eq(P("", 0), -1);
    ck_assert_int_eq(P("preamble\r\n--B--", 0), -1);
    ck_assert_int_eq(P("--B", 0), -1);
    ck_assert_int_eq(P("--Bx\r\n", 0), -1);
    ck_assert_int_eq(P("--B\n", 0), -1);
    /* no head end, no data end, no disposition, two of them */
    ck_assert_int_eq(P("--B\r\nContent-Disposition: form-data; name=x\r\n", 0), -1);
    ck_assert_int_eq(P("--B\r\nContent-Disposition: form-data; name=x\r\n\r\ndata", 0), -1);
    ck_assert_int_eq(P("--B\r\nX: y\r\n\r\nd\r\n--B--", 0), -1);
    ck_assert_int_eq(P("--B\r\nContent-Disposition: form-data; name=x\r\n"
                       "Content-Disposition: form-data; name=y\r\n\r\nd\r\n--B--", 0), -1);
    ck_assert_int_eq(P("--B\r\nContent-Disposition: attachment; name=x\r\n\r\nd\r\n--B--", 0), -1);
    ck_assert_int_eq(P("--B\r\nContent-Disposition: form-datax; name=x\r\n\r\nd\r\n--B--", 0), -1);
    ck_assert_int_eq(P("--B\r\nContent-Disposition: form-data; filename=x\r\n\r\nd\r\n--B--", 0), -1);
    ck_assert_int_eq(P("--B\r\nContent-Disposition: form-data; name=x; name=y\r\n\r\nd\r\n--B--", 0), -1);
    ck_assert_int_eq(P("--B\r\nContent-Disposition: form-data; name=x; filename*=UTF-8''a\r\n\r\nd\r\n--B--", 0), -1);
    ck_assert_int_eq(P("--B\r\nContent-Disposition: form-data; name=\"x\r\n\r\nd\r\n--B--", 0), -1);
    ck_assert_int_eq(P("--B\r\nContent-Disposition: form-data; name=\"x\r\ny\"\r\n\r\nd\r\n--B--", 0), -1);
    ck_assert_int_eq(P("--B\r\n Folded: x\r\nContent-Disposition: form-data; name=x\r\n\r\nd\r\n--B--", 0), -1);
    ck_assert_int_eq(P("--B\r\nContent-Disposition: form-data; name=x\r\nX: a\x01\r\n\r\nd\r\n--B--", 0), -1);
    /* a boundary line that ends in neither CRLF nor -- */
    ck_assert_int_eq(P("--B\r\nContent-Disposition: form-data; name=x\r\n\r\nd\r\n--Bz", 0), -1);
    ck_assert_int_eq(P("--B\r\nContent-Disposition: form-data; name=x\r\n\r\nd\r\n--B", 0), -1);
    /* a head past 8 KiB */
    static char big[MULTIPART_HEAD_MAX + 200];
    int n = snprintf(big, sizeof(big), "--B\r\nContent-Disposition: form-data; name=x\r\nX: ");
    memset(big + n, 'a', MULTIPART_HEAD_MAX);
    memcpy(big + n + MULTIPART_HEAD_MAX, "\r\n\r\nd\r\n--B--", 12);
    ck_assert_int_eq(parse(big, (size_t)n + MULTIPART_HEAD_MAX + 12, 0), -1);
    ck_assert_ptr_nonnull(part.why);
    /* a name past MULTIPART_NAME_MAX */
    static char lname[MULTIPART_NAME_MAX + 200];
    n = snprintf(lname, sizeof(lname), "--B\r\nContent-Disposition: form-data; name=x; filename=\"");
    memset(lname + n, 'a', MULTIPART_NAME_MAX + 1);
    memcpy(lname + n + MULTIPART_NAME_MAX + 1, "\"\r\n\r\nd\r\n--B--", 14);
    ck_assert_int_eq(parse(lname, (size_t)n + MULTIPART_NAME_MAX + 15, 0), -1);
    /* once broken, always broken */
    struct multipart m;
    multipart_init(&m, "B", "--x", 3);
    ck_assert_int_eq(multipart_next(&m, &part), -1);
    ck_assert_int_eq(multipart_next(&m, &part), -1);
    multipart_init(&m, "", "--", 2);
    ck_assert_int_eq(multipart_next(&m, &part), -1);
}
END_TEST

START_TEST(part_count)
{
    static const char one[] = "--B\r\nContent-Disposition: form-data; name=x\r\n\r\nd\r\n";
    size_t n1 = sizeof(one) - 1, total = n1 * (MULTIPART_PARTS_MAX + 1) + 5;
    char *body = malloc(total);
    for (int i = 0; i <= MULTIPART_PARTS_MAX; i++)
        memcpy(body + n1 * (size_t)i, one, n1);
    memcpy(body + n1 * (MULTIPART_PARTS_MAX + 1) - 2, "\r\n--B--", 7);
    ck_assert_int_eq(parse(body, total, 0), -1);
    ck_assert_int_eq(parse(body + n1, total - n1, MULTIPART_PARTS_MAX), 0);
    free(body);
}
END_TEST

Suite *multipart_suite(void)
{
    Suite *s = suite_create("multipart");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, boundary_forms);
    tcase_add_test(tc, good_bodies);
    tcase_add_test(tc, hostile_bodies);
    tcase_add_test(tc, part_count);
    suite_add_tcase(s, tc);
    return s;
}
