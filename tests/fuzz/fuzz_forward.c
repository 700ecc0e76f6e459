/* libFuzzer target: inbound forwards (proto.h, "Inbound forwards"), both
 * inputs a stranger controls.
 *
 * The guest end of the handshake: guest/agent/forward.c itself, the
 * agent's service, driven as the relay (guest/agent/relay.c) drives it.
 * Its accepted vsock is one end of a Unix socketpair; the host's bytes
 * go into the other end cut into chunks of 0 to 11 bytes, and after each
 * the service's hello step runs, as the relay's poll loop runs it when
 * the socket is readable.  The relay's own functions are stubbed here:
 * relay_connect records the address and ends as the input says (an
 * error at once, or a connect under way that then fails or succeeds).
 * What must hold, whatever the bytes and the cuts:
 *   - no more than the 8 bytes of the hello are read: every byte after
 *     it stays in the socket for the relay to carry;
 *   - fewer than 8 bytes: nothing is dialled, nothing answered;
 *   - 8 bytes that agent_fwd_hello_decode refuses: closed, unanswered,
 *     nothing dialled;
 *   - a good hello: one connect, to 127.0.0.1 and the hello's port, never
 *     anything else; a failed connect is answered with exactly its errno
 *     (4 bytes) and closed; a connect that succeeds puts the 0 answer
 *     first in the stream toward the host.
 *
 * `-p`'s text: forward_spec_parse against a reference written from the
 * grammar ([IP:]HOSTPORT:GUESTPORT, an IPv6 address only in brackets,
 * ports of 1-5 decimal digits), and every spec taken must read back the
 * same through forward_addr_format; a refusal has a message that fits
 * and leaves `out` alone.  forward_spec_make gets the same address and
 * any two ports.
 *
 *   byte 0 bit 0 = 1: the handshake:
 *     byte 1  bits 0-1: the connect: 0 fails at once, 1 fails later,
 *             2-3 succeeds; bit 2: the host half-closes after its bytes
 *     byte 2  the errno of a failed connect (1..256)
 *     byte 3  the seed of the cuts
 *     the rest: what the host sends
 *   byte 0 bit 0 = 0: `-p`: the rest up to a NUL is the text; with bit 1
 *     also forward_spec_make(text, host, guest) with the two ports from
 *     the bytes after the NUL (int32 each, little-endian) */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest/agent/relay.h"
#include "vmm/agent_client/forward_hello.h"
#include "vmm/forward/forward_spec.h"

/* ---- the relay, stubbed ------------------------------------------------ */

static struct {
    int calls;
    struct sockaddr_in addr;
    int mode, err;   /* from the input */
    int fake_fd;     /* what a connect under way returns */
    int closed;      /* relay_close calls */
} relay;

double relay_now(void)
{
    return 1000.0;
}

void relay_log(const char *what, int err)
{
    (void)what;
    (void)err;
}

void relay_close(struct relay_pair *p)
{
    assert(p->afd >= 0);
    close(p->afd);
    if (p->bfd >= 0)
        close(p->bfd);
    free(p->up.buf);
    free(p->down.buf);
    memset(p, 0, sizeof(*p));
    p->afd = p->bfd = -1;
    relay.closed++;
}

int relay_connect(int family, const void *addr, unsigned addrlen)
{
    relay.calls++;
    assert(family == AF_INET && addrlen == sizeof(struct sockaddr_in));
    memcpy(&relay.addr, addr, sizeof(relay.addr));
    if (relay.mode == 0)
        return -relay.err;
    relay.fake_fd = eventfd(0, EFD_CLOEXEC);
    assert(relay.fake_fd >= 0);
    return relay.fake_fd;
}

/* ---- the handshake ------------------------------------------------------- */

/* Everything the host end can read now, up to cap; -1 if more than cap.
 * A Unix socket closed with bytes unread in it resets its peer
 * (ECONNRESET once the peer's queue is empty, as TCP's RST would): an
 * end, here, like EOF; what was queued before it is read first. */
static ssize_t host_reads(int fd, uint8_t *buf, size_t cap, int *eof)
{
    size_t got = 0;
    *eof = 0;
    for (;;) {
        uint8_t b[64];
        ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno == ECONNRESET)) {
            *eof = 1;
            return (ssize_t)got;
        }
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? (ssize_t)got : -1;
        if (got + (size_t)n > cap)
            return -1;
        memcpy(buf + got, b, (size_t)n);
        got += (size_t)n;
    }
}

