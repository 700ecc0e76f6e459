/* Inbound forwards' two codecs.
 *
 * vmm/forward/forward_spec.c: `-p [IP:]HOSTPORT:GUESTPORT` and the API's
 * parts.  Hostile text: empty, bare colons, brackets that do not close or
 * hold nothing, signs, spaces, ports out of range, IPv6 without brackets
 * (refused, with the bracketed form in the message: "1::2:3:4" is itself
 * an address, so no split of it can be trusted to be what was meant),
 * strings of a MiB.  Every refusal names its part of the text, fits the
 * 200 bytes the CLI gives it, never runs past a small buffer, and leaves
 * `out` as it was; every spec taken reads back the same through
 * forward_addr_format.
 *
 * vmm/agent_client/forward_hello.c: the 8-byte hello and the 4-byte
 * reply (proto.h, "Inbound forwards").  Every byte of a hello changed
 * every way, port 0, each flag, every port; every reply value the
 * encoder can be given and every one the decoder can read. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "vmm/agent_client/forward_hello.h"
#include "vmm/forward/forward_spec.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define ERRLEN 200 /* what `airlock run -p` gives forward_spec_parse */
/* ck_assert for loops of a million: check records every assertion that
 * passes (a write, in CK_FORK=no mode), which took 15 s here; this one
 * costs nothing until it fails. */
#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond))                                                                              \
            ck_abort_msg(__VA_ARGS__);                                                            \
    } while (0)

/* ---- forward_spec_parse ---------------------------------------------------- */

static const struct spec_ok {
    const char *text, *ip;
    unsigned host, guest;
} spec_ok[] = {
    {"8080:80", "127.0.0.1", 8080, 80}, /* the default address: this machine only */
    {"0:80", "127.0.0.1", 0, 80},       /* any free port */
    {"0.0.0.0:8080:80", "0.0.0.0", 8080, 80},
    {"[::1]:0:80", "::1", 0, 80},
    {"[::]:1:65535", "::", 1, 65535},
    {"[fe80::1]:80:80", "fe80::1", 80, 80},
    {"[::ffff:1.2.3.4]:1:2", "::ffff:1.2.3.4", 1, 2},
    {"[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:1:2",
     "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", 1, 2}, /* 45 bytes, the longest */
    {"65535:65535", "127.0.0.1", 65535, 65535},
    {"255.255.255.255:1:1", "255.255.255.255", 1, 1},
    {"00080:080", "127.0.0.1", 80, 80}, /* leading zeros are decimal, at most 5 digits */
    {"[1.2.3.4]:80:80", "1.2.3.4", 80, 80}, /* brackets around IPv4: harmless, taken */
};

START_TEST(spec_parse_ok)
{
    for (size_t i = 0; i < NELEM(spec_ok); i++) {
        const struct spec_ok *c = &spec_ok[i];
        struct forward_spec s;
        char err[ERRLEN] = "";
        memset(&s, 0xa5, sizeof(s));
        int rc = forward_spec_parse(c->text, &s, err, sizeof(err));
        ck_assert_msg(rc == 0, "'%s' refused: %s", c->text, err);
        ck_assert_str_eq(s.host_ip, c->ip);
        ck_assert_uint_eq(s.host_port, c->host);
        ck_assert_uint_eq(s.guest_port, c->guest);
    }
}
END_TEST

