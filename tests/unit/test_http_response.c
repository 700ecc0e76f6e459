/* vmm/http/http_response.c: response heads as upstream servers send them, the
 * body framing each one implies (RFC 9112 6.3), feeding a head a byte at a
 * time, the size cap, and hostile heads (each a way to make the broker and
 * the guest disagree about where a body ends, or to slip bytes past it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "vmm/http/http_response.h"

static struct http_response resp;

/* Parses an exact-size heap copy of s[0..n) so ASan catches any read past
 * the end (the parser must not rely on a NUL terminator). */
static int parse_n(const char *s, size_t n)
{
    char *copy = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, s, n);
    int rc = http_response_parse(copy, n, &resp);
    free(copy);
    return rc;
}

static int parse(const char *s)
{
    return parse_n(s, strlen(s));
}

START_TEST(content_length_body)
{
    static const char h[] = "HTTP/1.1 200 OK\r\n"
                            "Content-Type: application/json\r\n"
                            "Content-Length: 5\r\n"
                            "Content-Length: 5\r\n" /* identical repeats are harmless */
                            "\r\n";
    char buf[sizeof(h) + 5];
    memcpy(buf, h, sizeof(h) - 1);
    memcpy(buf + sizeof(h) - 1, "hello", 5);
    ck_assert_int_eq(parse_n(buf, sizeof(buf) - 1), 1);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_int_eq(resp.http_minor, 1);
    ck_assert_uint_eq(resp.head_len, sizeof(h) - 1);
    ck_assert(resp.has_content_length);
    ck_assert_uint_eq(resp.content_length, 5);
    ck_assert(!resp.chunked && !resp.connection_close && !resp.upgrade);
    ck_assert(resp.content_encoding_identity);
    ck_assert_int_eq(http_response_body(&resp, false), HTTP_BODY_LENGTH);
    ck_assert_int_eq(http_response_body(&resp, true), HTTP_BODY_NONE);
}
END_TEST

START_TEST(chunked_body)
{
    ck_assert_int_eq(parse("HTTP/1.1 201 Created\r\nTransfer-Encoding: Chunked\r\n\r\n"), 1);
    ck_assert_int_eq(resp.status, 201);
    ck_assert(resp.chunked && !resp.has_content_length);
    ck_assert_int_eq(http_response_body(&resp, false), HTTP_BODY_CHUNKED);
    ck_assert_int_eq(http_response_body(&resp, true), HTTP_BODY_NONE);
}
END_TEST