static void handshake(const uint8_t *data, size_t size)
{
    if (size < 4)
        return;
    memset(&relay, 0, sizeof(relay));
    relay.mode = data[1] & 3;
    relay.err = 1 + data[2];
    relay.fake_fd = -1;
    int half_close = data[1] & 4;
    uint32_t seed = data[3];
    const uint8_t *in = data + 4;
    size_t len = size - 4;

    int sv[2];
    assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    /* What the service's accept gave it: non-blocking, as accept4 makes it. */
    assert(fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0);
    struct relay_pair p;
    memset(&p, 0, sizeof(p));
    p.afd = sv[0];
    p.bfd = -1;
    p.svc = &relay_forward;
    p.up.buf = malloc(RELAY_BUF);
    p.down.buf = malloc(RELAY_BUF);
    assert(p.up.buf && p.down.buf);
    relay_forward.accepted(&p);
    assert(p.stage == RELAY_HELLO && p.deadline > 0);

    size_t fed = 0;
    while (p.afd >= 0 && p.stage == RELAY_HELLO && fed < len) {
        seed = seed * 1103515245u + 12345u;
        size_t piece = (seed >> 16) % 12; /* 0: a call with nothing new */
        if (piece > len - fed)
            piece = len - fed;
        if (piece) {
            ssize_t n = send(sv[1], in + fed, piece, MSG_NOSIGNAL | MSG_DONTWAIT);
            assert(n == (ssize_t)piece); /* a few bytes: the buffer has room */
            fed += piece;
        }
        relay_forward.hello(&p);
        assert(p.afd < 0 || p.hello_len <= AGENT_FWD_HELLO_SIZE);
    }
    if (half_close && p.afd >= 0 && p.stage == RELAY_HELLO) {
        shutdown(sv[1], SHUT_WR);
        relay_forward.hello(&p); /* EOF before a whole hello: closed */
        assert(p.afd < 0);
    }

    uint16_t port = 0;
    int good = fed >= AGENT_FWD_HELLO_SIZE && agent_fwd_hello_decode(in, &port) == 0;
    uint8_t back[16];
    int eof;
    ssize_t nback;
    if (fed < AGENT_FWD_HELLO_SIZE) {
        /* Not a whole hello: waiting still (or closed at the EOF). */
        assert(relay.calls == 0);
        assert(p.afd < 0 ? half_close : p.stage == RELAY_HELLO && p.hello_len == fed);
        nback = host_reads(sv[1], back, sizeof(back), &eof);
        assert(nback == 0 && eof == (p.afd < 0));
    } else if (!good) {
        /* Not a hello of ours: closed unanswered, nothing dialled. */
        assert(relay.calls == 0 && p.afd < 0 && relay.closed == 1);
        nback = host_reads(sv[1], back, sizeof(back), &eof);
        assert(nback == 0 && eof);
    } else {
        /* One connect, to 127.0.0.1:port and nowhere else. */
        assert(relay.calls == 1);
        assert(relay.addr.sin_family == AF_INET);
        assert(relay.addr.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
        assert(ntohs(relay.addr.sin_port) == port);
        uint8_t want[AGENT_FWD_REPLY_SIZE];
        if (relay.mode == 0) {
            /* Refused at once: exactly its errno, then the close. */
            assert(p.afd < 0);
            agent_fwd_reply_encode(want, relay.err);
            nback = host_reads(sv[1], back, sizeof(back), &eof);
            assert(nback == AGENT_FWD_REPLY_SIZE && eof);
            assert(memcmp(back, want, sizeof(want)) == 0);
            assert(agent_fwd_reply_decode(back) == relay.err);
        } else {
            assert(p.afd >= 0 && p.stage == RELAY_CONNECTING && p.bfd == relay.fake_fd);
            assert(p.deadline == 0);
            /* Nothing answered yet, nothing past the hello read. */
            nback = host_reads(sv[1], back, sizeof(back), &eof);
            assert(nback == 0 && !eof);
            /* As step() does once the connect is over. */
            int err = relay.mode == 1 ? relay.err : 0;
            if (!err)
                p.stage = RELAY_OPEN;
            relay_forward.connected(&p, err);
            agent_fwd_reply_encode(want, err);
            if (err) {
                assert(p.afd < 0);
                nback = host_reads(sv[1], back, sizeof(back), &eof);
                assert(nback == AGENT_FWD_REPLY_SIZE && eof);
                assert(memcmp(back, want, sizeof(want)) == 0);
                assert(agent_fwd_reply_decode(back) == err);
            } else {
                /* The 0 answer leads the stream toward the host. */
                assert(p.afd >= 0 && p.stage == RELAY_OPEN);
                assert(p.down.off == 0 && p.down.len == AGENT_FWD_REPLY_SIZE);
                assert(memcmp(p.down.buf, want, sizeof(want)) == 0);
                assert(agent_fwd_reply_decode(p.down.buf) == 0);
                assert(p.up.len == 0 && !p.up.eof);
            }
        }
        /* Whatever followed the hello was left for the relay. */
        if (p.afd >= 0) {
            size_t rest = fed - AGENT_FWD_HELLO_SIZE;
            uint8_t *got = malloc(rest + 1);
            assert(got);
            ssize_t n = recv(p.afd, got, rest + 1, MSG_DONTWAIT);
            if (rest == 0)
                assert(n < 0 && errno == EAGAIN);
            else
                assert(n == (ssize_t)rest && memcmp(got, in + AGENT_FWD_HELLO_SIZE, rest) == 0);
            free(got);
        }
    }
    if (p.afd >= 0)
        relay_close(&p);
    close(sv[1]);
}

/* ---- the -p syntax ----------------------------------------------------- */

static int digits(const char *s, size_t n, long *v)
{
    if (n < 1 || n > 5)
        return 0;
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        *v = *v * 10 + (s[i] - '0');
    }
    return 1;
}