static const struct spec_bad {
    const char *text, *needle; /* the message must contain needle */
} spec_bad[] = {
    {"", "no ':' between the ports"},
    {"80", "no ':' between the ports"},
    {":", "host port ''"},
    {"::", "no IP before the first ':'"},
    {":::", "no IP before the first ':'"},
    {":80", "host port ''"},
    {"80:", "guest port ''"},
    {":80:80", "no IP before the first ':'"},
    {"[", "'[' without its ']'"},
    {"[::1", "'[' without its ']'"},
    {"[::1:80:80", "'[' without its ']'"},
    {"[::1]", "no ports after ']'"},
    {"[::1]:", "no ':' between the ports"},
    {"[::1]:80", "no ':' between the ports"},
    {"[::1]x80:80", "'x80:80' after ']'"},
    {"[::1]80:80", "'80:80' after ']'"},
    {"[]:80:80", "'[]' holds no address"},
    {"][:1:2", "'][' is not an IP address"},
    {"[::1%lo]:80:80", "'::1%lo' is not an IP address"}, /* no scope ids */
    {"[::1]:1:2]", "guest port '2]'"},
    {"[::1]:80:80:80", "host port '80:80'"},
    {"a:b:c", "host port 'b'"},
    {"a:80:80", "'a' is not an IP address"},
    {"localhost:80:80", "'localhost' is not an IP address"}, /* numeric only */
    {"1.2.3:80:80", "'1.2.3' is not an IP address"},
    {"1.2.3.4.5:1:2", "'1.2.3.4.5' is not an IP address"},
    {"01.2.3.4:1:2", "'01.2.3.4' is not an IP address"}, /* octal? no */
    {"1.2.3.4 :80:80", "'1.2.3.4 ' is not an IP address"},
    {" 1.2.3.4:80:80", "' 1.2.3.4' is not an IP address"},
    {"1.2.3.4:80:80:80", "host port '80:80'"},
    {"1.2.3.4::80", "host port ''"},
    {"1.2.3.4:80:", "guest port ''"},
    {"1.2.3.4:65536:1", "host port '65536'"},
    {"1.2.3.4:1:65536", "guest port '65536'"},
    {"99999:80", "host port '99999'"},
    {"000080:80", "host port '000080'"}, /* six digits */
    {"80:99999", "guest port '99999'"},
    {"0:0", "guest port '0'"},
    {"80:0", "guest port '0'"},
    {"80:00000", "guest port '00000'"},
    {"-1:80", "host port '-1'"},
    {"80:-1", "guest port '-1'"},
    {"+80:80", "host port '+80'"},
    {"80:+80", "guest port '+80'"},
    {" 80:80", "host port ' 80'"},
    {"80 :80", "host port '80 '"},
    {"80: 80", "guest port ' 80'"},
    {"80:80 ", "guest port '80 '"},
    {"80:80\n", "guest port '80\n'"},
    {"0x50:80", "host port '0x50'"},
    {"80:8e1", "guest port '8e1'"},
    {"80.0:80", "host port '80.0'"},
    /* IPv6 without brackets: refused, and the message shows the way. */
    {"::1:80:80", "an IPv6 address goes in brackets: [::1]:80:80"},
    {"fe80::1:80:80", "an IPv6 address goes in brackets: [fe80::1]:80:80"},
    {"1::2:3:4", "an IPv6 address goes in brackets: [1::2]:3:4"},
    {"::ffff:1.2.3.4:8080:80", "[::ffff:1.2.3.4]:8080:80"},
    {"::1:80", "no IP before the first ':'"},
};

/* One refusal: -EINVAL, the needle in a message under ERRLEN, `out` as it
 * was (parse writes it only on success). */
static void expect_refused(const char *text, const char *needle)
{
    struct forward_spec s, before;
    memset(&s, 0x5a, sizeof(s));
    before = s;
    char err[ERRLEN + 1];
    memset(err, 'Z', sizeof(err));
    int rc = forward_spec_parse(text, &s, err, ERRLEN);
    CHECK(rc == -EINVAL, "'%.40s' gave %d, not -EINVAL", text, rc);
    CHECK(err[ERRLEN] == 'Z', "'%.40s': the message ran past its buffer", text);
    CHECK(memchr(err, 0, ERRLEN) != NULL, "'%.40s': the message has no NUL", text);
    CHECK(err[0] != 0, "'%.40s': no message", text);
    if (needle)
        CHECK(strstr(err, needle) != NULL, "'%.40s': \"%s\" lacks \"%s\"", text, err,
                      needle);
    CHECK(memcmp(&s, &before, sizeof(s)) == 0, "'%.40s': out written on failure", text);
}

START_TEST(spec_parse_refused)
{
    for (size_t i = 0; i < NELEM(spec_bad); i++)
        expect_refused(spec_bad[i].text, spec_bad[i].needle);
}
END_TEST