START_TEST(until_close_and_connection)
{
    ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\n\r\n"), 1);
    ck_assert_int_eq(http_response_body(&resp, false), HTTP_BODY_UNTIL_CLOSE);
    ck_assert(!resp.connection_close);
    ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\n\r\n"), 1);
    ck_assert(resp.connection_close);
    ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nConnection: x\r\nConnection: close\r\n\r\n"), 1);
    ck_assert(resp.connection_close);
    ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nConnection: closed\r\n\r\n"), 1);
    ck_assert(!resp.connection_close);
    /* HTTP/1.0 closes unless it says keep-alive (RFC 9112 9.3). */
    ck_assert_int_eq(parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"), 1);
    ck_assert_int_eq(resp.http_minor, 0);
    ck_assert(resp.connection_close);
    ck_assert_int_eq(parse("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n\r\n"), 1);
    ck_assert(!resp.connection_close);
    ck_assert_int_eq(parse("HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\n\r\n"), 1);
    ck_assert(resp.connection_close);
}
END_TEST

START_TEST(statuses_without_a_body)
{
    static const struct {
        const char *head;
        int status;
        enum http_body_kind body;
    } cases[] = {
        {"HTTP/1.1 100 Continue\r\n\r\n", 100, HTTP_BODY_NONE},
        {"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n", 103, HTTP_BODY_NONE},
        {"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", 204, HTTP_BODY_NONE},
        {"HTTP/1.1 304 Not Modified\r\nContent-Length: 1234\r\n\r\n", 304, HTTP_BODY_NONE},
        {"HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", 304, HTTP_BODY_NONE},
        {"HTTP/1.1 205 Reset Content\r\nContent-Length: 0\r\n\r\n", 205, HTTP_BODY_LENGTH},
        {"HTTP/1.1 599 \r\n\r\n", 599, HTTP_BODY_UNTIL_CLOSE}, /* an empty reason */
        {"HTTP/1.1 404 Not\tFound \xc3\xa9\r\n\r\n", 404, HTTP_BODY_UNTIL_CLOSE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_assert_msg(parse(cases[i].head) == 1, "case %zu", i);
        ck_assert_int_eq(resp.status, cases[i].status);
        ck_assert_int_eq(http_response_body(&resp, false), cases[i].body);
    }
}
END_TEST

/* A 1xx head comes first, the final response after it. */
START_TEST(interim_then_final)
{
    static const char s[] = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    ck_assert_int_eq(parse(s), 1);
    ck_assert_int_eq(resp.status, 100);
    size_t off = resp.head_len;
    ck_assert_int_eq(parse_n(s + off, sizeof(s) - 1 - off), 1);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_uint_eq(off + resp.head_len + 2, sizeof(s) - 1);
}
END_TEST

START_TEST(flags)
{
    ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n"), 1);
    ck_assert(!resp.content_encoding_identity);
    ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Encoding: Identity\r\n\r\n"), 1);
    ck_assert(resp.content_encoding_identity);
    ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Encoding: identity, br\r\n\r\n"), 1);
    ck_assert(!resp.content_encoding_identity);
    ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\n"
                           "content-encoding: x\r\n\r\n"), 1);
    ck_assert(!resp.content_encoding_identity);
    ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Encoding:\r\n\r\n"), 1);
    ck_assert(!resp.content_encoding_identity); /* unknown: not plain bytes */
    ck_assert_int_eq(parse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\n\r\n"), 1);
    ck_assert(resp.upgrade);
    ck_assert_int_eq(http_response_body(&resp, false), HTTP_BODY_NONE);
    ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Length: 999999999999999999\r\n\r\n"), 1);
    ck_assert_uint_eq(resp.content_length, 999999999999999999ull);
    ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), 1);
    ck_assert(resp.has_content_length);
    ck_assert_int_eq(http_response_body(&resp, false), HTTP_BODY_LENGTH);
}
END_TEST

/* Every prefix of a head is "more", the whole head is the same answer
 * with or without bytes after it. */
START_TEST(incremental_feeding)
{
    static const char h[] = "HTTP/1.1 200 OK\r\nServer: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    char buf[sizeof(h) + 8];
    memcpy(buf, h, sizeof(h) - 1);
    memcpy(buf + sizeof(h) - 1, "5\r\nhello", 8);
    for (size_t n = 0; n < sizeof(h) - 1; n++)
        ck_assert_msg(parse_n(buf, n) == 0, "prefix %zu", n);
    for (size_t n = sizeof(h) - 1; n <= sizeof(buf); n++) {
        ck_assert_int_eq(parse_n(buf, n), 1);
        ck_assert_uint_eq(resp.head_len, sizeof(h) - 1);
        ck_assert(resp.chunked);
    }
}
END_TEST

