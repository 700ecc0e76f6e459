/* vmm/sandbox/exec_output.c: a command's output cut into chunks only where
 * UTF-8 allows (a multi-byte character split by a read is held for the
 * next one), lines as text or base64, and the exit record's fields. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/sandbox/exec_output.h"
#include "vmm/util/exit_codes.h"

struct seen {
    char buf[256];
    size_t len;
    unsigned chunks;
};

static void collect(void *ctx, const struct exec_output *o, const char *p, size_t len)
{
    struct seen *s = ctx;
    (void)o;
    ck_assert_uint_ge(len, 1);
    ck_assert_uint_le(s->len + len, sizeof(s->buf));
    memcpy(s->buf + s->len, p, len);
    s->len += len;
    s->chunks++;
}

/* Each write is one read on the far end (a pipe, writes far below its
 * size), so a write that ends inside a character cuts it. */
START_TEST(split_character_held)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    struct exec_output o = {.fd = p[0], .type = "stdout"};
    struct seen s = {0};
    ck_assert_int_eq(write(p[1], "h\xc3", 2), 2); /* é cut after its lead byte */
    ck_assert(exec_output_pump(&o, collect, &s));
    ck_assert_uint_eq(s.len, 1);
    ck_assert_uint_eq(o.held, 1);
    ck_assert_int_eq(write(p[1], "\xa9t\xe2\x82", 4), 4); /* é's end, t, € cut after 2 */
    ck_assert(exec_output_pump(&o, collect, &s));
    ck_assert_uint_eq(s.len, 4);
    ck_assert_int_eq(memcmp(s.buf, "h\xc3\xa9t", 4), 0);
    ck_assert_uint_eq(o.held, 2);
    close(p[1]);
    /* EOF: the cut sequence goes out as it is, and the fd is closed. */
    ck_assert(!exec_output_pump(&o, collect, &s));
    ck_assert_int_eq(o.fd, -1);
    ck_assert_uint_eq(s.len, 6);
    ck_assert_uint_eq(s.chunks, 3);
}
END_TEST

/* Bytes that are not UTF-8 are not held back forever: a chunk ending in a
 * continuation byte whose lead is four back is whole. */
START_TEST(binary_passes)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    struct exec_output o = {.fd = p[0], .type = "stderr"};
    struct seen s = {0};
    ck_assert_int_eq(write(p[1], "\xff\xfe\x80\x80\x80\x80", 6), 6);
    ck_assert(exec_output_pump(&o, collect, &s));
    ck_assert_uint_eq(s.len, 6);
    ck_assert_uint_eq(o.held, 0);
    close(p[1]);
    ck_assert(!exec_output_pump(&o, collect, &s));
}
END_TEST

START_TEST(lines_text_or_base64)
{
    json_t *l = exec_output_line("stdout", "caf\xc3\xa9", 5);
    ck_assert_str_eq(json_string_value(json_object_get(l, "data")), "caf\xc3\xa9");
    ck_assert_ptr_null(json_object_get(l, "data_b64"));
    json_decref(l);
    l = exec_output_line("stderr", "\xff\x00x", 3);
    ck_assert_str_eq(json_string_value(json_object_get(l, "type")), "stderr");
    ck_assert_ptr_null(json_object_get(l, "data"));
    ck_assert_str_eq(json_string_value(json_object_get(l, "data_b64")), "/wB4");
    json_decref(l);
}
END_TEST

START_TEST(exit_records)
{
    struct agent_exec_result r = {.started = 1, .signaled = 1, .value = 15};
    json_t *e = exec_exit_record(0, &r, 7);
    ck_assert_int_eq(json_integer_value(json_object_get(e, "exit_code")), 128 + 15);
    ck_assert_int_eq(json_integer_value(json_object_get(e, "signal")), 15);
    ck_assert(json_is_null(json_object_get(e, "error")));
    ck_assert_int_eq(json_integer_value(json_object_get(e, "duration_ms")), 7);
    json_decref(e);
    e = exec_exit_record(-ECONNRESET, &(struct agent_exec_result){0}, 0);
    ck_assert_int_eq(json_integer_value(json_object_get(e, "exit_code")), EXIT_AIRLOCK_ERROR);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(e, "error")),
                                 "lost the guest agent"));
    json_decref(e);
}
END_TEST

Suite *exec_output_suite(void)
{
    Suite *s = suite_create("exec_output");
    TCase *tc = tcase_create("chunks");
    tcase_add_test(tc, split_character_held);
    tcase_add_test(tc, binary_passes);
    tcase_add_test(tc, lines_text_or_base64);
    tcase_add_test(tc, exit_records);
    suite_add_tcase(s, tc);
    return s;
}
