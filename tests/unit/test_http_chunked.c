/* vmm/http/http_chunked.c: chunked bodies fed in every split, extensions,
 * trailers and their caps, hostile sizes (overflow, signs, too many
 * digits), missing or bare line ends, and the encoder's round trip. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "vmm/http/http_chunked.h"

struct decoded {
    int rc;          /* the last result */
    size_t consumed; /* bytes the decoder used */
    char data[4096];
    size_t data_len;
    bool trailers;
};

/* Feeds in[0, len) cut at cuts[0..ncuts) (ascending), each piece an
 * exact-size heap copy, calling again while a piece has bytes left and
 * the result is HTTP_CHUNKED_OK; stops at DONE or BAD. */
static struct decoded decode_cuts(const char *in, size_t len, const size_t *cuts, unsigned ncuts)
{
    struct decoded d = {0};
    struct http_chunked c;
    http_chunked_init(&c);
    size_t from = 0;
    for (unsigned k = 0; k <= ncuts && d.rc == HTTP_CHUNKED_OK; k++) {
        size_t to = k < ncuts ? cuts[k] : len;
        char *piece = malloc(to - from + 1);
        memcpy(piece, in + from, to - from);
        size_t off = 0;
        while (d.rc == HTTP_CHUNKED_OK && off < to - from) {
            size_t used;
            const char *data;
            size_t n;
            d.rc = http_chunked_feed(&c, piece + off, to - from - off, &used, &data, &n);
            ck_assert_uint_le(used, to - from - off);
            if (d.rc == HTTP_CHUNKED_OK)
                ck_assert_uint_gt(used, 0); /* progress */
            if (n) {
                ck_assert(data >= piece + off && data + n <= piece + off + used);
                ck_assert_uint_le(d.data_len + n, sizeof(d.data));
                memcpy(d.data + d.data_len, data, n);
                d.data_len += n;
            }
            off += used;
            d.consumed += used;
        }
        free(piece);
        from = to;
    }
    d.trailers = c.trailers;
    return d;
}

/* The one-piece result, then the same from every split into two and
 * three pieces and from one byte at a time. */
static struct decoded decode_every_split(const char *in, size_t len)
{
    struct decoded one = decode_cuts(in, len, NULL, 0);
    size_t cuts[512];
    for (size_t a = 0; a <= len; a++) {
        for (size_t b = a; b <= len; b += len > 48 ? 7 : 1) {
            cuts[0] = a;
            cuts[1] = b;
            struct decoded d = decode_cuts(in, len, cuts, 2);
            ck_assert_int_eq(d.rc, one.rc);
            ck_assert_uint_eq(d.consumed, one.consumed);
            ck_assert_uint_eq(d.data_len, one.data_len);
            ck_assert(memcmp(d.data, one.data, d.data_len) == 0);
        }
    }
    if (len <= sizeof(cuts) / sizeof(cuts[0])) {
        for (size_t i = 0; i < len; i++)
            cuts[i] = i;
        struct decoded d = decode_cuts(in, len, cuts, (unsigned)len);
        ck_assert_int_eq(d.rc, one.rc);
        ck_assert_uint_eq(d.consumed, one.consumed);
        ck_assert_uint_eq(d.data_len, one.data_len);
    }
    return one;
}

/* Each of in[0..n) decodes (in every split) to rc, with data_len bytes of
 * data when data_len is not SIZE_MAX. */
static void expect_each(const char *const *in, size_t n, int rc, size_t data_len)
{
    for (size_t i = 0; i < n; i++) {
        struct decoded d = decode_every_split(in[i], strlen(in[i]));
        ck_assert_msg(d.rc == rc, "\"%s\": %d, want %d", in[i], d.rc, rc);
        if (data_len != SIZE_MAX)
            ck_assert_uint_eq(d.data_len, data_len);
    }
}

START_TEST(simple_body_every_split)
{
    static const char in[] = "5\r\nhello\r\n6;name=value\r\n world\r\nA\r\n, 10 bytes\r\n0\r\n\r\n"
                             "HTTP/1.1 200 OK\r\n"; /* the next response: not consumed */
    struct decoded d = decode_every_split(in, sizeof(in) - 1);
    ck_assert_int_eq(d.rc, HTTP_CHUNKED_DONE);
    ck_assert_uint_eq(d.consumed, sizeof(in) - 1 - strlen("HTTP/1.1 200 OK\r\n"));
    ck_assert_uint_eq(d.data_len, 21);
    ck_assert(memcmp(d.data, "hello world, 10 bytes", 21) == 0);
    ck_assert(!d.trailers);
}
END_TEST

