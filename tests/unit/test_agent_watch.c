/* WATCH and EVENT (vmm/agent_client/agent_watch_codec.c, agent_watch.c):
 * the payloads' round trip at their limits; hostile payloads (each refused
 * by the decoder, and the same input refused by the encoder); where an
 * event's paths may lie (agent_watch_beneath); and the host's driver
 * against scripted answers a hostile agent could give. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/agent_client/agent_conn.h"

static uint8_t frame[AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD];

/* A whole frame through a decoder of `dir`: 1 with *m (its strings copied
 * out of the decoder's buffer into pay), or the decoder's error. */
static int decode(enum agent_dir dir, const uint8_t *f, size_t n, struct agent_msg *m)
{
    static uint8_t pay[AGENT_EVENT_FIXED + 2 * AGENT_MAX_PATH];
    struct agent_decoder d;
    size_t used;
    ck_assert_int_eq(agent_decoder_init(&d, dir), 0);
    int rc = agent_decode(&d, f, n, &used, m);
    if (rc == 1) {
        ck_assert_uint_eq(used, n);
        memcpy(pay, m->payload, m->len);
        if (m->type == AGENT_WATCH)
            ck_assert_int_eq(agent_watch_parse(pay, m->len, m), 0);
        else if (m->type == AGENT_EVENT)
            ck_assert_int_eq(agent_event_parse(pay, m->len, m), 0);
    }
    agent_decoder_free(&d);
    return rc;
}

/* A hand-made payload as a frame of `type`: the decoder's result, and the
 * check alone says the same. */
static int decode_raw(uint16_t type, uint32_t a, uint32_t b, const void *rest, size_t len)
{
    static uint8_t p[AGENT_EVENT_FIXED + 2 * AGENT_MAX_PATH + 64];
    size_t fixed = type == AGENT_WATCH ? AGENT_WATCH_FIXED : AGENT_EVENT_FIXED;
    ck_assert_uint_le(len, sizeof(p) - fixed);
    wr32(p, 0, a);
    if (type == AGENT_EVENT)
        wr32(p, 4, b);
    memcpy(p + fixed, rest, len);
    wr32(frame, 0, AGENT_MAGIC);
    wr16(frame, 4, AGENT_VERSION);
    wr16(frame, 6, type);
    wr32(frame, 8, (uint32_t)(fixed + len));
    memcpy(frame + AGENT_HDR_SIZE, p, fixed + len);
    struct agent_msg m;
    enum agent_dir dir = type == AGENT_WATCH ? AGENT_DIR_REQUEST : AGENT_DIR_REPLY;
    int rc = decode(dir, frame, AGENT_HDR_SIZE + fixed + len, &m);
    int alone = type == AGENT_WATCH ? agent_watch_parse(p, fixed + len, NULL)
                                    : agent_event_parse(p, fixed + len, NULL);
    ck_assert_int_eq(alone, rc == 1 ? 0 : -EPROTO);
    return rc;
}

static ssize_t ev_to(uint8_t *buf, size_t cap, uint32_t kind, uint32_t flags, const char *path,
                     const char *to)
{
    struct agent_event e = {kind, flags, path, to};
    return agent_encode_event(buf, cap, &e);
}

static ssize_t event(uint32_t kind, uint32_t flags, const char *path, const char *to)
{
    return ev_to(frame, sizeof(frame), kind, flags, path, to);
}

START_TEST(watch_round_trip)
{
    struct agent_msg m;
    ssize_t n = agent_encode_watch(frame, sizeof(frame), "/tmp/w", AGENT_WATCH_F_RECURSIVE);
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_WATCH_FIXED + 7);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, frame, (size_t)n, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_WATCH);
    ck_assert_uint_eq(m.u.watch.flags, AGENT_WATCH_F_RECURSIVE);
    ck_assert_str_eq(m.u.watch.path, "/tmp/w");
    n = agent_encode_watch(frame, sizeof(frame), "/", 0);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, frame, (size_t)n, &m), 1);
    ck_assert_str_eq(m.u.watch.path, "/");
    ck_assert_uint_eq(m.u.watch.flags, 0);
    /* the longest path: AGENT_MAX_PATH bytes with its NUL; one more is refused */
    static char longest[AGENT_MAX_PATH + 1];
    memset(longest, 'x', sizeof(longest));
    longest[0] = '/';
    longest[AGENT_MAX_PATH - 1] = 0;
    n = agent_encode_watch(frame, sizeof(frame), longest, 0);
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_WATCH_FIXED + AGENT_MAX_PATH);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, frame, (size_t)n, &m), 1);
    longest[AGENT_MAX_PATH - 1] = 'x';
    ck_assert_int_eq(agent_encode_watch(frame, sizeof(frame), longest, 0), -EINVAL);
    ck_assert_int_eq(decode_raw(AGENT_WATCH, 0, 0, longest, AGENT_MAX_PATH + 1), -EMSGSIZE);
    ck_assert_int_eq(agent_encode_watch(frame, AGENT_HDR_SIZE + 8, "/tmp/w", 0), -EMSGSIZE);
}
END_TEST