/* Strings of a MiB, in each part: refused with a message cut short. */
START_TEST(spec_parse_huge)
{
    size_t n = 1 << 20;
    char *s = malloc(n + 64);
    ck_assert_ptr_nonnull(s);

    memset(s, '1', n);
    strcpy(s + n, ":80"); /* a host port of a million digits */
    expect_refused(s, "host port '1111111111111111'");

    strcpy(s + n, "");
    memcpy(s, "80:", 3); /* a guest port of a million digits */
    expect_refused(s, "guest port '1111111111111111'");

    s[0] = '[';
    memset(s + 1, 'a', n - 1);
    strcpy(s + n, "]:1:2"); /* an IPv6 address of a MiB */
    expect_refused(s, "is not an IP address");

    memset(s, 'a', n);
    strcpy(s + n, ":1:2"); /* an IPv4 one */
    expect_refused(s, "is not an IP address");

    memset(s, ':', n);
    s[n] = 0; /* a MiB of colons */
    expect_refused(s, NULL);

    memset(s, '[', n); /* of brackets */
    expect_refused(s, "without its ']'");

    for (size_t i = 0; i < n; i++) /* "1::1::1::..." */
        s[i] = i % 3 == 0 ? '1' : ':';
    expect_refused(s, NULL);

    /* 46 bytes in brackets: one more than any address. */
    expect_refused("[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.2555]:1:2", "is not an IP address");
    free(s);
}
END_TEST

/* Small buffers: the message is cut, NUL-terminated, never overrun. */
START_TEST(spec_parse_short_err)
{
    static const char *const texts[] = {"", "a:b:c", "[::1", "::1:80:80", "localhost:1:2",
                                        "80:0"};
    for (size_t i = 0; i < NELEM(texts); i++)
        for (size_t len = 1; len <= 12; len++) {
            char err[16];
            memset(err, 'Z', sizeof(err));
            struct forward_spec s;
            ck_assert_int_eq(forward_spec_parse(texts[i], &s, err, len), -EINVAL);
            ck_assert_uint_eq(strlen(err), len - 1);
            ck_assert_int_eq(err[len], 'Z');
        }
}
END_TEST

/* Every HOSTPORT and GUESTPORT from -2 to 70000: taken exactly when in
 * range, as that number. */
START_TEST(spec_parse_every_port)
{
    for (long p = -2; p <= 70000; p++) {
        char text[64], err[ERRLEN];
        struct forward_spec s;
        snprintf(text, sizeof(text), "%ld:%ld", p, p);
        int rc = forward_spec_parse(text, &s, err, sizeof(err));
        if (p >= 1 && p <= 65535) {
            CHECK(rc == 0, "'%s': %s", text, err);
            CHECK(s.host_port == p && s.guest_port == p, "'%s' gave %u:%u", text, s.host_port,
                  s.guest_port);
        } else {
            CHECK(rc == -EINVAL, "'%s' taken", text);
        }
        snprintf(text, sizeof(text), "[::1]:%ld:80", p);
        rc = forward_spec_parse(text, &s, err, sizeof(err));
        CHECK((rc == 0) == (p >= 0 && p <= 65535), "'%s': %d", text, rc);
    }
}
END_TEST

/* A taken spec, formatted back ("IP:PORT" as forward_addr_format writes
 * it, then ":GUEST"), is the same spec. */
static void expect_round_trip(const struct forward_spec *s, const char *from)
{
    char addr[80], text[100], err[ERRLEN];
    forward_addr_format(s->host_ip, s->host_port, addr, sizeof(addr));
    snprintf(text, sizeof(text), "%s:%u", addr, s->guest_port);
    struct forward_spec t;
    int rc = forward_spec_parse(text, &t, err, sizeof(err));
    CHECK(rc == 0, "'%s' (from '%s') refused: %s", text, from, err);
    CHECK(strcmp(t.host_ip, s->host_ip) == 0 && t.host_port == s->host_port &&
              t.guest_port == s->guest_port,
          "'%s' (from '%s') read back as %s %u %u", text, from, t.host_ip, t.host_port,
          t.guest_port);
}

START_TEST(spec_round_trip)
{
    for (size_t i = 0; i < NELEM(spec_ok); i++) {
        struct forward_spec s;
        char err[ERRLEN];
        ck_assert_int_eq(forward_spec_parse(spec_ok[i].text, &s, err, sizeof(err)), 0);
        expect_round_trip(&s, spec_ok[i].text);
    }
}
END_TEST

/* 200,000 random strings over the syntax's own characters (and a few
 * more): each is refused as expect_refused says, or taken as a spec that
 * is valid and reads back the same. */