START_TEST(trailers_dropped)
{
    static const char in[] = "3\r\nabc\r\n000\r\nX-Checksum: 1234\r\nGrpc-Status:0\r\n\r\nnext";
    struct decoded d = decode_every_split(in, sizeof(in) - 1);
    ck_assert_int_eq(d.rc, HTTP_CHUNKED_DONE);
    ck_assert_uint_eq(d.consumed, sizeof(in) - 1 - 4);
    ck_assert_uint_eq(d.data_len, 3);
    ck_assert(d.trailers);
}
END_TEST

START_TEST(extensions)
{
    static const char *const good[] = {
        "1;a\r\nx\r\n0\r\n\r\n",
        "1 ; a = b\r\nx\r\n0\r\n\r\n",
        "1\t;\ta\t=\tb;c;d=e\r\nx\r\n0\r\n\r\n",
        "1;a=\"q \\\" ;\\\\ \xff\"\r\nx\r\n0\r\n\r\n",
        "1;a=\"\"\r\nx\r\n0;last=1\r\n\r\n",
    };
    static const char *const bad[] = {
        "1;\r\nx\r\n0\r\n\r\n",
        "1; =b\r\nx\r\n0\r\n\r\n",
        "1;a=\r\nx\r\n0\r\n\r\n",
        "1;a=\"open\r\nx\r\n0\r\n\r\n",
        "1;a=\"bad\\\"\r\nx\r\n0\r\n\r\n",
        "1;a=\"ctl\x01\"\r\nx\r\n0\r\n\r\n",
        "1;a b\r\nx\r\n0\r\n\r\n",
        "1;a \r\nx\r\n0\r\n\r\n", /* BWS only where the grammar puts it */
        "1 \r\nx\r\n0\r\n\r\n",
        "1;a=b c\r\nx\r\n0\r\n\r\n",
        "1,a\r\nx\r\n0\r\n\r\n",
        "1;a=(b)\r\nx\r\n0\r\n\r\n",
    };
    expect_each(good, sizeof(good) / sizeof(good[0]), HTTP_CHUNKED_DONE, 1);
    expect_each(bad, sizeof(bad) / sizeof(bad[0]), HTTP_CHUNKED_BAD, 0);
}
END_TEST

START_TEST(hostile_sizes)
{
    static const char *const bad[] = {
        "ffffffffffffffffff\r\n",  /* 18 digits */
        "10000000000000000\r\n",   /* 2^64: 17 digits */
        "00000000000000001\r\n",   /* 17 digits, even if small */
        "-5\r\nhello\r\n0\r\n\r\n",
        "+5\r\nhello\r\n0\r\n\r\n",
        "0x5\r\nhello\r\n0\r\n\r\n",
        " 5\r\nhello\r\n0\r\n\r\n",
        "\r\nhello\r\n0\r\n\r\n",  /* no size */
        "g\r\n",
        "5\nhello\r\n0\r\n\r\n",   /* bare LF */
        "5\rhello\r\n0\r\n\r\n",   /* bare CR */
        "5\r\nhelloX\r\n0\r\n\r\n", /* data longer than its size */
        "5\r\nhell\r\n0\r\n\r\n",  /* shorter: the CRLF lands in the data */
        "5\r\nhello\n0\r\n\r\n",
        "5\r\nhello\r0\r\n\r\n",
        "5\r\nhello0\r\n\r\n",
        "0\r\n\n",
        "0\r\n\r\r",
        "0\n\r\n",
    };
    expect_each(bad, sizeof(bad) / sizeof(bad[0]), HTTP_CHUNKED_BAD, SIZE_MAX);
    /* 16 digits is the most, and is read exactly. */
    struct http_chunked c;
    const char *data;
    size_t used, n;
    http_chunked_init(&c);
    ck_assert_int_eq(http_chunked_feed(&c, "FFFFFFFFFFFFFFFF\r\nab", 20, &used, &data, &n),
                     HTTP_CHUNKED_OK);
    ck_assert_uint_eq(used, 20);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(c.remaining, UINT64_MAX - 2);
    http_chunked_init(&c);
    ck_assert_int_eq(http_chunked_feed(&c, "0000000000000010\r\n", 18, &used, &data, &n),
                     HTTP_CHUNKED_OK);
    ck_assert_uint_eq(c.remaining, 16);
}
END_TEST