START_TEST(watch_hostile)
{
    /* unknown flags */
    ck_assert_int_eq(decode_raw(AGENT_WATCH, 2, 0, "/tmp", 5), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_WATCH, 0x80000001u, 0, "/tmp", 5), -EPROTO);
    ck_assert_int_eq(agent_encode_watch(frame, sizeof(frame), "/tmp", 2), -EINVAL);
    /* not absolute, empty, NULL */
    ck_assert_int_eq(decode_raw(AGENT_WATCH, 0, 0, "tmp", 4), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_WATCH, 0, 0, "", 1), -EPROTO);
    ck_assert_int_eq(agent_encode_watch(frame, sizeof(frame), "tmp", 0), -EINVAL);
    ck_assert_int_eq(agent_encode_watch(frame, sizeof(frame), "", 0), -EINVAL);
    ck_assert_int_eq(agent_encode_watch(frame, sizeof(frame), NULL, 0), -EINVAL);
    /* the NUL: missing, early, doubled; no path; a fixed part cut short */
    ck_assert_int_eq(decode_raw(AGENT_WATCH, 0, 0, "/tmp", 4), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_WATCH, 0, 0, "/t\0mp", 6), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_WATCH, 0, 0, "/tmp\0", 6), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_WATCH, 0, 0, "", 0), -EPROTO);
    wr32(frame, 0, AGENT_MAGIC);
    wr16(frame, 4, AGENT_VERSION);
    wr16(frame, 6, AGENT_WATCH);
    wr32(frame, 8, 3);
    struct agent_msg m;
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, frame, AGENT_HDR_SIZE + 3, &m), -EPROTO);
    /* a WATCH is a request: an agent's reply of that type is refused */
    ssize_t n = agent_encode_watch(frame, sizeof(frame), "/tmp", 0);
    ck_assert_int_eq(decode(AGENT_DIR_REPLY, frame, (size_t)n, &m), -EPROTO);
}
END_TEST

START_TEST(event_round_trip)
{
    struct agent_msg m;
    for (uint32_t kind = AGENT_EVENT_CREATE; kind <= AGENT_EVENT_CHMOD; kind++) {
        for (uint32_t flags = 0; flags <= AGENT_EVENT_F_DIR; flags++) {
            ssize_t n = event(kind, flags, "/tmp/w/a b", NULL);
            ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_EVENT_FIXED + 11 + 1);
            ck_assert_int_eq(decode(AGENT_DIR_REPLY, frame, (size_t)n, &m), 1);
            ck_assert_uint_eq(m.u.event.kind, kind);
            ck_assert_uint_eq(m.u.event.flags, flags);
            ck_assert_str_eq(m.u.event.path, "/tmp/w/a b");
            ck_assert_str_eq(m.u.event.to, "");
        }
    }
    ssize_t n = event(AGENT_EVENT_RENAME, AGENT_EVENT_F_DIR, "/tmp/w/d", "/tmp/w/e");
    ck_assert_int_eq(decode(AGENT_DIR_REPLY, frame, (size_t)n, &m), 1);
    ck_assert_str_eq(m.u.event.path, "/tmp/w/d");
    ck_assert_str_eq(m.u.event.to, "/tmp/w/e");
    n = event(AGENT_EVENT_OVERFLOW, 0, "", "");
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_EVENT_FIXED + 2);
    ck_assert_int_eq(decode(AGENT_DIR_REPLY, frame, (size_t)n, &m), 1);
    ck_assert_uint_eq(m.u.event.kind, AGENT_EVENT_OVERFLOW);
    ck_assert_str_eq(m.u.event.path, "");
    n = event(AGENT_EVENT_OVERFLOW, 0, "/tmp/w/deep", NULL);
    ck_assert_int_eq(decode(AGENT_DIR_REPLY, frame, (size_t)n, &m), 1);
    ck_assert_str_eq(m.u.event.path, "/tmp/w/deep");
    /* both strings at their longest */
    static char a[AGENT_MAX_PATH], b[AGENT_MAX_PATH];
    memset(a, 'a', sizeof(a) - 1);
    memset(b, 'b', sizeof(b) - 1);
    a[0] = b[0] = '/';
    n = event(AGENT_EVENT_RENAME, 0, a, b);
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_EVENT_FIXED + 2 * AGENT_MAX_PATH);
    ck_assert_int_eq(decode(AGENT_DIR_REPLY, frame, (size_t)n, &m), 1);
    ck_assert_uint_eq(strlen(m.u.event.to), AGENT_MAX_PATH - 1);
}
END_TEST

