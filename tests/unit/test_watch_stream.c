/* vmm/sandbox/watch_stream.c against a fake agent: events become JSON
 * lines in order and the path's end ends the answer cleanly; a client
 * that does not read makes the daemon's bounded queue drop events, and
 * every event lost is announced by an overflow line before the next one
 * seen (never silent); a client that hangs up on a silent watch ends it;
 * a lost or lying agent cuts the answer short; the route's 400s, 404 and
 * 503, and the lease a watch holds while it lasts. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/agent_client/agent_conn.h"
#include "vmm/sandbox/watch_stream.h"

static uint8_t script[1 << 20];
static size_t slen;
#define ADD(expr) (slen += (size_t)(expr))
#define AT script + slen, sizeof(script) - slen

static ssize_t ev(uint8_t *b, size_t cap, uint32_t kind, uint32_t flags, const char *path,
                  const char *to)
{
    struct agent_event e = {kind, flags, path, to};
    return agent_encode_event(b, cap, &e);
}

/* The daemon's end of a client connection (sv[0]); the client's is sv[1]. */
static struct api_conn *client_conn(int sv[2])
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct api_conn *c = calloc(1, sizeof(*c));
    ck_assert_ptr_nonnull(c);
    c->fd = sv[0];
    return c;
}

/* Everything the client got until EOF, the answer's last chunk, or a
 * pause of ms (NUL-terminated; free it). */
static char *client_read(int fd, int ms)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, ms) != 1)
            break;
        if (len + 4096 > cap)
            ck_assert_ptr_nonnull(buf = realloc(buf, cap *= 2));
        ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
        if (n <= 0)
            break;
        len += (size_t)n;
        if (len >= 5 && !memcmp(buf + len - 5, "0\r\n\r\n", 5))
            break;
    }
    buf[len] = 0;
    return buf;
}

static bool clean_end_of(const char *got)
{
    size_t n = strlen(got);
    return n > 5 && !strcmp(got + n - 5, "0\r\n\r\n");
}

START_TEST(event_lines)
{
    static const struct { struct agent_event e; const char *json; } cases[] = {
        {{AGENT_EVENT_CREATE, 0, "/tmp/x", ""}, "{\"type\":\"create\",\"path\":\"/tmp/x\",\"dir\":false}"},
        {{AGENT_EVENT_WRITE, 0, "/tmp/x", ""}, "{\"type\":\"write\",\"path\":\"/tmp/x\",\"dir\":false}"},
        {{AGENT_EVENT_REMOVE, AGENT_EVENT_F_DIR, "/tmp/d", ""},
         "{\"type\":\"remove\",\"path\":\"/tmp/d\",\"dir\":true}"},
        {{AGENT_EVENT_CHMOD, 0, "/tmp/x", ""}, "{\"type\":\"chmod\",\"path\":\"/tmp/x\",\"dir\":false}"},
        {{AGENT_EVENT_RENAME, 0, "/tmp/a", "/tmp/b"},
         "{\"type\":\"rename\",\"path\":\"/tmp/a\",\"to\":\"/tmp/b\",\"dir\":false}"},
        {{AGENT_EVENT_RENAME, 0, "/tmp/a", ""},
         "{\"type\":\"rename\",\"path\":\"/tmp/a\",\"to\":null,\"dir\":false}"},
        {{AGENT_EVENT_OVERFLOW, 0, "", ""}, "{\"type\":\"overflow\"}"},
        {{AGENT_EVENT_OVERFLOW, 0, "/tmp/deep", ""}, "{\"type\":\"overflow\",\"path\":\"/tmp/deep\"}"},
        {{AGENT_EVENT_CREATE, 0, "/tmp/\xff", ""}, "{\"type\":\"create\",\"path_b64\":\"L3RtcC//\",\"dir\":false}"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *o = watch_event_line(&cases[i].e);
        char *s = json_dumps(o, JSON_COMPACT);
        ck_assert_str_eq(s, cases[i].json);
        free(s);
        json_decref(o);
    }
}
END_TEST

struct feeder {
    int fd;
    size_t len;
    int close_after; /* shut the agent's end once written */
    volatile bool fed;
};

/* The fake agent: the script, as fast as the daemon takes it. */
static void *feed(void *arg)
{
    struct feeder *f = arg;
    agent_send_all(f->fd, script, f->len);
    if (f->close_after)
        shutdown(f->fd, SHUT_WR);
    f->fed = true;
    return NULL;
}

/* watch_stream of /w over a fake agent fed the script from a thread. */
struct run {
    struct api_conn *c;
    int close_after;
    int rc;
    int agent_fd;           /* the daemon's end, while it runs */
    struct feeder f;
    pthread_t t;
};

static void *run_stream(void *arg)
{
    struct run *r = arg;
    int av[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, av))
        abort();
    int rc;
    struct agent_conn *ac = ac_new(av[0], &rc);
    if (!ac)
        abort();
    r->agent_fd = av[0];
    r->f = (struct feeder){av[1], slen, r->close_after, false};
    pthread_t t;
    if (pthread_create(&t, NULL, feed, &r->f))
        abort();
    r->rc = watch_stream(r->c, ac, "/w");
    pthread_join(t, NULL);
    ac_free(ac);
    close(av[0]);
    close(av[1]);
    return NULL;
}

