/* vmm/http/http_request.c's server side (http_request_parse_server): the
 * sandbox API's request heads as curl and python send them, the fields it
 * keeps, incremental feeding, and hostile heads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "vmm/http/http_query.h"
#include "vmm/http/http_request.h"

static struct http_server_request req;

/* An exact-size heap copy, so ASan catches a read past the end. */
static int parse_n(const char *s, size_t n)
{
    char *copy = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, s, n);
    int rc = http_request_parse_server(copy, n, &req);
    free(copy);
    return rc;
}

static int parse(const char *s)
{
    return parse_n(s, strlen(s));
}

START_TEST(curl_post)
{
    static const char h[] = "POST /v1/sandboxes HTTP/1.1\r\nHost: airlock\r\n"
                            "User-Agent: curl/7.88.1\r\nAccept: */*\r\n"
                            "Content-Type: application/json\r\nContent-Length: 17\r\n\r\n"
                            "{\"image\":\"small\"}";
    ck_assert_int_eq(parse(h), 1);
    ck_assert_str_eq(req.method, "POST");
    ck_assert_str_eq(req.target, "/v1/sandboxes");
    ck_assert_uint_eq(req.body_len, 17);
    ck_assert_uint_eq(req.head_len, strlen(h) - 17);
    ck_assert(req.keep_alive);
    ck_assert_str_eq(req.authorization, "");
}
END_TEST