START_TEST(event_hostile)
{
    /* kind and flags */
    ck_assert_int_eq(decode_raw(AGENT_EVENT, 6, 0, "/a\0", 4), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_EVENT, 0xffffffffu, 0, "/a\0", 4), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_CREATE, 2, "/a\0", 4), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_OVERFLOW, AGENT_EVENT_F_DIR, "\0", 2),
                     -EPROTO);
    ck_assert_int_eq(event(6, 0, "/a", NULL), -EINVAL);
    ck_assert_int_eq(event(AGENT_EVENT_CREATE, 2, "/a", NULL), -EINVAL);
    ck_assert_int_eq(event(AGENT_EVENT_OVERFLOW, AGENT_EVENT_F_DIR, "", NULL), -EINVAL);
    /* a destination on anything but a rename, or on an overflow */
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_CREATE, 0, "/a\0/b", 6), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_OVERFLOW, 0, "\0/b", 4), -EPROTO);
    ck_assert_int_eq(event(AGENT_EVENT_WRITE, 0, "/a", "/b"), -EINVAL);
    /* paths that are not absolute, or empty where not allowed */
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_CREATE, 0, "a\0", 3), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_CREATE, 0, "\0", 2), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_RENAME, 0, "/a\0b", 5), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_OVERFLOW, 0, "a\0", 3), -EPROTO);
    ck_assert_int_eq(event(AGENT_EVENT_CREATE, 0, "a", NULL), -EINVAL);
    ck_assert_int_eq(event(AGENT_EVENT_CREATE, 0, "", NULL), -EINVAL);
    ck_assert_int_eq(event(AGENT_EVENT_RENAME, 0, "/a", "b"), -EINVAL);
    /* the strings: one, three, none, no NUL at the end, too long */
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_CREATE, 0, "/a", 3), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_CREATE, 0, "/a\0", 4), 1); /* the two */
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_CREATE, 0, "/a\0\0", 5), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_RENAME, 0, "/a\0/b\0/c", 9), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_RENAME, 0, "/a\0/b", 5), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_CREATE, 0, "", 0), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_CREATE, 0, "\0", 1), -EPROTO);
    static char big[AGENT_MAX_PATH + 2];
    memset(big, 'x', sizeof(big));
    big[0] = '/';
    big[AGENT_MAX_PATH] = 0; /* a path of AGENT_MAX_PATH bytes before its NUL */
    big[AGENT_MAX_PATH + 1] = 0;
    ck_assert_int_eq(decode_raw(AGENT_EVENT, AGENT_EVENT_CREATE, 0, big, sizeof(big)), -EPROTO);
    ck_assert_int_eq(event(AGENT_EVENT_CREATE, 0, big, NULL), -EINVAL);
    /* a fixed part cut short */
    wr32(frame, 0, AGENT_MAGIC);
    wr16(frame, 4, AGENT_VERSION);
    wr16(frame, 6, AGENT_EVENT);
    wr32(frame, 8, 9);
    struct agent_msg m;
    ck_assert_int_eq(decode(AGENT_DIR_REPLY, frame, AGENT_HDR_SIZE + 9, &m), -EPROTO);
    /* past the type's maximum: refused at the header, nothing buffered */
    wr32(frame, 8, AGENT_EVENT_FIXED + 2 * AGENT_MAX_PATH + 1);
    ck_assert_int_eq(decode(AGENT_DIR_REPLY, frame, AGENT_HDR_SIZE, &m), -EMSGSIZE);
    /* an EVENT is a reply: a host's request of that type is refused */
    ssize_t n = event(AGENT_EVENT_CREATE, 0, "/a", NULL);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, frame, (size_t)n, &m), -EPROTO);
}
END_TEST