static const char *const bad_heads[] = {
    /* line ends */
    "HTTP/1.1 200 OK\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 1\n\r\n",
    "HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",
    "HTTP/1.1 200 OK\r\n\n",
    "\r\nHTTP/1.1 200 OK\r\n\r\n", /* no leading empty line */
    /* status line */
    "HTTP/1.1 200\r\n\r\n",      /* the SP before the reason is not optional */
    "HTTP/1.1  200 OK\r\n\r\n",
    " HTTP/1.1 200 OK\r\n\r\n",
    "HTTP/1.1 099 Low\r\n\r\n",
    "HTTP/1.1 600 High\r\n\r\n",
    "HTTP/1.1 20 OK\r\n\r\n",
    "HTTP/1.1 2000 OK\r\n\r\n",
    "HTTP/1.1 2x0 OK\r\n\r\n",
    "HTTP/1.1 -20 OK\r\n\r\n",
    "HTTP/1.2 200 OK\r\n\r\n",
    "HTTP/2.0 200 OK\r\n\r\n",
    "HTTP/2 200 OK\r\n\r\n",
    "http/1.1 200 OK\r\n\r\n",
    "HTTP/1.1 200 O\x01K\r\n\r\n",
    "HTTP/1.1 200 OK\x7f\r\n\r\n",
    "ICY 200 OK\r\n\r\n",
    /* field lines */
    "HTTP/1.1 200 OK\r\nX: a\x01b\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX : a\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX\t: a\r\n\r\n",
    "HTTP/1.1 200 OK\r\n: a\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX(y): a\r\n\r\n",
    "HTTP/1.1 200 OK\r\nNo colon\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", /* obs-fold */
    "HTTP/1.1 200 OK\r\nX: a\r\n\tb\r\n\r\n",
    "HTTP/1.1 200 OK\r\n Content-Length: 5\r\n\r\n",
    /* framing */
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 05\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 1 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 1000000000000000000\r\n\r\n", /* 19 digits */
    "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked,\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked;q=1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\n",
    "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", /* 1.0 has none */
};

START_TEST(hostile_heads)
{
    const char *h = bad_heads[_i];
    ck_assert_msg(parse(h) == -1, "bad head %d accepted or not judged: %d", _i, parse(h));
    ck_assert_int_eq(resp.status, 0); /* nothing half-filled */
    ck_assert_uint_eq(resp.head_len, 0);
    /* Any prefix says "more" or the same. */
    for (size_t n = 0; n < strlen(h); n++) {
        int rc = parse_n(h, n);
        ck_assert_msg(rc == 0 || rc == -1, "bad head %d prefix %zu: %d", _i, n, rc);
    }
}
END_TEST

START_TEST(nul_bytes)
{
    static const char h[] = "HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n";
    ck_assert_int_eq(parse_n(h, sizeof(h) - 1), -1);
    static const char s[] = "HTTP/1.1 200\0OK\r\n\r\n";
    ck_assert_int_eq(parse_n(s, sizeof(s) - 1), -1);
}
END_TEST

START_TEST(head_size_limit)
{
    size_t cap = HTTP_RESPONSE_HEAD_MAX;
    char *buf = malloc(cap + 16);
    static const char start[] = "HTTP/1.1 200 OK\r\nX: ";
    memcpy(buf, start, sizeof(start) - 1);
    memset(buf + sizeof(start) - 1, 'a', cap + 16 - (sizeof(start) - 1));
    ck_assert_int_eq(parse_n(buf, cap - 1), 0);
    ck_assert_int_eq(parse_n(buf, cap), -2);
    ck_assert_int_eq(parse_n(buf, cap + 16), -2);
    /* A head of exactly the cap is accepted. */
    memcpy(buf + cap - 4, "\r\n\r\n", 4);
    ck_assert_int_eq(parse_n(buf, cap), 1);
    ck_assert_uint_eq(resp.head_len, cap);
    ck_assert_int_eq(parse_n(buf, cap + 16), 1);
    free(buf);
}
END_TEST

Suite *http_response_suite(void)
{
    Suite *s = suite_create("http_response");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, content_length_body);
    tcase_add_test(tc, chunked_body);
    tcase_add_test(tc, until_close_and_connection);
    tcase_add_test(tc, statuses_without_a_body);
    tcase_add_test(tc, interim_then_final);
    tcase_add_test(tc, flags);
    tcase_add_test(tc, incremental_feeding);
    tcase_add_loop_test(tc, hostile_heads, 0, (int)(sizeof(bad_heads) / sizeof(bad_heads[0])));
    tcase_add_test(tc, nul_bytes);
    tcase_add_test(tc, head_size_limit);
    suite_add_tcase(s, tc);
    return s;
}
