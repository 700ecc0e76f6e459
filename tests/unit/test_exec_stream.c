/* vmm/sandbox/exec_stream.c against a fake agent behind a Unix socket (the
 * VM's --vsock-uds handshake, then READY and STARTED): a client that hangs
 * up on a command that prints nothing ends it (the agent's connection
 * closes, exec_stream_run returns, the outcome is output_closed); a client
 * that stays, and sends its next request meanwhile, gets the exit record. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/agent_client/agent_conn.h"
#include "vmm/sandbox/exec_stream.h"
#include "vmm/util/rmtree.h"

static char dir[64], sock[96];

struct fake {
    int lfd;
    int exit_after_ms; /* -1: never says EXIT (a silent `sleep 120`) */
    bool saw_eof;      /* the host closed the connection */
};

static bool send_frame(int fd, ssize_t (*enc)(uint8_t *, size_t, uint32_t), uint32_t v)
{
    uint8_t f[64];
    ssize_t n = enc(f, sizeof(f), v);
    return n > 0 && send(fd, f, (size_t)n, MSG_NOSIGNAL) == n;
}

static ssize_t ready(uint8_t *b, size_t cap, uint32_t v)
{
    return agent_encode_ready(b, cap, v, 0);
}

static ssize_t exit0(uint8_t *b, size_t cap, uint32_t v)
{
    return agent_encode_exit(b, cap, AGENT_EXIT_CODE, v, 0);
}

/* No ck_assert here: it is not the test's thread. */
static void *fake_agent(void *arg)
{
    struct fake *f = arg;
    int fd = accept(f->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char c;
    while (recv(fd, &c, 1, 0) == 1 && c != '\n')
        ; /* CONNECT <port> */
    if (send(fd, "OK 1\n", 5, MSG_NOSIGNAL) == 5 && send_frame(fd, ready, AGENT_VERSION) &&
        send_frame(fd, agent_encode_started, 7) && f->exit_after_ms >= 0) {
        usleep((useconds_t)f->exit_after_ms * 1000);
        send_frame(fd, exit0, 0);
    }
    char buf[4096];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
        ; /* the EXEC frame, then nothing until the host closes */
    f->saw_eof = n == 0;
    close(fd);
    return NULL;
}

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/airlock-exec-stream.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(sock, sizeof(sock), "%s/agent.sock", dir);
}

static void teardown(void)
{
    rmtree(dir);
}

/* Runs `sleep 120` through the fake agent with the API client on *client. */
static int run(struct fake *f, struct api_conn *c, struct exec_outcome *done)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
    f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(f->lfd, 0);
    ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(f->lfd, 1), 0);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, fake_agent, f), 0);
    static const char *const argv[] = {"sleep", "120"};
    struct agent_exec_req req;
    agent_exec_req_init(&req);
    req.argv = argv;
    req.argc = 2;
    struct exec_input in = {NULL, 0};
    int rc = exec_stream_run(c, sock, &req, &in, 1 << 20, done);
    pthread_join(t, NULL);
    close(f->lfd);
    return rc;
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

struct hangup {
    int fd, after_ms;
};

static void *hang_up(void *arg)
{
    struct hangup *h = arg;
    usleep((useconds_t)h->after_ms * 1000);
    close(h->fd);
    return NULL;
}

START_TEST(client_hangs_up_on_silent_command)
{
    int sv[2];
    struct api_conn *c = client_conn(sv);
    struct hangup h = {sv[1], 300};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, hang_up, &h), 0);
    struct fake f = {.exit_after_ms = -1};
    struct exec_outcome done;
    int64_t t0 = agent_mono_ms();
    ck_assert_int_eq(run(&f, c, &done), 0); /* before the fix: never returned */
    pthread_join(t, NULL);
    ck_assert_int_lt(agent_mono_ms() - t0, 3000);
    ck_assert(f.saw_eof); /* what makes the real agent kill the process group */
    ck_assert(c->broken);
    ck_assert_int_eq(done.rc, 0);
    ck_assert(done.res.output_closed);
    ck_assert_int_eq(agent_result_status(&done.res), 141);
    close(sv[0]);
    free(c);
}
END_TEST

START_TEST(client_stays_and_pipelines)
{
    int sv[2];
    struct api_conn *c = client_conn(sv);
    /* the next request, sent while the command runs: bytes, not a hang-up */
    static const char next[] = "GET /v1/version HTTP/1.1\r\nHost: x\r\n\r\n";
    ck_assert_int_eq(send(sv[1], next, sizeof(next) - 1, 0), (ssize_t)sizeof(next) - 1);
    struct fake f = {.exit_after_ms = 300};
    struct exec_outcome done;
    ck_assert_int_eq(run(&f, c, &done), 0);
    ck_assert(f.saw_eof);
    ck_assert(!c->broken);
    ck_assert_int_eq(done.rc, 0);
    ck_assert(!done.res.output_closed);
    ck_assert_int_eq(agent_result_status(&done.res), 0);
    char got[4096];
    ssize_t n = recv(sv[1], got, sizeof(got) - 1, MSG_DONTWAIT);
    ck_assert_int_gt(n, 0);
    got[n] = '\0';
    ck_assert_ptr_nonnull(strstr(got, "HTTP/1.1 200"));
    ck_assert_ptr_nonnull(strstr(got, "\"type\":\"exit\",\"exit_code\":0"));
    close(sv[0]);
    close(sv[1]);
    free(c);
}
END_TEST

Suite *exec_stream_suite(void)
{
    Suite *s = suite_create("exec_stream");
    TCase *tc = tcase_create("exec_stream");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, client_hangs_up_on_silent_command);
    tcase_add_test(tc, client_stays_and_pipelines);
    suite_add_tcase(s, tc);
    return s;
}
