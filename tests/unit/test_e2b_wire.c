/* vmm/e2b/'s pure parts, on what a client or a guest controls: Connect
 * envelopes (lengths that lie, flags, extra messages), Connect-Timeout-Ms,
 * the code table both ways, protobuf's JSON values (numbers as strings,
 * base64 in both alphabets, enums by name or number, wrong types), and
 * the guest's /etc/passwd (hostile lines, long homes, missing users). */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "vmm/e2b/connect_wire.h"
#include "vmm/e2b/e2b_fs_entry.h"
#include "vmm/e2b/e2b_user.h"
#include "vmm/e2b/proto_json.h"

START_TEST(envelopes)
{
    uint8_t buf[64] = {0, 0, 0, 0, 2, '{', '}'};
    const uint8_t *msg;
    size_t len;
    const char *why;
    ck_assert_int_eq(connect_request_envelope(buf, 7, &msg, &len, &why), 0);
    ck_assert_uint_eq(len, 2);
    ck_assert_ptr_eq(msg, buf + 5);
    /* cut short, too long (a second message), short head */
    ck_assert_int_eq(connect_request_envelope(buf, 6, &msg, &len, &why), -1);
    ck_assert_int_eq(connect_request_envelope(buf, 8, &msg, &len, &why), -1);
    ck_assert_int_eq(connect_request_envelope(buf, 4, &msg, &len, &why), -1);
    ck_assert_int_eq(connect_request_envelope(buf, 0, &msg, &len, &why), -1);
    /* a length near 2^32 must not wrap */
    uint8_t huge[5] = {0, 0xff, 0xff, 0xff, 0xff};
    ck_assert_int_eq(connect_request_envelope(huge, 5, &msg, &len, &why), -1);
    /* compressed, end-of-stream, unknown flags */
    for (uint8_t f = 1; f; f <<= 1) {
        buf[0] = f;
        ck_assert_int_eq(connect_request_envelope(buf, 7, &msg, &len, &why), -1);
    }
    buf[0] = 0;
    uint8_t head[5];
    connect_envelope_head(head, CONNECT_FLAG_END, 0x01020304);
    ck_assert_mem_eq(head, "\x02\x01\x02\x03\x04", 5);
}
END_TEST

