/* vmm/http/http_request.c: proxy request heads as a guest's http_proxy client
 * sends them (CONNECT and absolute-URI forms), the origin-form rewrite,
 * incremental feeding, the size limits, and hostile heads (each a way to
 * smuggle a request or confuse the policy about the destination). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "vmm/http/http_request.h"

static struct http_request req;

static void teardown(void)
{
    http_request_free(&req);
}

/* Parses an exact-size heap copy of s[0..n) so ASan catches any read past
 * the end (the parser must not rely on a NUL terminator). */
static int parse_n(const char *s, size_t n)
{
    http_request_free(&req);
    char *copy = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, s, n);
    int rc = http_request_parse(copy, n, &req);
    free(copy);
    return rc;
}

static int parse(const char *s)
{
    return parse_n(s, strlen(s));
}

#define ASSERT_ORIGIN(expect)                                                          \
    do {                                                                               \
        ck_assert_ptr_nonnull(req.origin_head);                                        \
        ck_assert_str_eq(req.origin_head, (expect));                                   \
        ck_assert_uint_eq(req.origin_head_len, strlen(expect));                        \
    } while (0)

START_TEST(connect_plain)
{
    static const char h[] = "CONNECT example.com:443 HTTP/1.1\r\n\r\n";
    ck_assert_int_eq(parse(h), 1);
    ck_assert_int_eq(req.kind, HTTP_REQ_CONNECT);
    ck_assert_str_eq(req.method, "CONNECT");
    ck_assert_str_eq(req.host, "example.com");
    ck_assert_uint_eq(req.port, 443);
    ck_assert_int_eq(req.http_minor, 1);
    ck_assert_uint_eq(req.head_len, strlen(h));
    ck_assert_ptr_null(req.origin_head);
}
END_TEST

START_TEST(connect_headers_then_tunnel_bytes)
{
    static const char head[] = "CONNECT Pypi.ORG:443 HTTP/1.0\r\n"
                               "Host: pypi.org:443\r\n"
                               "User-Agent: pip/24.0\r\n"
                               "Proxy-Connection: keep-alive\r\n\r\n";
    char buf[sizeof(head) + 3];
    memcpy(buf, head, sizeof(head) - 1);
    memcpy(buf + sizeof(head) - 1, "\x16\x03\x01", 3); /* a TLS ClientHello starts */
    ck_assert_int_eq(parse_n(buf, sizeof(buf)), 1);
    ck_assert_str_eq(req.host, "pypi.org");
    ck_assert_uint_eq(req.port, 443);
    ck_assert_int_eq(req.http_minor, 0);
    ck_assert_uint_eq(req.head_len, sizeof(head) - 1);
}
END_TEST

START_TEST(connect_ipv6)
{
    ck_assert_int_eq(parse("CONNECT [::1]:443 HTTP/1.1\r\n\r\n"), 1);
    ck_assert_str_eq(req.host, "::1");
    ck_assert_uint_eq(req.port, 443);
    /* One spelling per address for the policy. */
    ck_assert_int_eq(parse("CONNECT [2001:DB8:0:0::1]:8443 HTTP/1.1\r\n\r\n"), 1);
    ck_assert_str_eq(req.host, "2001:db8::1");
    ck_assert_uint_eq(req.port, 8443);
    ck_assert_int_eq(parse("CONNECT 10.0.0.1:22 HTTP/1.1\r\n\r\n"), 1);
    ck_assert_str_eq(req.host, "10.0.0.1");
}
END_TEST

START_TEST(get_absolute_uri)
{
    static const char h[] = "GET http://Example.COM:8080/a/b?q=1&r=%20 HTTP/1.1\r\n"
                            "User-Agent: curl/8.5\r\n"
                            "Accept: */*\r\n\r\n";
    ck_assert_int_eq(parse(h), 1);
    ck_assert_int_eq(req.kind, HTTP_REQ_FORWARD);
    ck_assert_str_eq(req.method, "GET");
    ck_assert_str_eq(req.host, "example.com");
    ck_assert_uint_eq(req.port, 8080);
    ck_assert_uint_eq(req.head_len, strlen(h));
    ASSERT_ORIGIN("GET /a/b?q=1&r=%20 HTTP/1.1\r\n"
                  "Host: example.com:8080\r\n"
                  "User-Agent: curl/8.5\r\n"
                  "Accept: */*\r\n"
                  "Connection: close\r\n\r\n");
}
END_TEST