/* The grammar, read from the right: GUESTPORT after the last ':',
 * HOSTPORT before it, then nothing, or ':' and an address with no ':'
 * of its own, or ':' and "[ADDRESS]". */
static int ref_parse(const char *t, char *ip, long *hp, long *gp)
{
    const char *g = strrchr(t, ':');
    if (!g || !digits(g + 1, strlen(g + 1), gp) || *gp < 1 || *gp > 65535)
        return 0;
    const char *h = g;
    while (h > t && h[-1] != ':')
        h--;
    if (!digits(h, (size_t)(g - h), hp) || *hp > 65535)
        return 0;
    if (h == t) {
        strcpy(ip, FORWARD_DEFAULT_IP);
        return 1;
    }
    const char *a = t;
    size_t alen = (size_t)(h - 1 - t);
    if (t[0] == '[') {
        if (alen < 2 || t[alen - 1] != ']')
            return 0;
        a++;
        alen -= 2;
        if (memchr(a, ']', alen))
            return 0;
    } else if (memchr(a, ':', alen)) {
        return 0; /* IPv6 without brackets */
    }
    if (alen == 0 || alen >= FORWARD_IP_MAX)
        return 0;
    memcpy(ip, a, alen);
    ip[alen] = 0;
    unsigned char raw[16];
    return inet_pton(AF_INET, ip, raw) == 1 || inet_pton(AF_INET6, ip, raw) == 1;
}

static void spec(const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    int with_make = data[0] & 2;
    const uint8_t *in = data + 1;
    size_t len = size - 1;
    const uint8_t *nul = memchr(in, 0, len);
    size_t tlen = nul ? (size_t)(nul - in) : len;
    char *text = malloc(tlen + 1); /* exactly its size, for ASan */
    assert(text);
    memcpy(text, in, tlen);
    text[tlen] = 0;

    struct forward_spec s, before;
    memset(&s, 0x5a, sizeof(s));
    before = s;
    char err[201];
    memset(err, 'Z', sizeof(err));
    int rc = forward_spec_parse(text, &s, err, 200);
    char ip[FORWARD_IP_MAX];
    long hp, gp;
    int ref = ref_parse(text, ip, &hp, &gp);
    assert(err[200] == 'Z');
    if (rc) {
        assert(rc == -EINVAL && !ref);
        assert(memchr(err, 0, 200) && err[0]);
        assert(memcmp(&s, &before, sizeof(s)) == 0);
    } else {
        assert(ref);
        assert(strcmp(s.host_ip, ip) == 0 && s.host_port == hp && s.guest_port == gp);
        /* Read back the same through the address as airlock prints it. */
        char addr[80], again[100];
        forward_addr_format(s.host_ip, s.host_port, addr, sizeof(addr));
        snprintf(again, sizeof(again), "%s:%u", addr, s.guest_port);
        struct forward_spec t;
        assert(forward_spec_parse(again, &t, err, 200) == 0);
        assert(memcmp(&s, &t, sizeof(s)) == 0);
        /* And the API's way to the same spec. */
        assert(forward_spec_make(s.host_ip, s.host_port, s.guest_port, &t, err, 200) == 0);
        assert(memcmp(&s, &t, sizeof(s)) == 0);
    }

    if (with_make && nul && len - tlen - 1 >= 8) {
        const uint8_t *q = nul + 1;
        int32_t h = (int32_t)(q[0] | q[1] << 8 | q[2] << 16 | (uint32_t)q[3] << 24);
        int32_t g = (int32_t)(q[4] | q[5] << 8 | q[6] << 16 | (uint32_t)q[7] << 24);
        memset(&s, 0x5a, sizeof(s));
        rc = forward_spec_make(text, h, g, &s, err, 200);
        unsigned char raw[16];
        const char *want = *text ? text : FORWARD_DEFAULT_IP;
        int ok = strlen(want) < FORWARD_IP_MAX &&
                 (inet_pton(AF_INET, want, raw) == 1 || inet_pton(AF_INET6, want, raw) == 1) &&
                 h >= 0 && h <= 65535 && g >= 1 && g <= 65535;
        assert((rc == 0) == ok);
        if (ok)
            assert(strcmp(s.host_ip, want) == 0 && s.host_port == h && s.guest_port == g);
        else
            assert(memcmp(&s, &before, sizeof(s)) == 0 && err[0]);
    }
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        handshake(data, size);
    else
        spec(data, size);
    return 0;
}