START_TEST(nul_in_framing)
{
    static const char a[] = "5\0\r\nhello\r\n0\r\n\r\n";
    ck_assert_int_eq(decode_cuts(a, sizeof(a) - 1, NULL, 0).rc, HTTP_CHUNKED_BAD);
    static const char b[] = "1;a=\"\0\"\r\nx\r\n0\r\n\r\n";
    ck_assert_int_eq(decode_cuts(b, sizeof(b) - 1, NULL, 0).rc, HTTP_CHUNKED_BAD);
    static const char t[] = "0\r\nX: a\0b\r\n\r\n";
    ck_assert_int_eq(decode_cuts(t, sizeof(t) - 1, NULL, 0).rc, HTTP_CHUNKED_BAD);
    /* NUL in the data is just data. */
    static const char d[] = "3\r\na\0b\r\n0\r\n\r\n";
    struct decoded r = decode_cuts(d, sizeof(d) - 1, NULL, 0);
    ck_assert_int_eq(r.rc, HTTP_CHUNKED_DONE);
    ck_assert_uint_eq(r.data_len, 3);
}
END_TEST

START_TEST(bad_trailers)
{
    static const char *const bad[] = {
        "0\r\n X: a\r\n\r\n",      /* obs-fold */
        "0\r\nX : a\r\n\r\n",
        "0\r\n: a\r\n\r\n",
        "0\r\nX\r\n\r\n",          /* no colon */
        "0\r\nX: a\nY: b\r\n\r\n",
        "0\r\nX: a\x7f\r\n\r\n",
        "0\r\nX: a\r\n\r\r",
    };
    expect_each(bad, sizeof(bad) / sizeof(bad[0]), HTTP_CHUNKED_BAD, 0);
}
END_TEST

/* The size line's cap (without its CRLF) and the trailers' cap (from the
 * end of the last-chunk line to the end of the body). */
START_TEST(caps)
{
    size_t cap = 2 * HTTP_CHUNKED_TRAILER_MAX;
    char *buf = malloc(cap);
    /* "1;a=bbb...b": exactly HTTP_CHUNKED_LINE_MAX bytes, then one more. */
    for (int extra = 0; extra <= 1; extra++) {
        size_t line = HTTP_CHUNKED_LINE_MAX + (size_t)extra;
        memcpy(buf, "1;a=", 4);
        memset(buf + 4, 'b', line - 4);
        memcpy(buf + line, "\r\nx\r\n0\r\n\r\n", 10);
        struct decoded d = decode_cuts(buf, line + 10, NULL, 0);
        ck_assert_int_eq(d.rc, extra ? HTTP_CHUNKED_BAD : HTTP_CHUNKED_DONE);
    }
    /* "0\r\nX: vvv...v\r\n\r\n" with a trailer section of exactly the cap. */
    for (int extra = 0; extra <= 1; extra++) {
        size_t section = HTTP_CHUNKED_TRAILER_MAX + (size_t)extra;
        memcpy(buf, "0\r\nX: ", 6);
        memset(buf + 6, 'v', section - 7);
        memcpy(buf + 3 + section - 4, "\r\n\r\n", 4);
        struct decoded d = decode_cuts(buf, 3 + section, NULL, 0);
        ck_assert_int_eq(d.rc, extra ? HTTP_CHUNKED_BAD : HTTP_CHUNKED_DONE);
        if (!extra)
            ck_assert_uint_eq(d.consumed, 3 + section);
    }
    /* Many small trailer lines add up too. */
    size_t n = 3;
    memcpy(buf, "0\r\n", 3);
    while (n < HTTP_CHUNKED_TRAILER_MAX + 16) {
        memcpy(buf + n, "A:b\r\n", 5);
        n += 5;
    }
    memcpy(buf + n, "\r\n", 2);
    ck_assert_int_eq(decode_cuts(buf, n + 2, NULL, 0).rc, HTTP_CHUNKED_BAD);
    free(buf);
}
END_TEST