static void start(struct run *r, struct api_conn *c, int close_after)
{
    *r = (struct run){.c = c, .close_after = close_after, .agent_fd = -1};
    ck_assert_int_eq(pthread_create(&r->t, NULL, run_stream, r), 0);
}

/* The whole script is with the daemon: written, and none left unread. */
static void wait_taken(struct run *r)
{
    for (int i = 0; i < 2000; i++) {
        int unread = -1;
        if (r->f.fed && ioctl(r->agent_fd, FIONREAD, &unread) == 0 && unread == 0)
            return;
        usleep(5000);
    }
    ck_abort_msg("the daemon did not take the agent's bytes in 10 s");
}

START_TEST(clean_end)
{
    slen = 0;
    ADD(ev(AT, AGENT_EVENT_CREATE, 0, "/w/a", NULL));
    ADD(ev(AT, AGENT_EVENT_WRITE, 0, "/w/a", NULL));
    ADD(ev(AT, AGENT_EVENT_RENAME, 0, "/w/a", "/w/b"));
    ADD(ev(AT, AGENT_EVENT_REMOVE, AGENT_EVENT_F_DIR, "/w", NULL));
    ADD(agent_encode(AT, AGENT_DONE, NULL, 0));
    int sv[2];
    struct api_conn *c = client_conn(sv);
    struct run r;
    start(&r, c, 0);
    pthread_join(r.t, NULL); /* a few lines: the client's socket holds them */
    char *got = client_read(sv[1], 0);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(got, "HTTP/1.1 200"));
    ck_assert_ptr_nonnull(strstr(got, "application/x-ndjson"));
    const char *a = strstr(got, "{\"type\":\"create\",\"path\":\"/w/a\",\"dir\":false}\n");
    const char *b = strstr(got, "{\"type\":\"write\",\"path\":\"/w/a\",\"dir\":false}\n");
    const char *n = strstr(got, "{\"type\":\"rename\",\"path\":\"/w/a\",\"to\":\"/w/b\",\"dir\":false}\n");
    const char *d = strstr(got, "{\"type\":\"remove\",\"path\":\"/w\",\"dir\":true}\n");
    ck_assert(a && b && n && d && a < b && b < n && n < d);
    ck_assert(clean_end_of(got));
    free(got);
    close(sv[0]);
    close(sv[1]);
    free(c);
}
END_TEST

/* 5000 events while the client reads nothing, then the path's end: what
 * comes out is in order, every index missing is announced by an overflow
 * line after the last one seen before it, and the end comes last although
 * the queue was dropping when it arrived. */