START_TEST(codes_and_timeouts)
{
    ck_assert_int_eq(connect_code_http("not_found"), 404);
    ck_assert_int_eq(connect_code_http("unauthenticated"), 401);
    ck_assert_int_eq(connect_code_http("deadline_exceeded"), 504);
    ck_assert_int_eq(connect_code_http("bogus"), 500);
    ck_assert_str_eq(connect_code_for_http(404), "not_found");
    ck_assert_str_eq(connect_code_for_http(503), "unavailable");
    ck_assert_str_eq(connect_code_for_http(413), "resource_exhausted");
    ck_assert_str_eq(connect_code_for_http(418), "invalid_argument");
    ck_assert_str_eq(connect_code_for_http(599), "internal");
    uint64_t ms;
    ck_assert_int_eq(connect_timeout_parse("60000", &ms), 0);
    ck_assert_uint_eq(ms, 60000);
    ck_assert_int_eq(connect_timeout_parse("9999999999", &ms), 0);
    static const char *const bad[] = {"", "-1", "1.5", "12345678901", " 5", "5s", "0x10"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(connect_timeout_parse(bad[i], &ms) == -1, "'%s' taken", bad[i]);
}
END_TEST

START_TEST(proto_values)
{
    json_t *o = json_loads("{\"pid\": \"42\", \"tag\": 7, \"big\": 4294967296, \"neg\": -1,"
                           "\"snake_case\": 1, \"b\": \"aGk\", \"u\": \"-_8\", \"bad\": \"@@@@\","
                           "\"m\": {\"a\": \"b\"}, \"mbad\": {\"a\": 1}, \"n\": null}", 0, NULL);
    ck_assert_ptr_nonnull(o);
    uint32_t v;
    ck_assert_int_eq(pj_uint32(pj_field(o, "pid", NULL), 0, &v), 0);
    ck_assert_uint_eq(v, 42);
    ck_assert_int_eq(pj_uint32(pj_field(o, "big", NULL), 0, &v), -1);
    ck_assert_int_eq(pj_uint32(pj_field(o, "neg", NULL), 0, &v), -1);
    ck_assert_int_eq(pj_uint32(pj_field(o, "absent", NULL), 9, &v), 0);
    ck_assert_uint_eq(v, 9);
    ck_assert_ptr_nonnull(pj_field(o, "snakeCase", "snake_case"));
    ck_assert_ptr_null(pj_field(o, "n", NULL)); /* null is absent */
    bool bad = false;
    ck_assert_ptr_null(pj_string(pj_field(o, "tag", NULL), &bad));
    ck_assert(bad);
    size_t n;
    bad = false;
    unsigned char *b = pj_bytes(pj_field(o, "b", NULL), &n, &bad);
    ck_assert(!bad);
    ck_assert_uint_eq(n, 2);
    ck_assert_mem_eq(b, "hi", 2);
    free(b);
    b = pj_bytes(pj_field(o, "u", NULL), &n, &bad); /* URL-safe, unpadded */
    ck_assert(!bad);
    ck_assert_uint_eq(n, 2);
    ck_assert_mem_eq(b, "\xfb\xff", 2);
    free(b);
    b = pj_bytes(pj_field(o, "bad", NULL), &n, &bad);
    ck_assert(bad);
    ck_assert_ptr_null(b);
    bad = false;
    ck_assert_ptr_nonnull(pj_string_map(pj_field(o, "m", NULL), &bad));
    ck_assert(!bad);
    ck_assert_ptr_null(pj_string_map(pj_field(o, "mbad", NULL), &bad));
    ck_assert(bad);
    static const char *const names[] = {"SIGNAL_UNSPECIFIED", "SIGNAL_SIGTERM", "SIGNAL_SIGKILL"};
    static const int values[] = {0, 15, 9};
    json_t *e = json_string("SIGNAL_SIGKILL");
    int sig;
    ck_assert_int_eq(pj_enum(e, names, values, 3, &sig), 0);
    ck_assert_int_eq(sig, 9);
    json_decref(e);
    e = json_integer(15);
    ck_assert_int_eq(pj_enum(e, names, values, 3, &sig), 0);
    ck_assert_int_eq(sig, 15);
    json_decref(e);
    e = json_string("SIGHUP");
    ck_assert_int_eq(pj_enum(e, names, values, 3, &sig), -1);
    json_decref(e);
    json_t *t = pj_timestamp_new(1780000000123LL);
    ck_assert_str_eq(json_string_value(t), "2026-05-28T20:26:40.123Z");
    json_decref(t);
    json_t *i = pj_int64_new(-5);
    ck_assert_str_eq(json_string_value(i), "-5");
    json_decref(i);
    json_decref(o);
}
END_TEST

START_TEST(passwd)
{
    static const char pw[] =
        "root:x:0:0:root:/root:/bin/bash\n"
        "garbage line without colons\n"
        "long:x:7:7::/" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaa:/bin/sh\n"
        "rel:x:8:8::home:/bin/sh\n"
        "user:x:1000:1000::/home/user:/bin/bash\n";
    struct e2b_user u;
    ck_assert_int_eq(e2b_passwd_find(pw, sizeof(pw) - 1, "user", 0, &u), 0);
    ck_assert_uint_eq(u.uid, 1000);
    ck_assert_str_eq(u.home, "/home/user");
    ck_assert_int_eq(e2b_passwd_find(pw, sizeof(pw) - 1, NULL, 0, &u), 0);
    ck_assert_str_eq(u.name, "root");
    ck_assert_int_eq(e2b_passwd_find(pw, sizeof(pw) - 1, "long", 0, &u), -1); /* home too long */
    ck_assert_int_eq(e2b_passwd_find(pw, sizeof(pw) - 1, "rel", 0, &u), -1);  /* home not absolute */
    ck_assert_int_eq(e2b_passwd_find(pw, sizeof(pw) - 1, "nobody", 0, &u), -1);
    ck_assert_int_eq(e2b_passwd_find("", 0, "root", 0, &u), -1);
    char out[64];
    ck_assert_int_eq(e2b_user_path(&(struct e2b_user){.home = "/home/user"}, "a/b", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/home/user/a/b");
    ck_assert_int_eq(e2b_user_path(&(struct e2b_user){.home = "/"}, "a", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/a");
    ck_assert_int_eq(e2b_user_path(&(struct e2b_user){.home = "/root"}, "/etc", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/etc");
    ck_assert_int_eq(e2b_user_path(&(struct e2b_user){.home = "/root"}, "", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/root/");
    ck_assert_int_eq(e2b_user_path(&(struct e2b_user){.home = "/root"},
                                   "0123456789012345678901234567890123456789012345678901234567890",
                                   out, sizeof(out)), -1);
}
END_TEST

START_TEST(paths_and_modes)
{
    static const struct { const char *in, *out; } ok[] = {
        {"/", "/"}, {"//a//b/", "/a/b"}, {"/a/./b/.", "/a/b"}, {"/a/../b", "/b"},
        {"/../../x", "/x"}, {"/a/b/../../..", "/"}, {"/..a/b..", "/..a/b.."},
    };
    char out[64];
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        ck_assert_int_eq(e2b_clean_path(ok[i].in, out, sizeof(out)), 0);
        ck_assert_str_eq(out, ok[i].out);
    }
    ck_assert_int_eq(e2b_clean_path("rel/x", out, sizeof(out)), -1);
    ck_assert_int_eq(e2b_clean_path("", out, sizeof(out)), -1);
    ck_assert_int_eq(e2b_clean_path("/aaaaaaaaaa/bbbbbbbbbb", out, 8), -1);
    char perm[16];
    e2b_permissions(AGENT_ENTRY_FILE, 0644, perm);
    ck_assert_str_eq(perm, "-rw-r--r--");
    e2b_permissions(AGENT_ENTRY_DIR, 0755, perm);
    ck_assert_str_eq(perm, "drwxr-xr-x");
    e2b_permissions(AGENT_ENTRY_SYMLINK, 0777, perm);
    ck_assert_str_eq(perm, "Lrwxrwxrwx");
    e2b_permissions(AGENT_ENTRY_DIR, 01777, perm);
    ck_assert_str_eq(perm, "dtrwxrwxrwx");
    e2b_permissions(AGENT_ENTRY_FILE, 04755, perm);
    ck_assert_str_eq(perm, "urwxr-xr-x");
}
END_TEST

Suite *e2b_wire_suite(void)
{
    Suite *s = suite_create("e2b_wire");
    TCase *tc = tcase_create("wire");
    tcase_add_test(tc, envelopes);
    tcase_add_test(tc, codes_and_timeouts);
    tcase_add_test(tc, proto_values);
    tcase_add_test(tc, passwd);
    tcase_add_test(tc, paths_and_modes);
    suite_add_tcase(s, tc);
    return s;
}