START_TEST(beneath)
{
    static const struct { const char *root, *path; int ok; } cases[] = {
        {"/tmp/w", "/tmp/w", 1},       {"/tmp/w", "/tmp/w/a", 1},
        {"/tmp/w/", "/tmp/w/a/b", 1},  {"/tmp/w//", "/tmp/w", 1},
        {"/", "/", 1},                 {"/", "/etc/passwd", 1},
        {"/tmp/w", "/tmp/wx", 0},      {"/tmp/w", "/tmp", 0},
        {"/tmp/w", "/etc/passwd", 0},  {"/tmp/w", "/tmp/w/../../etc", 0},
        {"/tmp/w", "/tmp/w/..", 0},    {"/tmp/w", "/tmp/w/./a", 0},
        {"/tmp/w", "/tmp/w//a", 0},    {"/tmp/w", "/tmp/w/a/", 0},
        {"/", "/..", 0},               {"/", "//etc", 0},
        {"/", "/a/../b", 0},           {"/tmp/w", "", 0},
        {"/tmp/w", "/tmp/w/...", 1},   {"/tmp/w", "/tmp/w/.a", 1},
        {"/tmp/./w", "/tmp/./w/a", 1}, /* the root is the client's own, as given */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(agent_watch_beneath(cases[i].root, cases[i].path) == cases[i].ok,
                      "%s under %s", cases[i].path, cases[i].root);
    static char name[AGENT_MAX_NAME + 8] = "/r/";
    memset(name + 3, 'n', AGENT_MAX_NAME);
    ck_assert(agent_watch_beneath("/r", name));
    name[3 + AGENT_MAX_NAME] = 'n'; /* one byte past a name's limit */
    ck_assert(!agent_watch_beneath("/r", name));
}
END_TEST

/* ---- the host's driver against scripted answers ---- */

static uint8_t script[16384];
static size_t slen;
#define ADD(expr) (slen += (size_t)(expr))
#define AT script + slen, sizeof(script) - slen

/* Queues the script (then EOF unless open_end), begins a watch of /w and
 * checks what it sent: agent_watch_begin's result, *c on success. */
static int script_watch(unsigned wait_ms, int open_end, int *sv, struct agent_conn **c)
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(write(sv[1], script, slen), (ssize_t)slen);
    if (!open_end)
        shutdown(sv[1], SHUT_WR);
    *c = NULL;
    int rc = agent_watch_begin(sv[0], "/w", AGENT_WATCH_F_RECURSIVE, wait_ms, c);
    ck_assert((rc == 0) == (*c != NULL));
    static uint8_t sent[256];
    ssize_t n = recv(sv[1], sent, sizeof(sent), MSG_DONTWAIT);
    struct agent_msg m;
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, sent, (size_t)n, &m), 1);
    ck_assert_str_eq(m.u.watch.path, "/w");
    ck_assert_uint_eq(m.u.watch.flags, AGENT_WATCH_F_RECURSIVE);
    return rc;
}

/* The next agent_watch_next result, filling once when bytes are needed. */
static int next(struct agent_conn *c, struct agent_event *ev)
{
    int rc = agent_watch_next(c, "/w", ev);
    if (rc == 0 && (rc = agent_reader_fill(&c->rd)) == 1)
        rc = agent_watch_next(c, "/w", ev);
    return rc;
}

static void done(int *sv, struct agent_conn *c)
{
    if (c)
        ac_free(c);
    close(sv[0]);
    close(sv[1]);
}

START_TEST(driver)
{
    int sv[2];
    struct agent_conn *c;
    struct agent_event ev;
    /* the whole conversation: events in order, then the end */
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode(AT, AGENT_DONE, NULL, 0));
    struct agent_event evs[] = {
        {AGENT_EVENT_CREATE, AGENT_EVENT_F_DIR, "/w/d", ""},
        {AGENT_EVENT_WRITE, 0, "/w/d/f", ""},
        {AGENT_EVENT_RENAME, 0, "/w/d/f", "/w/g"},
        {AGENT_EVENT_RENAME, 0, "/w/g", ""},
        {AGENT_EVENT_OVERFLOW, 0, "", ""},
        {AGENT_EVENT_REMOVE, AGENT_EVENT_F_DIR, "/w", ""},
    };
    for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
        ADD(agent_encode_event(AT, &evs[i]));
    ADD(agent_encode(AT, AGENT_DONE, NULL, 0));
    ck_assert_int_eq(script_watch(1000, 0, sv, &c), 0);
    for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
        ck_assert_int_eq(next(c, &ev), 1);
        ck_assert_uint_eq(ev.kind, evs[i].kind);
        ck_assert_uint_eq(ev.flags, evs[i].flags);
        ck_assert_str_eq(ev.path, evs[i].path);
        ck_assert_str_eq(ev.to, evs[i].to);
    }
    ck_assert_int_eq(next(c, &ev), 2);
    done(sv, c);

    /* refusals: the guest's errno, out-of-turn answers, EOF */
    slen = 0;
    ADD(agent_encode_error(AT, ENOENT, AGENT_OP_FILE));
    ck_assert_int_eq(script_watch(1000, 0, sv, &c), -ENOENT);
    done(sv, c);
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(ev_to(AT, AGENT_EVENT_CREATE, 0, "/w/a", NULL));
    ck_assert_int_eq(script_watch(1000, 0, sv, &c), -EPROTO); /* an event before DONE */
    done(sv, c);
    slen = 0;
    ADD(agent_encode(AT, AGENT_RESEEDED, NULL, 0));
    ck_assert_int_eq(script_watch(1000, 0, sv, &c), -EPROTO);
    done(sv, c);
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ck_assert_int_eq(script_watch(1000, 0, sv, &c), -ECONNRESET);
    done(sv, c);
    /* an agent of another version */
    slen = (size_t)agent_encode_ready(script, sizeof(script), 8, 0);
    wr16(script, 4, 8);
    ck_assert_int_eq(script_watch(1000, 0, sv, &c), -EPROTONOSUPPORT);
    done(sv, c);
}
END_TEST