START_TEST(spec_parse_random)
{
    static const char alpha[] = "0123456789:::[]..af +-";
    uint32_t seed = 12345;
    for (int round = 0; round < 200000; round++) {
        char text[32];
        seed = seed * 1103515245u + 12345u;
        size_t len = (seed >> 16) % 28;
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            text[i] = alpha[(seed >> 16) % (sizeof(alpha) - 1)];
        }
        text[len] = 0;
        struct forward_spec s;
        char err[ERRLEN];
        err[0] = 0;
        if (forward_spec_parse(text, &s, err, sizeof(err))) {
            expect_refused(text, NULL);
            continue;
        }
        unsigned char raw[16];
        CHECK(inet_pton(AF_INET, s.host_ip, raw) == 1 ||
                          inet_pton(AF_INET6, s.host_ip, raw) == 1,
                      "'%s' gave the address '%s'", text, s.host_ip);
        CHECK(s.guest_port >= 1, "'%s' gave guest port 0", text);
        expect_round_trip(&s, text);
    }
}
END_TEST

/* ---- forward_spec_make ------------------------------------------------------ */

START_TEST(spec_make)
{
    struct forward_spec s;
    char err[ERRLEN];
    ck_assert_int_eq(forward_spec_make(NULL, 8080, 80, &s, err, sizeof(err)), 0);
    ck_assert_str_eq(s.host_ip, "127.0.0.1");
    ck_assert_int_eq(forward_spec_make("", 0, 65535, &s, err, sizeof(err)), 0);
    ck_assert_str_eq(s.host_ip, "127.0.0.1");
    ck_assert_uint_eq(s.host_port, 0);
    ck_assert_uint_eq(s.guest_port, 65535);
    ck_assert_int_eq(forward_spec_make("::1", 65535, 1, &s, err, sizeof(err)), 0);
    ck_assert_str_eq(s.host_ip, "::1");
    ck_assert_int_eq(forward_spec_make("0.0.0.0", 1, 1, &s, err, sizeof(err)), 0);

    static const struct {
        const char *ip;
        long host, guest;
        const char *needle;
    } bad[] = {
        {NULL, -1, 80, "host port -1 is not 0..65535"},
        {NULL, 65536, 80, "host port 65536"},
        {NULL, LONG_MAX, 80, "host port 9223372036854775807"},
        {NULL, LONG_MIN, 80, "host port -9223372036854775808"},
        {NULL, 80, 0, "guest port 0 is not 1..65535"},
        {NULL, 80, -1, "guest port -1"},
        {NULL, 80, 65536, "guest port 65536"},
        {NULL, 80, LONG_MAX, "guest port 9223372036854775807"},
        {"localhost", 80, 80, "'localhost' is not an IP address"},
        {"[::1]", 80, 80, "'[::1]' is not an IP address"}, /* no brackets here */
        {"fe80::1%eth0", 80, 80, "'fe80::1%eth0'"},
        {"1.2.3.4 ", 80, 80, "'1.2.3.4 '"},
        {" ", 80, 80, "' ' is not an IP address"},
        {"ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.2555", 80, 80, "is not an IP address"},
        /* the address is judged first */
        {"nope", -1, 0, "'nope' is not an IP address"},
    };
    for (size_t i = 0; i < NELEM(bad); i++) {
        memset(&s, 0x5a, sizeof(s));
        struct forward_spec before = s;
        ck_assert_int_eq(forward_spec_make(bad[i].ip, bad[i].host, bad[i].guest, &s, err,
                                           sizeof(err)),
                         -EINVAL);
        ck_assert_msg(strstr(err, bad[i].needle), "\"%s\" lacks \"%s\"", err, bad[i].needle);
        ck_assert(memcmp(&s, &before, sizeof(s)) == 0);
    }

    /* An address of a MiB: refused, the message cut to 64 of its bytes. */
    size_t n = 1 << 20;
    char *ip = malloc(n + 1);
    ck_assert_ptr_nonnull(ip);
    memset(ip, '1', n);
    ip[n] = 0;
    ck_assert_int_eq(forward_spec_make(ip, 80, 80, &s, err, sizeof(err)), -EINVAL);
    ck_assert_uint_lt(strlen(err), 100);
    ck_assert_ptr_nonnull(strstr(err, "is not an IP address"));
    free(ip);
}
END_TEST

/* ---- the hello ---------------------------------------------------------------- */

static const uint16_t some_ports[] = {1, 2, 80, 255, 256, 0x0100, 0x8000, 0xff00, 8080, 65534,
                                      65535};

