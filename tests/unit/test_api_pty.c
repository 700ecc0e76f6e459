/* vmm/sandbox/api_pty.c: a command's "pty" and a resize body, {"cols",
 * "rows"}, against hostile input: every wrong type, 0 and one past 65535,
 * numbers that wrap to a good size in 16 or 32 bits, reals, unknown and
 * huge or multibyte member names; each refused naming the member, and a
 * 400 answer that says so (valid JSON, whatever the name held). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/sandbox/api_pty.h"

static int parse(const char *text, const char *name, struct pty_size *out, char *field,
                 char *why)
{
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
    ck_assert_msg(v != NULL, "%s: %s", text, e.text);
    int rc = pty_size_parse(v, name, out, field, 96, why, 192);
    json_decref(v);
    return rc;
}

START_TEST(good_sizes)
{
    static const struct {
        const char *text;
        uint16_t cols, rows;
    } good[] = {
        {"{\"cols\": 80, \"rows\": 24}", 80, 24},
        {"{\"rows\": 24, \"cols\": 80}", 80, 24},
        {"{\"cols\": 1, \"rows\": 1}", 1, 1},
        {"{\"cols\": 65535, \"rows\": 65535}", 65535, 65535},
        {"{\"cols\": 100, \"rows\": 30}", 100, 30},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        for (int named = 0; named < 2; named++) {
            struct pty_size sz = {0, 0};
            char field[96] = "", why[192] = "";
            ck_assert_msg(parse(good[i].text, named ? "pty" : "", &sz, field, why) == 0,
                          "%s refused: %s", good[i].text, why);
            ck_assert_uint_eq(sz.cols, good[i].cols);
            ck_assert_uint_eq(sz.rows, good[i].rows);
        }
}
END_TEST

START_TEST(hostile_sizes)
{
    static const struct {
        const char *text, *field; /* the member blamed, under the name "pty" */
    } bad[] = {
        {"null", "pty"},
        {"true", "pty"},
        {"80", "pty"},
        {"\"80x24\"", "pty"},
        {"[80, 24]", "pty"},
        {"{}", "pty.cols"},
        {"{\"cols\": 80}", "pty.rows"},
        {"{\"rows\": 24}", "pty.cols"},
        {"{\"cols\": 0, \"rows\": 24}", "pty.cols"},
        {"{\"cols\": 80, \"rows\": 0}", "pty.rows"},
        {"{\"cols\": 65536, \"rows\": 24}", "pty.cols"},
        {"{\"cols\": 80, \"rows\": 65536}", "pty.rows"},
        {"{\"cols\": 65616, \"rows\": 24}", "pty.cols"},      /* 80 + 2^16 */
        {"{\"cols\": 4294967376, \"rows\": 24}", "pty.cols"}, /* 80 + 2^32 */
        {"{\"cols\": 9223372036854775807, \"rows\": 24}", "pty.cols"},
        {"{\"cols\": -9223372036854775808, \"rows\": 24}", "pty.cols"},
        {"{\"cols\": -1, \"rows\": 24}", "pty.cols"},
        {"{\"cols\": -65456, \"rows\": 24}", "pty.cols"}, /* 80 - 2^16 */
        {"{\"cols\": 80.0, \"rows\": 24}", "pty.cols"},
        {"{\"cols\": 8e1, \"rows\": 24}", "pty.cols"},
        {"{\"cols\": 80, \"rows\": 24.5}", "pty.rows"},
        {"{\"cols\": \"80\", \"rows\": 24}", "pty.cols"},
        {"{\"cols\": null, \"rows\": 24}", "pty.cols"},
        {"{\"cols\": true, \"rows\": 24}", "pty.cols"},
        {"{\"cols\": [80], \"rows\": 24}", "pty.cols"},
        {"{\"cols\": {\"cols\": 80}, \"rows\": 24}", "pty.cols"},
        {"{\"cols\": 80, \"rows\": 24, \"x\": 1}", "pty.x"},
        {"{\"Cols\": 80, \"rows\": 24}", "pty.Cols"},
        {"{\"cols\": 80, \"rows\": 24, \"\": 1}", "pty."},
        {"{\"cols\": 80, \"rows\": 24, \"a\\\"b\\n\\u0001\": 1}", "pty.a\"b\n\x01"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct pty_size sz;
        char field[96] = "", why[192] = "";
        ck_assert_msg(parse(bad[i].text, "pty", &sz, field, why) == -EINVAL, "%s taken",
                      bad[i].text);
        ck_assert_msg(!strcmp(field, bad[i].field), "%s: blamed '%s', want '%s'", bad[i].text,
                      field, bad[i].field);
        ck_assert_msg(strstr(why, bad[i].field) != NULL, "%s: '%s' does not name it",
                      bad[i].text, why);
        /* A resize body is the size itself: the same member, bare. */
        const char *bare = strchr(bad[i].field, '.');
        if (bare) {
            ck_assert_int_eq(parse(bad[i].text, "", &sz, field, why), -EINVAL);
            ck_assert_str_eq(field, bare + 1);
        }
    }
}
END_TEST