START_TEST(overflow_never_silent)
{
    enum { N = 5000 };
    slen = 0;
    char p[32];
    for (int i = 0; i < N; i++) {
        snprintf(p, sizeof(p), "/w/f%d", i);
        ADD(ev(AT, AGENT_EVENT_CREATE, 0, p, NULL));
    }
    ADD(ev(AT, AGENT_EVENT_REMOVE, AGENT_EVENT_F_DIR, "/w", NULL));
    ADD(agent_encode(AT, AGENT_DONE, NULL, 0));
    int sv[2];
    struct api_conn *c = client_conn(sv);
    int small = 16384; /* the client's socket holds a few dozen lines at most */
    ck_assert_int_eq(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
    struct run r;
    start(&r, c, 0);
    wait_taken(&r);
    char *got = client_read(sv[1], 5000);
    pthread_join(r.t, NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert(clean_end_of(got));
    int next = 0, seen = 0, overflows = 0;
    bool announced = false, end = false;
    for (const char *l = strstr(got, "{\"type\""); l; l = strstr(l + 1, "{\"type\"")) {
        int i;
        ck_assert_msg(!end, "a line after the path's end");
        static const char root_end[] = "{\"type\":\"remove\",\"path\":\"/w\",\"dir\":true}\n";
        if (!strncmp(l, root_end, sizeof(root_end) - 1)) {
            end = true; /* the path's own end: never dropped */
            continue;
        }
        if (!strncmp(l, "{\"type\":\"overflow\"}", 19)) {
            overflows++;
            announced = true;
            continue;
        }
        ck_assert_int_eq(sscanf(l, "{\"type\":\"create\",\"path\":\"/w/f%d\"", &i), 1);
        ck_assert_msg(i >= next, "%d after %d: out of order", i, next - 1);
        ck_assert_msg(i == next || announced, "events %d..%d lost without an overflow line",
                      next, i - 1);
        announced = false;
        next = i + 1;
        seen++;
    }
    ck_assert_msg(next == N || announced, "the last %d events lost without an overflow line",
                  N - next);
    ck_assert_msg(end, "the path's end was dropped");
    ck_assert_int_ge(overflows, 1); /* 5000 cannot fit: it did overflow */
    ck_assert_int_lt(seen, N);
    ck_assert_int_ge(seen, WATCH_QUEUE_LINES); /* the queue was full before it dropped */
    free(got);
    close(sv[0]);
    close(sv[1]);
    free(c);
}
END_TEST

START_TEST(client_hangs_up_on_silent_watch)
{
    slen = 0; /* the agent says nothing, and stays */
    int sv[2];
    struct api_conn *c = client_conn(sv);
    struct run r;
    int64_t t0 = agent_mono_ms();
    start(&r, c, 0);
    usleep(200000);
    close(sv[1]);
    pthread_join(r.t, NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert(c->broken);
    ck_assert_int_lt(agent_mono_ms() - t0, 3000);
    close(sv[0]);
    free(c);
}
END_TEST

/* An agent that goes away, or sends what it may not, cuts the answer:
 * the lines before stay, no clean end follows. */
START_TEST(agent_lost_or_lying)
{
    for (int lie = 0; lie < 2; lie++) {
        slen = 0;
        ADD(ev(AT, AGENT_EVENT_CREATE, 0, "/w/a", NULL));
        if (lie)
            ADD(ev(AT, AGENT_EVENT_CREATE, 0, "/etc/passwd", NULL));
        int sv[2];
        struct api_conn *c = client_conn(sv);
        struct run r;
        start(&r, c, !lie);
        pthread_join(r.t, NULL);
        char *got = client_read(sv[1], 0);
        ck_assert_int_eq(r.rc, lie ? -EPROTO : -ECONNRESET);
        ck_assert_ptr_nonnull(strstr(got, "\"path\":\"/w/a\""));
        ck_assert_ptr_null(strstr(got, "passwd"));
        ck_assert(!clean_end_of(got));
        free(got);
        close(sv[0]);
        close(sv[1]);
        free(c);
    }
}
END_TEST

/* ---- the route, with a fake agent behind the VM's socket ---- */

static char dir[64], sock[96];
static struct registry reg;
static struct sandbox sb;

struct fake {
    int lfd;
    int answer;              /* 0: DONE, an event, the path's end; else ERROR with it */
    uint32_t flags;          /* what the WATCH asked for */
    char path[64];
    unsigned watches_during; /* sb.watches while the watch was open */
};

static void *fake_agent(void *arg)
{
    struct fake *f = arg;
    int fd = accept(f->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char ch;
    while (recv(fd, &ch, 1, 0) == 1 && ch != '\n')
        ; /* CONNECT <port> */
    static uint8_t b[4096];
    size_t n = 0;
    n += (size_t)agent_encode_ready(b, sizeof(b), AGENT_VERSION, 0);
    if (send(fd, "OK 1\n", 5, MSG_NOSIGNAL) != 5 || agent_send_all(fd, b, n))
        goto out;
    struct agent_decoder d;
    struct agent_msg m;
    size_t used;
    ssize_t got = recv(fd, b, sizeof(b), 0);
    if (got <= 0 || agent_decoder_init(&d, AGENT_DIR_REQUEST))
        goto out;
    if (agent_decode(&d, b, (size_t)got, &used, &m) == 1 && m.type == AGENT_WATCH) {
        f->flags = m.u.watch.flags;
        snprintf(f->path, sizeof(f->path), "%s", m.u.watch.path);
    }
    agent_decoder_free(&d);
    if (f->answer) {
        n = (size_t)agent_encode_error(b, sizeof(b), (uint32_t)f->answer, AGENT_OP_FILE);
        agent_send_all(fd, b, n);
        goto out;
    }
    n = (size_t)agent_encode(b, sizeof(b), AGENT_DONE, NULL, 0);
    agent_send_all(fd, b, n);
    usleep(100000);
    pthread_mutex_lock(&reg.lock);
    f->watches_during = sb.watches;
    pthread_mutex_unlock(&reg.lock);
    n = (size_t)ev(b, sizeof(b), AGENT_EVENT_REMOVE, AGENT_EVENT_F_DIR, "/w", NULL);
    n += (size_t)agent_encode(b + n, sizeof(b) - n, AGENT_DONE, NULL, 0);
    agent_send_all(fd, b, n);
out:
    while (recv(fd, b, sizeof(b), 0) > 0)
        ; /* until the daemon closes */
    close(fd);
    return NULL;
}

static void route_setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/airlock-watch-stream.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(sock, sizeof(sock), "%s/agent.sock", dir);
    registry_init(&reg, 1, 0);
    memset(&sb, 0, sizeof(sb));
    snprintf(sb.sock, sizeof(sb.sock), "%s", sock);
}

static void route_teardown(void)
{
    unlink(sock);
    rmdir(dir);
}

/* GET target through watch_get, with the fake agent when f: what the
 * client got (free it). */
static char *get(const char *target, struct fake *f)
{
    pthread_t t;
    if (f) {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
        unlink(sock);
        f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(f->lfd, 0);
        ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(listen(f->lfd, 1), 0);
        ck_assert_int_eq(pthread_create(&t, NULL, fake_agent, f), 0);
    }
    int sv[2];
    struct api_conn *c = client_conn(sv);
    snprintf(c->req.method, sizeof(c->req.method), "GET");
    snprintf(c->req.target, sizeof(c->req.target), "%s", target);
    watch_get(c, &reg, &sb);
    if (f) {
        pthread_join(t, NULL);
        close(f->lfd);
    }
    char *got = client_read(sv[1], 0);
    close(sv[0]);
    close(sv[1]);
    free(c);
    return got;
}

START_TEST(route)
{
    struct fake f = {0};
    char *got = get("/v1/sandboxes/x/watch?path=%2Fw&recursive=true", &f);
    ck_assert_ptr_nonnull(strstr(got, "HTTP/1.1 200"));
    ck_assert_ptr_nonnull(strstr(got, "{\"type\":\"remove\",\"path\":\"/w\",\"dir\":true}"));
    ck_assert(clean_end_of(got));
    ck_assert_str_eq(f.path, "/w");
    ck_assert_uint_eq(f.flags, AGENT_WATCH_F_RECURSIVE);
    ck_assert_uint_eq(f.watches_during, 1); /* it held the lease */
    ck_assert_uint_eq(sb.watches, 0);
    free(got);

    f = (struct fake){0};
    got = get("/v1/sandboxes/x/watch?path=%2Fw", &f);
    ck_assert_uint_eq(f.flags, 0); /* recursive is false unless given */
    free(got);

    f = (struct fake){.answer = ENOENT};
    got = get("/v1/sandboxes/x/watch?path=%2Fno%2Fsuch", &f);
    ck_assert_ptr_nonnull(strstr(got, "HTTP/1.1 404"));
    ck_assert_ptr_nonnull(strstr(got, "/no/such: No such file or directory"));
    ck_assert_ptr_nonnull(strstr(got, "\"field\":\"path\""));
    ck_assert_uint_eq(sb.watches, 0);
    free(got);

    /* bad queries: no agent is asked */
    static const struct { const char *target, *field; } bad[] = {
        {"/v1/sandboxes/x/watch", "path"},
        {"/v1/sandboxes/x/watch?path=relative", "path"},
        {"/v1/sandboxes/x/watch?path=%2Fw%00x", "path"},
        {"/v1/sandboxes/x/watch?path=%2Fw&recursive=yes", "recursive"},
        {"/v1/sandboxes/x/watch?path=%2Fw&recursive=", "recursive"},
        {"/v1/sandboxes/x/watch?path=%2Fw&recursive=%", "recursive"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        got = get(bad[i].target, NULL);
        ck_assert_msg(strstr(got, "HTTP/1.1 400") != NULL, "%s", bad[i].target);
        char want[64];
        snprintf(want, sizeof(want), "\"field\":\"%s\"", bad[i].field);
        ck_assert_msg(strstr(got, want) != NULL, "%s: %s", bad[i].target, got);
        free(got);
    }
    ck_assert_uint_eq(sb.watches, 0);

    /* past WATCH_MAX open at once */
    sb.watches = WATCH_MAX;
    got = get("/v1/sandboxes/x/watch?path=%2Fw", NULL);
    ck_assert_ptr_nonnull(strstr(got, "HTTP/1.1 503"));
    ck_assert_uint_eq(sb.watches, WATCH_MAX);
    sb.watches = 0;
    free(got);
}
END_TEST

Suite *watch_stream_suite(void)
{
    Suite *s = suite_create("watch_stream");
    TCase *tc = tcase_create("watch_stream");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, event_lines);
    tcase_add_test(tc, clean_end);
    tcase_add_test(tc, overflow_never_silent);
    tcase_add_test(tc, client_hangs_up_on_silent_watch);
    tcase_add_test(tc, agent_lost_or_lying);
    suite_add_tcase(s, tc);
    tc = tcase_create("route");
    tcase_add_checked_fixture(tc, route_setup, route_teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, route);
    suite_add_tcase(s, tc);
    return s;
}