START_TEST(hello_bytes)
{
    uint8_t h[AGENT_FWD_HELLO_SIZE];
    ck_assert_int_eq(agent_fwd_hello_encode(h, 0x1234), 0);
    /* "AFWD", the port little-endian, no flags. */
    static const uint8_t want[] = {'A', 'F', 'W', 'D', 0x34, 0x12, 0, 0};
    ck_assert_mem_eq(h, want, sizeof(want));
    uint16_t port = 0;
    ck_assert_int_eq(agent_fwd_hello_decode(h, &port), 0);
    ck_assert_uint_eq(port, 0x1234);

    /* Port 0 is not encoded: nothing written. */
    memset(h, 0xee, sizeof(h));
    ck_assert_int_eq(agent_fwd_hello_encode(h, 0), -EINVAL);
    for (size_t i = 0; i < sizeof(h); i++)
        ck_assert_uint_eq(h[i], 0xee);

    /* ...and not decoded from a hello that says it. */
    static const uint8_t zero[] = {'A', 'F', 'W', 'D', 0, 0, 0, 0};
    port = 77;
    ck_assert_int_eq(agent_fwd_hello_decode(zero, &port), -EPROTO);
    ck_assert_uint_eq(port, 77);

    /* The magic the other way round, and the egress proxy's first bytes. */
    static const uint8_t be[] = {'D', 'W', 'F', 'A', 80, 0, 0, 0};
    ck_assert_int_eq(agent_fwd_hello_decode(be, &port), -EPROTO);
    ck_assert_int_eq(agent_fwd_hello_decode((const uint8_t *)"CONNECT ", &port), -EPROTO);
    static const uint8_t none[AGENT_FWD_HELLO_SIZE] = {0};
    ck_assert_int_eq(agent_fwd_hello_decode(none, &port), -EPROTO);
    ck_assert_uint_eq(port, 77);
}
END_TEST

START_TEST(hello_every_port)
{
    for (uint32_t p = 1; p <= 65535; p++) {
        uint8_t h[AGENT_FWD_HELLO_SIZE];
        uint16_t got = 0;
        CHECK(agent_fwd_hello_encode(h, (uint16_t)p) == 0, "port %u not encoded", p);
        CHECK(agent_fwd_hello_decode(h, &got) == 0 && got == p, "port %u read as %u", p, got);
    }
}
END_TEST

/* Every byte of a good hello XORed with every value 1..255: a changed
 * magic or flags byte is refused (port untouched); a changed port byte
 * is another port, refused only when that is 0. */
START_TEST(hello_every_byte_flipped)
{
    for (size_t k = 0; k < NELEM(some_ports); k++) {
        uint16_t p = some_ports[k];
        uint8_t good[AGENT_FWD_HELLO_SIZE];
        ck_assert_int_eq(agent_fwd_hello_encode(good, p), 0);
        for (size_t i = 0; i < AGENT_FWD_HELLO_SIZE; i++)
            for (unsigned x = 1; x <= 255; x++) {
                uint8_t h[AGENT_FWD_HELLO_SIZE];
                memcpy(h, good, sizeof(h));
                h[i] ^= (uint8_t)x;
                uint16_t got = 0xbeef;
                int rc = agent_fwd_hello_decode(h, &got);
                if (i == 4 || i == 5) {
                    uint16_t want = (uint16_t)(p ^ (x << (8 * (i - 4))));
                    if (want) {
                        CHECK(rc == 0 && got == want, "port %u, byte %zu ^ %#x: %d, port %u",
                              p, i, x, rc, got);
                        continue;
                    }
                }
                CHECK(rc == -EPROTO, "port %u, byte %zu ^ %#x: %d", p, i, x, rc);
                CHECK(got == 0xbeef, "port %u, byte %zu ^ %#x: port written", p, i, x);
            }
    }
}
END_TEST

/* Every flags value but 0 is refused, whatever the port. */
START_TEST(hello_flags)
{
    for (size_t k = 0; k < NELEM(some_ports); k++) {
        uint8_t h[AGENT_FWD_HELLO_SIZE];
        ck_assert_int_eq(agent_fwd_hello_encode(h, some_ports[k]), 0);
        for (uint32_t f = 1; f <= 0xffff; f++) {
            h[6] = (uint8_t)f;
            h[7] = (uint8_t)(f >> 8);
            uint16_t got = 0;
            CHECK(agent_fwd_hello_decode(h, &got) == -EPROTO && got == 0,
                  "port %u with flags %#x taken", some_ports[k], f);
        }
    }
}
END_TEST