START_TEST(default_port_and_empty_path)
{
    ck_assert_int_eq(parse("HEAD http://deb.debian.org/debian/ HTTP/1.0\r\n\r\n"), 1);
    ck_assert_uint_eq(req.port, 80);
    ASSERT_ORIGIN("HEAD /debian/ HTTP/1.0\r\nHost: deb.debian.org\r\nConnection: close\r\n\r\n");
    ck_assert_int_eq(parse("GET http://h HTTP/1.1\r\n\r\n"), 1);
    ASSERT_ORIGIN("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
    ck_assert_int_eq(parse("DELETE HTTP://h?x=1 HTTP/1.1\r\n\r\n"), 1);
    ASSERT_ORIGIN("DELETE /?x=1 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
    ck_assert_int_eq(parse("OPTIONS http://[::1]:81/ HTTP/1.1\r\n\r\n"), 1);
    ck_assert_str_eq(req.host, "::1");
    ASSERT_ORIGIN("OPTIONS / HTTP/1.1\r\nHost: [::1]:81\r\nConnection: close\r\n\r\n");
}
END_TEST

/* One trailing dot is the same host (docs/egress.md): dropped everywhere
 * a name is read, so the policy never sees "example.com." at all. */
START_TEST(trailing_dot)
{
    ck_assert_int_eq(parse("CONNECT Example.COM.:443 HTTP/1.1\r\nHost: example.com.:443\r\n\r\n"), 1);
    ck_assert_int_eq(req.kind, HTTP_REQ_CONNECT);
    ck_assert_str_eq(req.host, "example.com");
    ck_assert_uint_eq(req.port, 443);
    ck_assert_int_eq(parse("GET http://a.b./x HTTP/1.1\r\n\r\n"), 1);
    ck_assert_str_eq(req.host, "a.b");
    ck_assert_uint_eq(req.port, 80);
    ASSERT_ORIGIN("GET /x HTTP/1.1\r\nHost: a.b\r\nConnection: close\r\n\r\n");
    ck_assert_int_eq(parse("GET http://a.:8080/ HTTP/1.1\r\nHost: a.\r\n\r\n"), 1);
    ck_assert_str_eq(req.host, "a");
    ck_assert_uint_eq(req.port, 8080);
}
END_TEST

START_TEST(forward_rewrites_headers)
{
    static const char head[] = "POST http://api.local/v1 HTTP/1.1\r\n"
                               "Host: evil.example\r\n"
                               "Proxy-Connection: keep-alive\r\n"
                               "Content-Type: application/json\r\n"
                               "proxy-authorization: Basic dTpw\r\n"
                               "Connection: keep-alive, Upgrade\r\n"
                               "Content-Length: 2\r\n"
                               "X-Trace:\tabc \r\n\r\n";
    char buf[sizeof(head) + 1];
    memcpy(buf, head, sizeof(head) - 1);
    memcpy(buf + sizeof(head) - 1, "{}", 2); /* the body is not head */
    ck_assert_int_eq(parse_n(buf, sizeof(buf)), 1);
    ck_assert_uint_eq(req.head_len, sizeof(head) - 1);
    ck_assert_str_eq(req.host, "api.local");
    ASSERT_ORIGIN("POST /v1 HTTP/1.1\r\n"
                  "Host: api.local\r\n"
                  "Content-Type: application/json\r\n"
                  "Content-Length: 2\r\n"
                  "X-Trace:\tabc \r\n"
                  "Connection: close\r\n\r\n");
    /* Identical repeats of Content-Length are one length. */
    ck_assert_int_eq(parse("PUT http://h/ HTTP/1.1\r\nContent-Length: 5\r\n"
                           "Content-Length: 5\r\n\r\n"), 1);
    ck_assert_uint_eq(req.body_len, 5);
    /* The body is Content-Length bytes, or none: what follows it is not
     * relayed (a pipelined request).  A chunked body has no end we could
     * find without decoding it: 411, the client resends with a length. */
    ck_assert_int_eq(parse("GET http://h/ HTTP/1.1\r\n\r\nGET http://other/ HTTP/1.1\r\n\r\n"), 1);
    ck_assert_uint_eq(req.body_len, 0);
    ck_assert_uint_eq(req.head_len, strlen("GET http://h/ HTTP/1.1\r\n\r\n"));
    ck_assert_int_eq(parse("PUT http://h/ HTTP/1.1\r\nContent-Length: 123456789012345678\r\n\r\n"), 1);
    ck_assert_uint_eq(req.body_len, 123456789012345678ull);
    ck_assert_int_eq(parse("PUT http://h/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
                     -411);
    ck_assert_ptr_null(req.origin_head);
    /* CONNECT carries no body of its own: everything after is the tunnel. */
    ck_assert_int_eq(parse("CONNECT h:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n"), 1);
    ck_assert_uint_eq(req.body_len, 0);
}
END_TEST

/* Byte by byte: 0 until the last byte of the head, then the same result
 * as in one piece. */
static void feed_bytewise(const char *h)
{
    size_t n = strlen(h);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(parse_n(h, i) == 0, "prefix %zu of \"%s\" not 0", i, h);
    ck_assert_int_eq(parse_n(h, n), 1);
    ck_assert_uint_eq(req.head_len, n);
}

START_TEST(incremental_feeding)
{
    feed_bytewise("CONNECT a.b:443 HTTP/1.1\r\nHost: a.b:443\r\n\r\n");
    ck_assert_str_eq(req.host, "a.b");
    feed_bytewise("GET http://x.y/z HTTP/1.1\r\nA: 1\r\n\r\n");
    ASSERT_ORIGIN("GET /z HTTP/1.1\r\nHost: x.y\r\nA: 1\r\nConnection: close\r\n\r\n");
    /* A broken byte is reported as soon as it arrives, and stays reported. */
    ck_assert_int_eq(parse("GET http://x/ HTTP/1.1\n"), -400);
    ck_assert_int_eq(parse("GET http://x/ HTTP/1.1\r"), 0);
    ck_assert_int_eq(parse("GET http://x/ HTTP/1.1\rX"), -400);
    ck_assert_int_eq(parse_n("GET http\0", 9), -400);
}
END_TEST

struct bad {
    const char *s;
    size_t n;
    int rc;
};
#define BAD(lit, rc) {lit, sizeof(lit) - 1, rc}
#define H(line)      "GET http://h/ HTTP/1.1\r\n" line "\r\n\r\n"

static const struct bad bad_heads[] = {
    /* line ends, NUL, control bytes */
    BAD(H("X: a\0b"), -400),
    BAD("GET http://h/ HTTP/1.1\nX: a\r\n\r\n", -400),
    BAD(H("X: a\rb"), -400),
    BAD(H("X: a\nb"), -400),
    BAD("\r\nGET http://h/ HTTP/1.1\r\n\r\n", -400),
    BAD("GET http://h/\x01 HTTP/1.1\r\n\r\n", -400),
    BAD("GET\thttp://h/ HTTP/1.1\r\n\r\n", -400),
    BAD("GET  http://h/ HTTP/1.1\r\n\r\n", -400),
    BAD("GET http://h/ HTTP/1.1 \r\n\r\n", -400),
    BAD("GET http://h/\x7f HTTP/1.1\r\n\r\n", -400),
    BAD("GET http://h/\xc3\xa9 HTTP/1.1\r\n\r\n", -400),
    BAD("GET http://h/#frag HTTP/1.1\r\n\r\n", -400),
    BAD(H("X: a\x01z"), -400),
    /* header syntax */
    BAD("GET http://h/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", -400),
    BAD("GET http://h/ HTTP/1.1\r\nX: a\r\n\tfolded\r\n\r\n", -400),
    BAD(H("NoColon"), -400),
    BAD(H("X : a"), -400),
    BAD(H("X\t: a"), -400),
    BAD(H(": a"), -400),
    BAD(H("X(y): a"), -400),
    /* framing: smuggling */
    BAD("POST http://h/ HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n", -400),
    BAD("POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n", -400),
    BAD("POST http://h/ HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\n", -400),
    BAD("POST http://h/ HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 04\r\n\r\n", -400),
    BAD(H("Content-Length: 4, 4"), -400),
    BAD(H("Content-Length: -1"), -400),
    BAD(H("Content-Length:"), -400),
    BAD(H("Content-Length: 1234567890123456789"), -400),
    BAD(H("Transfer-Encoding: chunked, gzip"), -400),
    BAD("POST http://h/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", -400),
    /* Host header */
    BAD(H("Host: a\r\nHost: a"), -400),
    BAD(H("Host: user@h"), -400),
    BAD(H("Host:"), -400),
    BAD(H("Host: h:0"), -400),
    /* userinfo, empty or odd hosts */
    BAD("GET http://user@h/ HTTP/1.1\r\n\r\n", -400),
    BAD("GET http://u:p@h:80/ HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT user@h:443 HTTP/1.1\r\n\r\n", -400),
    BAD("GET http:/// HTTP/1.1\r\n\r\n", -400),
    BAD("GET http://:80/ HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT :443 HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT []:443 HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT [::1:443 HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT [::1]x:443 HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT [not:v6]:443 HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT ::1:443 HTTP/1.1\r\n\r\n", -400),
    BAD("GET http://h%2eexample/ HTTP/1.1\r\n\r\n", -400),
    BAD("GET http://a..b/ HTTP/1.1\r\n\r\n", -400),
    BAD("GET http://.a/ HTTP/1.1\r\n\r\n", -400),
    BAD("GET http://a../ HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT .:443 HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT a..:443 HTTP/1.1\r\n\r\n", -400),
    BAD(H("Host: a.."), -400),
    BAD("GET http://a!b/ HTTP/1.1\r\n\r\n", -400),
    /* ports */
    BAD("CONNECT h HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT h: HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT h:0 HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT h:65536 HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT h:99999 HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT h:000443 HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT h:44x HTTP/1.1\r\n\r\n", -400),
    BAD("CONNECT h:+443 HTTP/1.1\r\n\r\n", -400),
    BAD("GET http://h:/ HTTP/1.1\r\n\r\n", -400),
    BAD("GET http://h:8o/ HTTP/1.1\r\n\r\n", -400),
    /* methods and forms */
    BAD("GETTINGLONGNAMES http://h/ HTTP/1.1\r\n\r\n", -400), /* 16 bytes */
    BAD("G(T http://h/ HTTP/1.1\r\n\r\n", -400),
    BAD(" http://h/ HTTP/1.1\r\n\r\n", -400),
    BAD("GET http://h/\r\n\r\n", -400),
    BAD("GET\r\n\r\n", -400),
    BAD("CONNECT http://h:443/ HTTP/1.1\r\n\r\n", -400),
    BAD("connect h:443 HTTP/1.1\r\n\r\n", -400), /* methods are case-sensitive */
    BAD("GET h:80 HTTP/1.1\r\n\r\n", -400),
    BAD("GET https://h/ HTTP/1.1\r\n\r\n", -405),
    BAD("GET / HTTP/1.1\r\nHost: h\r\n\r\n", -405),
    BAD("OPTIONS * HTTP/1.1\r\n\r\n", -405),
    BAD("GET ftp://h/ HTTP/1.1\r\n\r\n", -405),
    /* versions */
    BAD("GET http://h/ HTTP/2.0\r\n\r\n", -505),
    BAD("GET http://h/ HTTP/1.2\r\n\r\n", -505),
    BAD("GET http://h/ HTTP/0.9\r\n\r\n", -505),
    BAD("GET http://h/ http/1.1\r\n\r\n", -400),
    BAD("GET http://h/ HTTP/1.1x\r\n\r\n", -400),
    BAD("GET http://h/ HTTP/11\r\n\r\n", -400),
    BAD("GET http://h/ HTTP/1.x\r\n\r\n", -400),
};

START_TEST(hostile_heads)
{
    const struct bad *b = &bad_heads[_i];
    int rc = parse_n(b->s, b->n);
    ck_assert_msg(rc == b->rc, "case %d \"%s\": got %d, want %d", _i, b->s, rc, b->rc);
    ck_assert_ptr_null(req.origin_head);
    ck_assert_uint_eq(req.head_len, 0);
}
END_TEST

/* The longest method (15 bytes) and host (253 bytes) that fit; one more of
 * either is in hostile_heads or below. */
START_TEST(name_limits)
{
    ck_assert_int_eq(parse("GETTINGLONGNAME http://h/ HTTP/1.1\r\n\r\n"), 1);
    ck_assert_str_eq(req.method, "GETTINGLONGNAME");
    char h[400], host[HTTP_HOST_MAX + 2];
    memset(host, 'a', sizeof(host));
    for (size_t i = 63; i < sizeof(host); i += 64)
        host[i] = '.';
    host[HTTP_HOST_MAX] = '\0';
    snprintf(h, sizeof(h), "CONNECT %s:443 HTTP/1.1\r\n\r\n", host);
    ck_assert_int_eq(parse(h), 1);
    ck_assert_str_eq(req.host, host);
    snprintf(h, sizeof(h), "CONNECT %s.:443 HTTP/1.1\r\n\r\n", host); /* the dot is not counted */
    ck_assert_int_eq(parse(h), 1);
    ck_assert_str_eq(req.host, host);
    host[HTTP_HOST_MAX] = 'a';
    host[HTTP_HOST_MAX + 1] = '\0';
    snprintf(h, sizeof(h), "CONNECT %s:443 HTTP/1.1\r\n\r\n", host);
    ck_assert_int_eq(parse(h), -400);
    ck_assert_int_eq(parse("CONNECT h:65535 HTTP/1.1\r\n\r\n"), 1);
    ck_assert_uint_eq(req.port, 65535);
    ck_assert_int_eq(parse("CONNECT h:1 HTTP/1.1\r\n\r\n"), 1);
    ck_assert_uint_eq(req.port, 1);
}
END_TEST

/* "GET http://h/aaa... HTTP/1.1\r\n" with a target of `target` bytes, then
 * a filler header that brings the head to `total` bytes. */
static char *build_head(size_t target, size_t total)
{
    static const char pre[] = "GET ", post[] = " HTTP/1.1\r\n", fill[] = "X: ";
    char *h = malloc(total + 1);
    ck_assert_ptr_nonnull(h);
    size_t line = strlen(pre) + target + strlen(post);
    ck_assert_uint_ge(total, line + strlen(fill) + 4);
    memcpy(h, pre, strlen(pre));
    memcpy(h + strlen(pre), "http://h/", 9);
    memset(h + strlen(pre) + 9, 'a', target - 9);
    memcpy(h + strlen(pre) + target, post, strlen(post));
    memcpy(h + line, fill, strlen(fill));
    memset(h + line + strlen(fill), 'v', total - line - strlen(fill) - 4);
    memcpy(h + total - 4, "\r\n\r\n", 4);
    h[total] = '\0';
    return h;
}

START_TEST(head_size_limit)
{
    char *h = build_head(100, HTTP_HEAD_MAX);
    ck_assert_int_eq(parse_n(h, HTTP_HEAD_MAX), 1);
    ck_assert_uint_eq(req.head_len, HTTP_HEAD_MAX);
    ck_assert_int_eq(parse_n(h, HTTP_HEAD_MAX - 1), 0);
    free(h);
    h = build_head(100, HTTP_HEAD_MAX + 1);
    ck_assert_int_eq(parse_n(h, HTTP_HEAD_MAX - 1), 0);
    ck_assert_int_eq(parse_n(h, HTTP_HEAD_MAX), -431);
    ck_assert_int_eq(parse_n(h, HTTP_HEAD_MAX + 1), -431);
    /* A CR as the last byte allowed is not judged on bytes past the limit. */
    h[HTTP_HEAD_MAX - 1] = '\r';
    h[HTTP_HEAD_MAX] = 'x';
    ck_assert_int_eq(parse_n(h, HTTP_HEAD_MAX + 1), -431);
    free(h);
}
END_TEST

START_TEST(target_size_limit)
{
    char *h = build_head(HTTP_TARGET_MAX, HTTP_TARGET_MAX + 100);
    ck_assert_int_eq(parse(h), 1);
    /* "http://h" and the empty line's CRLF go; Host and Connection come. */
    ck_assert_uint_eq(req.origin_head_len, strlen(h) - strlen("http://h") - 2 +
                                               strlen("Host: h\r\nConnection: close\r\n\r\n"));
    free(h);
    h = build_head(HTTP_TARGET_MAX + 1, HTTP_TARGET_MAX + 101);
    ck_assert_int_eq(parse(h), -414);
    free(h);
}
END_TEST

START_TEST(free_is_idempotent)
{
    ck_assert_int_eq(parse("GET http://h/ HTTP/1.1\r\n\r\n"), 1);
    ck_assert_ptr_nonnull(req.origin_head);
    http_request_free(&req);
    ck_assert_ptr_null(req.origin_head);
    ck_assert_uint_eq(req.origin_head_len, 0);
    http_request_free(&req);
    /* A failed parse leaves nothing to free, even after a success. */
    ck_assert_int_eq(parse("GET http://h/ HTTP/1.1\r\n\r\n"), 1);
    struct http_request r2 = req;
    ck_assert_int_eq(http_request_parse("GET / HTTP/1.1\r\n\r\n", 18, &req), -405);
    ck_assert_ptr_null(req.origin_head);
    http_request_free(&r2);
}
END_TEST

START_TEST(response_format)
{
    char out[512];
    static const char want[] = "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
                               "Content-Length: 22\r\nConnection: close\r\n\r\n"
                               "denied by policy: x.y\n";
    size_t n = http_response_format(out, sizeof(out), 403, "denied by policy: x.y");
    ck_assert_str_eq(out, want);
    ck_assert_uint_eq(n, strlen(want));
    n = http_response_format(out, sizeof(out), 200, NULL);
    ck_assert_str_eq(out, "HTTP/1.1 200 Connection established\r\n\r\n");
    ck_assert_uint_eq(n, strlen(out));
    n = http_response_format(out, sizeof(out), 502, NULL);
    ck_assert_str_eq(out, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n"
                          "Content-Length: 12\r\nConnection: close\r\n\r\nBad Gateway\n");
    /* A parse error maps straight to its answer. */
    n = http_response_format(out, sizeof(out), 431, NULL);
    ck_assert_ptr_nonnull(strstr(out, "HTTP/1.1 431 Request Header Fields Too Large\r\n"));
    /* Guest-chosen text cannot add header lines. */
    n = http_response_format(out, sizeof(out), 403, "a\r\nSet-Cookie: x\x80");
    ck_assert_ptr_nonnull(strstr(out, "\r\n\r\na??Set-Cookie: x?\n"));
    ck_assert_uint_eq(n, strlen(out));
    n = http_response_format(out, sizeof(out), 42, NULL);
    ck_assert_ptr_nonnull(strstr(out, "HTTP/1.1 500 Internal Server Error\r\n"));
}
END_TEST

/* Cut to fit: the body shrinks, and Content-Length still matches it. */
START_TEST(response_truncation)
{
    char out[512], full[512];
    size_t whole = http_response_format(full, sizeof(full), 403, "0123456789");
    for (size_t cap = whole + 1; cap > 0; cap--) {
        size_t n = http_response_format(out, cap, 403, "0123456789");
        ck_assert_uint_lt(n, cap);
        if (n == 0) {
            /* Not even "\n" fits: the head with a 1-digit length, "\n", NUL. */
            ck_assert_uint_eq(cap, whole - 11);
            break;
        }
        ck_assert_uint_eq(strlen(out), n);
        const char *body = strstr(out, "\r\n\r\n") + 4;
        const char *cl = strstr(out, "Content-Length: ") + 16;
        ck_assert_uint_eq(strtoul(cl, NULL, 10), n - (size_t)(body - out));
        ck_assert_int_eq(strncmp(body, "0123456789", strlen(body) - 1), 0);
    }
    ck_assert_uint_eq(http_response_format(out, 10, 200, NULL), 0);
    ck_assert_str_eq(out, "");
}
END_TEST

Suite *http_request_suite(void)
{
    Suite *s = suite_create("http_request");
    TCase *tc = tcase_create("parse");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, connect_plain);
    tcase_add_test(tc, connect_headers_then_tunnel_bytes);
    tcase_add_test(tc, connect_ipv6);
    tcase_add_test(tc, get_absolute_uri);
    tcase_add_test(tc, default_port_and_empty_path);
    tcase_add_test(tc, trailing_dot);
    tcase_add_test(tc, forward_rewrites_headers);
    tcase_add_test(tc, incremental_feeding);
    tcase_add_loop_test(tc, hostile_heads, 0, (int)(sizeof(bad_heads) / sizeof(bad_heads[0])));
    tcase_add_test(tc, name_limits);
    tcase_add_test(tc, head_size_limit);
    tcase_add_test(tc, target_size_limit);
    tcase_add_test(tc, free_is_idempotent);
    suite_add_tcase(s, tc);
    tc = tcase_create("response");
    tcase_add_test(tc, response_format);
    tcase_add_test(tc, response_truncation);
    suite_add_tcase(s, tc);
    return s;
}