/* Numbers jansson cannot hold are refused while the body is parsed (400,
 * "not JSON"): they never reach the size as a wrapped value. */
START_TEST(numbers_past_jansson)
{
    json_error_t e;
    ck_assert_ptr_null(json_loads("{\"cols\": 18446744073709551696, \"rows\": 24}", 0, &e));
    ck_assert_ptr_null(json_loads("{\"cols\": 1e400, \"rows\": 24}", 0, &e));
}
END_TEST

/* A long member name is cut to 64 bytes, never inside a UTF-8 sequence. */
START_TEST(long_names)
{
    char text[4200], field[96], why[192];
    struct pty_size sz;
    snprintf(text, sizeof(text), "{\"cols\": 80, \"rows\": 24, \"%04000d\": 1}", 7);
    ck_assert_int_eq(parse(text, "pty", &sz, field, why), -EINVAL);
    ck_assert_uint_eq(strlen(field), 4 + 64);
    /* 63 ASCII bytes, then a 2-byte character across the cut at 64. */
    char name[80];
    memset(name, 'k', 63);
    memcpy(name + 63, "\xc3\xa9\xc3\xa9", 5);
    snprintf(text, sizeof(text), "{\"cols\": 80, \"rows\": 24, \"%s\": 1}", name);
    ck_assert_int_eq(parse(text, "pty", &sz, field, why), -EINVAL);
    ck_assert_uint_eq(strlen(field), 4 + 63);
    json_t *ok = json_string(field); /* whole characters: a JSON string takes it */
    ck_assert_ptr_nonnull(ok);
    json_decref(ok);
}
END_TEST

/* get_pty through a real answer: 400 with the member as "field", once,
 * and absent means no terminal. */
START_TEST(answers)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct api_conn *c = calloc(1, sizeof(*c));
    ck_assert_ptr_nonnull(c);
    c->fd = sv[0];
    json_t *o = json_loads("{\"argv\": [\"tty\"], \"pty\": {\"cols\": 80, \"rows\": 70000}}", 0,
                           NULL);
    struct fields f = {c, o, false};
    struct pty_size sz;
    ck_assert_int_eq(get_pty(&f, "pty", &sz), 0);
    ck_assert(f.failed);
    ck_assert_int_eq(get_pty(&f, "pty", &sz), 0); /* failed already: no second answer */
    close(sv[0]);
    char buf[4096];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof(buf) - 1 && (r = read(sv[1], buf + n, sizeof(buf) - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = '\0';
    ck_assert_msg(!strncmp(buf, "HTTP/1.1 400 ", 13), "%s", buf);
    const char *body = strstr(buf, "\r\n\r\n");
    ck_assert_ptr_nonnull(body);
    json_t *ans = json_loads(body + 4, 0, NULL);
    ck_assert_ptr_nonnull(ans);
    ck_assert_str_eq(json_string_value(json_object_get(ans, "field")), "pty.rows");
    ck_assert_ptr_null(strstr(body + 4 + 1, "HTTP/1.1")); /* one answer */
    json_decref(ans);
    json_decref(o);
    o = json_loads("{\"argv\": [\"tty\"]}", 0, NULL);
    f = (struct fields){c, o, false};
    ck_assert_int_eq(get_pty(&f, "pty", &sz), 0);
    ck_assert(!f.failed);
    json_decref(o);
    close(sv[1]);
    free(c);
}
END_TEST

Suite *api_pty_suite(void)
{
    Suite *s = suite_create("api_pty");
    TCase *tc = tcase_create("size");
    tcase_add_test(tc, good_sizes);
    tcase_add_test(tc, hostile_sizes);
    tcase_add_test(tc, numbers_past_jansson);
    tcase_add_test(tc, long_names);
    tcase_add_test(tc, answers);
    suite_add_tcase(s, tc);
    return s;
}