/* ---- the reply ------------------------------------------------------------------ */

static uint32_t reply_value(int err)
{
    uint8_t r[AGENT_FWD_REPLY_SIZE];
    memset(r, 0xee, sizeof(r));
    agent_fwd_reply_encode(r, err);
    return (uint32_t)r[0] | (uint32_t)r[1] << 8 | (uint32_t)r[2] << 16 | (uint32_t)r[3] << 24;
}

START_TEST(reply_codec)
{
    /* 0 and each errno 1..4095 go as themselves and come back. */
    for (int e = 0; e < 4096; e++) {
        uint8_t r[AGENT_FWD_REPLY_SIZE];
        agent_fwd_reply_encode(r, e);
        CHECK(reply_value(e) == (uint32_t)e && agent_fwd_reply_decode(r) == e,
              "errno %d went as %#x, came back as %d", e, reply_value(e),
              agent_fwd_reply_decode(r));
    }
    static const uint8_t refused[] = {ECONNREFUSED, 0, 0, 0};
    uint8_t r[AGENT_FWD_REPLY_SIZE];
    agent_fwd_reply_encode(r, ECONNREFUSED);
    ck_assert_mem_eq(r, refused, sizeof(r));

    /* What no errno is (negative, 4096 and up) goes as EIO: the host
     * learns the connect failed, never a value it would refuse. */
    static const int odd[] = {-1, -ECONNREFUSED, -4095, INT_MIN, 4096, 4097, 65536, INT_MAX};
    for (size_t i = 0; i < NELEM(odd); i++) {
        ck_assert_uint_eq(reply_value(odd[i]), EIO);
        agent_fwd_reply_encode(r, odd[i]);
        ck_assert_int_eq(agent_fwd_reply_decode(r), EIO);
    }
}
END_TEST

/* The decoder: a value below 4096 is itself, anything else -EPROTO;
 * checked at the edges, at every single-bit and single-byte change of a
 * 0 and an ECONNREFUSED reply, and at a million spread values. */
static void expect_reply(uint32_t v)
{
    uint8_t r[AGENT_FWD_REPLY_SIZE] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                                       (uint8_t)(v >> 24)};
    int got = agent_fwd_reply_decode(r);
    if (v < 4096)
        CHECK(got == (int)v, "%#x decoded as %d", v, got);
    else
        CHECK(got == -EPROTO, "%#x decoded as %d, not -EPROTO", v, got);
}

START_TEST(reply_decode_any)
{
    static const uint32_t edges[] = {0, 1, 4094, 4095, 4096, 4097, 0xffff, 0x10000, 0x7fffffff,
                                     0x80000000, 0x80000001, 0xfffff001, 0xffffffff};
    for (size_t i = 0; i < NELEM(edges); i++)
        expect_reply(edges[i]);
    static const uint32_t base[] = {0, ECONNREFUSED};
    for (size_t b = 0; b < NELEM(base); b++) {
        for (unsigned bit = 0; bit < 32; bit++)
            expect_reply(base[b] ^ (1u << bit));
        for (unsigned i = 0; i < 4; i++)
            for (unsigned x = 1; x <= 255; x++)
                expect_reply(base[b] ^ (x << (8 * i)));
    }
    for (uint64_t v = 0; v <= 0xffffffffu; v += 4093)
        expect_reply((uint32_t)v);
}
END_TEST

Suite *forward_suite(void)
{
    Suite *s = suite_create("forward");
    TCase *spec = tcase_create("forward_spec");
    tcase_add_test(spec, spec_parse_ok);
    tcase_add_test(spec, spec_parse_refused);
    tcase_add_test(spec, spec_parse_huge);
    tcase_add_test(spec, spec_parse_short_err);
    tcase_add_test(spec, spec_parse_every_port);
    tcase_add_test(spec, spec_round_trip);
    tcase_add_test(spec, spec_parse_random);
    tcase_add_test(spec, spec_make);
    suite_add_tcase(s, spec);
    TCase *hello = tcase_create("forward_hello");
    tcase_add_test(hello, hello_bytes);
    tcase_add_test(hello, hello_every_port);
    tcase_add_test(hello, hello_every_byte_flipped);
    tcase_add_test(hello, hello_flags);
    tcase_add_test(hello, reply_codec);
    tcase_add_test(hello, reply_decode_any);
    suite_add_tcase(s, hello);
    return s;
}