/* Events that would lead a client outside the path, and other messages
 * mid-watch, break the stream (its reader ends the watch there). */
START_TEST(driver_hostile_events)
{
    static const struct agent_event bad[] = {
        {AGENT_EVENT_CREATE, 0, "/etc/passwd", ""},
        {AGENT_EVENT_CREATE, 0, "/w/../etc/passwd", ""},
        {AGENT_EVENT_CREATE, 0, "/wx", ""},
        {AGENT_EVENT_RENAME, 0, "/w/a", "/etc/a"},
        {AGENT_EVENT_RENAME, 0, "/w/a", "/w/./a"},
        {AGENT_EVENT_OVERFLOW, 0, "/tmp", ""},
        {AGENT_EVENT_REMOVE, 0, "/w//a", ""},
    };
    int sv[2];
    struct agent_conn *c;
    struct agent_event ev;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]) + 2; i++) {
        slen = 0;
        ADD(agent_encode(AT, AGENT_DONE, NULL, 0));
        ADD(ev_to(AT, AGENT_EVENT_CREATE, 0, "/w/ok", NULL));
        if (i < sizeof(bad) / sizeof(bad[0]))
            ADD(agent_encode_event(AT, &bad[i]));
        else if (i == sizeof(bad) / sizeof(bad[0]))
            ADD(agent_encode(AT, AGENT_STDOUT, "x", 1));
        else
            ADD(agent_encode_error(AT, EIO, AGENT_OP_FILE));
        ADD(ev_to(AT, AGENT_EVENT_CREATE, 0, "/w/after", NULL));
        ck_assert_int_eq(script_watch(1000, 0, sv, &c), 0);
        ck_assert_int_eq(next(c, &ev), 1);
        ck_assert_str_eq(ev.path, "/w/ok");
        ck_assert_msg(next(c, &ev) == -EPROTO, "case %zu", i);
        done(sv, c);
    }
}
END_TEST

START_TEST(driver_no_answer)
{
    int sv[2];
    struct agent_conn *c;
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    int64_t t0 = agent_mono_ms();
    ck_assert_int_eq(script_watch(300, 1, sv, &c), -ETIMEDOUT);
    ck_assert_int_ge(agent_mono_ms() - t0, 300);
    done(sv, c);
    /* what the encoder refuses is never sent */
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(agent_watch_begin(sv[0], "relative", 0, 100, &c), -EINVAL);
    ck_assert_int_eq(agent_watch_begin(sv[0], "/w", 4, 100, &c), -EINVAL);
    ck_assert_int_eq(recv(sv[1], frame, sizeof(frame), MSG_DONTWAIT), -1);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

Suite *agent_watch_suite(void)
{
    Suite *s = suite_create("agent_watch");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, watch_round_trip);
    tcase_add_test(tc, watch_hostile);
    tcase_add_test(tc, event_round_trip);
    tcase_add_test(tc, event_hostile);
    tcase_add_test(tc, beneath);
    suite_add_tcase(s, tc);
    tc = tcase_create("driver");
    tcase_add_test(tc, driver);
    tcase_add_test(tc, driver_hostile_events);
    tcase_add_test(tc, driver_no_answer);
    suite_add_tcase(s, tc);
    return s;
}