START_TEST(fields_kept)
{
    ck_assert_int_eq(parse("GET /v1/sandboxes?x=1 HTTP/1.1\r\nHost: %2Frun%2Fa.sock\r\n"
                           "Authorization: Bearer abc.def\r\nConnection: close\r\n\r\n"),
                     1);
    ck_assert_str_eq(req.target, "/v1/sandboxes?x=1");
    ck_assert_str_eq(req.authorization, "Bearer abc.def");
    ck_assert(!req.keep_alive);
    ck_assert_uint_eq(req.body_len, 0);
    /* HTTP/1.0 keeps the connection only when asked */
    ck_assert_int_eq(parse("GET / HTTP/1.0\r\n\r\n"), 1);
    ck_assert(!req.keep_alive);
    ck_assert_int_eq(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"), 1);
    ck_assert(req.keep_alive);
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n"), 1);
    ck_assert(!req.keep_alive);
    ck_assert(!req.chunked);
    /* a chunked body: the API decodes it (fetch's streamed bodies); a
     * caller that does not (the credential relay) gets 411 */
    static const char ch[] = "POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n";
    ck_assert_int_eq(http_request_parse_server_ex(ch, sizeof(ch) - 1, &req, HTTP_SERVER_CHUNKED), 1);
    ck_assert(req.chunked);
    ck_assert_int_eq(parse(ch), -411);
    static const char *const not_alone[] = {
        "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(not_alone) / sizeof(not_alone[0]); i++)
        ck_assert_int_eq(http_request_parse_server_ex(not_alone[i], strlen(not_alone[i]), &req,
                                                      HTTP_SERVER_CHUNKED), -400);
    ck_assert_uint_eq(req.body_len, 0);
    /* the header lookup */
    static const char head[] = "GET / HTTP/1.1\r\nX-A:  one \r\nx-b: 2\r\nX-B: 3\r\n\r\n";
    char v[8];
    ck_assert_int_eq(http_header_value(head, sizeof(head) - 1, "x-a", v, sizeof(v)), 1);
    ck_assert_str_eq(v, "one");
    ck_assert_int_eq(http_header_value(head, sizeof(head) - 1, "X-B", v, sizeof(v)), -1);
    ck_assert_int_eq(http_header_value(head, sizeof(head) - 1, "X-C", v, sizeof(v)), 0);
    ck_assert_int_eq(http_header_value(head, sizeof(head) - 1, "X-A", v, 3), -1);
}
END_TEST

START_TEST(incremental)
{
    static const char h[] = "DELETE /v1/sandboxes/0123456789abcdef HTTP/1.1\r\nHost: x\r\n\r\n";
    for (size_t n = 0; n < strlen(h); n++)
        ck_assert_int_eq(parse_n(h, n), 0);
    ck_assert_int_eq(parse(h), 1);
    ck_assert_str_eq(req.method, "DELETE");
}
END_TEST

static const struct {
    const char *head;
    int rc;
} bad[] = {
    {"GET http://x/v1 HTTP/1.1\r\n\r\n", -400},          /* absolute-form */
    {"CONNECT x:1 HTTP/1.1\r\n\r\n", -400},              /* authority-form */
    {"GET * HTTP/1.1\r\n\r\n", -400},                    /* asterisk-form */
    {"GET /a#frag HTTP/1.1\r\n\r\n", -400},
    {"GET /  HTTP/1.1\r\n\r\n", -400},                   /* two spaces */
    {"GET / HTTP/1.1\nHost: x\r\n\r\n", -400},            /* bare LF */
    {"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", -400},
    {"GET / HTTP/1.1\r\nAuthorization: a\r\nAuthorization: b\r\n\r\n", -400},
    {"GET / HTTP/1.1\r\n folded\r\n\r\n", -400},
    {"GET / HTTP/1.1\r\nX : y\r\n\r\n", -400},
    {"POST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n", -400},
    {"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", -400},
    {"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", -400},
    {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", -411},
    {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", -400},
    {"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", -400},
    {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", -400},
    {"GET / HTTP/2.0\r\n\r\n", -505},
    {"GET / HTTP/1.1\r\nX: a\x01z\r\n\r\n", -400},
    {"G\x80T / HTTP/1.1\r\n\r\n", -400},
};

START_TEST(hostile)
{
    ck_assert_msg(parse(bad[_i].head) == bad[_i].rc, "head %d: got %d, want %d", _i,
                  parse(bad[_i].head), bad[_i].rc);
    ck_assert_str_eq(req.method, ""); /* nothing half-filled is left */
}
END_TEST

START_TEST(limits)
{
    char *h = malloc(HTTP_HEAD_MAX + 64);
    ck_assert_ptr_nonnull(h);
    /* a target one past the limit */
    int n = snprintf(h, HTTP_HEAD_MAX + 64, "GET /");
    memset(h + n, 'a', HTTP_TARGET_MAX);
    n += HTTP_TARGET_MAX;
    n += snprintf(h + n, 64, " HTTP/1.1\r\n\r\n");
    ck_assert_int_eq(parse_n(h, (size_t)n), -414);
    /* an Authorization one past its limit */
    n = snprintf(h, HTTP_HEAD_MAX + 64, "GET / HTTP/1.1\r\nAuthorization: ");
    memset(h + n, 'b', HTTP_AUTH_MAX + 1);
    n += HTTP_AUTH_MAX + 1;
    n += snprintf(h + n, 64, "\r\n\r\n");
    ck_assert_int_eq(parse_n(h, (size_t)n), -431);
    /* no end of head within HTTP_HEAD_MAX */
    n = snprintf(h, HTTP_HEAD_MAX + 64, "GET / HTTP/1.1\r\nX: ");
    memset(h + n, 'c', HTTP_HEAD_MAX);
    ck_assert_int_eq(parse_n(h, HTTP_HEAD_MAX), -431);
    free(h);
}
END_TEST

START_TEST(query)
{
    char v[16];
    ck_assert_int_eq(query_param("/f?path=%2Ftmp%2Fa+b&mode=644", "path", v, sizeof(v)), 1);
    ck_assert_str_eq(v, "/tmp/a b");
    ck_assert_int_eq(query_param("/f?path=%2Ftmp%2Fa+b&mode=644", "mode", v, sizeof(v)), 1);
    ck_assert_str_eq(v, "644");
    ck_assert_int_eq(query_param("/f?xpath=1&path=2", "path", v, sizeof(v)), 1);
    ck_assert_str_eq(v, "2");
    ck_assert_int_eq(query_param("/f?path=", "path", v, sizeof(v)), 1);
    ck_assert_str_eq(v, "");
    ck_assert_int_eq(query_param("/f", "path", v, sizeof(v)), 0);
    ck_assert_int_eq(query_param("/f?pat=1", "path", v, sizeof(v)), 0);
    ck_assert_int_eq(query_param("/f?path=%00", "path", v, sizeof(v)), -1);  /* a NUL */
    ck_assert_int_eq(query_param("/f?path=%2", "path", v, sizeof(v)), -1);   /* cut escape */
    ck_assert_int_eq(query_param("/f?path=%zz", "path", v, sizeof(v)), -1);  /* not hex */
    ck_assert_int_eq(query_param("/f?path=%", "path", v, sizeof(v)), -1);
    ck_assert_int_eq(query_param("/f?path=0123456789abcdef", "path", v, sizeof(v)), -1); /* 16 > 15 */
    ck_assert_int_eq(query_param("/f?path=0123456789abcde", "path", v, sizeof(v)), 1);
}
END_TEST

/* query_bool as the eof= and follow= routes use it: exactly true/1 or
 * false/0 after percent-decoding, the first occurrence, else -1. */
START_TEST(query_bools)
{
    static const struct { const char *target; int rc; bool v; } cases[] = {
        {"/o?follow=true", 1, true},        {"/o?follow=1", 1, true},
        {"/o?follow=false", 1, false},      {"/o?follow=0", 1, false},
        {"/o?offset=3&follow=true&x", 1, true},
        {"/o?follow=%74rue", 1, true},      /* escaped, then compared */
        {"/o?follow=true&follow=false", 1, true}, /* the first one */
        {"/o", 0, false},                   {"/o?", 0, false},
        {"/o?follo=true", 0, false},        {"/o?xfollow=true", 0, false},
        {"/o?follow", 0, false},            /* no '=': not this parameter */
        {"/o?follow=", -1, false},          {"/o?follow=TRUE", -1, false},
        {"/o?follow=True", -1, false},      {"/o?follow=yes", -1, false},
        {"/o?follow=on", -1, false},        {"/o?follow=tru", -1, false},
        {"/o?follow=truex", -1, false},     {"/o?follow=true%00", -1, false},
        {"/o?follow=%00", -1, false},       {"/o?follow=+true", -1, false},
        {"/o?follow=true+", -1, false},     {"/o?follow=10", -1, false},
        {"/o?follow=01", -1, false},        {"/o?follow=-1", -1, false},
        {"/o?follow=2", -1, false},         {"/o?follow=%", -1, false},
        {"/o?follow=%7", -1, false},        {"/o?follow=%zz", -1, false},
        {"/o?follow=truetruetrue", -1, false}, /* longer than any answer */
        {"/o?follow=falsefalse", -1, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        bool v = !cases[i].v; /* absent or refused: left as it was */
        int rc = query_bool(cases[i].target, "follow", &v);
        ck_assert_msg(rc == cases[i].rc, "%s: %d", cases[i].target, rc);
        ck_assert_msg(v == (rc == 1 ? cases[i].v : !cases[i].v), "%s: value", cases[i].target);
    }
}
END_TEST

Suite *http_server_request_suite(void)
{
    Suite *s = suite_create("http_server_request");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, curl_post);
    tcase_add_test(tc, fields_kept);
    tcase_add_test(tc, incremental);
    tcase_add_loop_test(tc, hostile, 0, (int)(sizeof(bad) / sizeof(bad[0])));
    tcase_add_test(tc, limits);
    tcase_add_test(tc, query);
    tcase_add_test(tc, query_bools);
    suite_add_tcase(s, tc);
    return s;
}