START_TEST(after_the_end)
{
    struct http_chunked c;
    const char *data;
    size_t used, n;
    http_chunked_init(&c);
    ck_assert_int_eq(http_chunked_feed(&c, "0\r\n\r\nxyz", 8, &used, &data, &n), HTTP_CHUNKED_DONE);
    ck_assert_uint_eq(used, 5);
    ck_assert_int_eq(http_chunked_feed(&c, "1\r\nx", 4, &used, &data, &n), HTTP_CHUNKED_DONE);
    ck_assert_uint_eq(used, 0);
    ck_assert_uint_eq(n, 0);
    http_chunked_init(&c);
    ck_assert_int_eq(http_chunked_feed(&c, "1\r\nxZ", 5, &used, &data, &n), HTTP_CHUNKED_OK);
    ck_assert_uint_eq(used, 4);
    ck_assert_int_eq(http_chunked_feed(&c, "Z", 1, &used, &data, &n), HTTP_CHUNKED_BAD);
    ck_assert_uint_eq(used, 0);
    ck_assert_int_eq(http_chunked_feed(&c, "\r\n0\r\n\r\n", 7, &used, &data, &n), HTTP_CHUNKED_BAD);
    ck_assert_uint_eq(used, 0);
    ck_assert_ptr_null(data);
    /* An empty feed is harmless. */
    http_chunked_init(&c);
    ck_assert_int_eq(http_chunked_feed(&c, "", 0, &used, &data, &n), HTTP_CHUNKED_OK);
    ck_assert_uint_eq(used, 0);
}
END_TEST

START_TEST(encoder_round_trip)
{
    char h[HTTP_CHUNK_HEADER_MAX];
    ck_assert_uint_eq(http_chunk_header(h, 0), 0);
    ck_assert_uint_eq(http_chunk_header(h, 1), 3);
    ck_assert(memcmp(h, "1\r\n", 3) == 0);
    ck_assert_uint_eq(http_chunk_header(h, 0x1f), 4);
    ck_assert(memcmp(h, "1f\r\n", 4) == 0);
    ck_assert_uint_eq(http_chunk_header(h, SIZE_MAX), 18);
    ck_assert(memcmp(h, "ffffffffffffffff\r\n", 18) == 0);

    /* Data in chunks of 1..300 bytes, encoded and decoded again. */
    char src[3000], enc[4000];
    size_t e = 0, at = 0, step = 1;
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (char)(i * 7 + 3);
    while (at < sizeof(src)) {
        size_t n = step < sizeof(src) - at ? step : sizeof(src) - at;
        e += http_chunk_header(enc + e, n);
        memcpy(enc + e, src + at, n);
        e += n;
        memcpy(enc + e, HTTP_CHUNK_END, 2);
        e += 2;
        at += n;
        step = step * 3 % 301 + 1;
    }
    memcpy(enc + e, HTTP_CHUNK_LAST, 5);
    e += 5;
    size_t cuts[] = {1, 2, 17, 1000, 1001, 3003};
    struct decoded d = decode_cuts(enc, e, cuts, 6);
    ck_assert_int_eq(d.rc, HTTP_CHUNKED_DONE);
    ck_assert_uint_eq(d.consumed, e);
    ck_assert_uint_eq(d.data_len, sizeof(src));
    ck_assert(memcmp(d.data, src, sizeof(src)) == 0);
}
END_TEST

Suite *http_chunked_suite(void)
{
    Suite *s = suite_create("http_chunked");
    TCase *tc = tcase_create("decode");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, simple_body_every_split);
    tcase_add_test(tc, trailers_dropped);
    tcase_add_test(tc, extensions);
    tcase_add_test(tc, hostile_sizes);
    tcase_add_test(tc, nul_in_framing);
    tcase_add_test(tc, bad_trailers);
    tcase_add_test(tc, caps);
    tcase_add_test(tc, after_the_end);
    tcase_add_test(tc, encoder_round_trip);
    suite_add_tcase(s, tc);
    return s;
}
