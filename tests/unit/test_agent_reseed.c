/* agent_reseed (vmm/agent_client/agent_client_io.c): the host learns whether the
 * guest reseeded its CRNG (RESEEDED), why not (an ERROR of the reseed's
 * steps, and the line airlock prints for it), or that it never answered
 * (the bound), from replies a hostile agent could send. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/agent_client/agent_client.h"

static uint8_t buf[AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD];
static uint8_t script[4096];
static size_t slen;
#define ADD(expr) (slen += (size_t)(expr))
#define AT script + slen, sizeof(script) - slen

/* The one request the helper sent, decoded. */
static void decode_request(const uint8_t *data, size_t len, struct agent_msg *m)
{
    struct agent_decoder d;
    size_t used;
    ck_assert_int_eq(agent_decoder_init(&d, AGENT_DIR_REQUEST), 0);
    ck_assert_int_eq(agent_decode(&d, data, len, &used, m), 1);
    ck_assert_uint_eq(used, len);
    /* m points into d's buffer: copy what the caller checks first */
    static uint8_t keep[AGENT_RESEED_SIZE];
    ck_assert_uint_eq(m->len, AGENT_RESEED_SIZE);
    memcpy(keep, m->payload, AGENT_RESEED_SIZE);
    m->payload = keep;
    m->u.reseed.seed = keep + 8;
    agent_decoder_free(&d);
}

/* Queues the reply script on a socketpair (then EOF unless `open_end`),
 * runs agent_reseed, and checks it sent one well-formed RESEED. */
static int script_reseed(unsigned wait_ms, int open_end, int *err, uint32_t *op, int *sv)
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(write(sv[1], script, slen), (ssize_t)slen);
    if (!open_end)
        shutdown(sv[1], SHUT_WR);
    uint8_t seed[AGENT_RESEED_SEED];
    memset(seed, 0xa5, sizeof(seed));
    int rc = agent_reseed(sv[0], 1234567890123ULL, seed, wait_ms, err, op);
    ssize_t n = recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT);
    struct agent_msg m;
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_RESEED_SIZE);
    decode_request(buf, (size_t)n, &m);
    ck_assert_uint_eq(m.type, AGENT_RESEED);
    ck_assert_uint_eq(m.u.reseed.realtime_ns, 1234567890123ULL);
    ck_assert(!memcmp(m.u.reseed.seed, seed, sizeof(seed)));
    return rc;
}

static void close_pair(int *sv)
{
    close(sv[0]);
    close(sv[1]);
}

/* The host learns whether the guest reseeded: RESEEDED, an ERROR of the
 * reseed's steps (the line airlock prints names it), or nothing. */
START_TEST(helper_reseed)
{
    int sv[2], err;
    uint32_t op;
    char line[256];
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode(AT, AGENT_RESEEDED, NULL, 0));
    ADD(agent_encode_started(AT, 5)); /* the next request's: left for its reader */
    ck_assert_int_eq(script_reseed(1000, 0, &err, &op, sv), 0);
    ck_assert_int_eq(err, 0);
    ck_assert_ptr_null(agent_reseed_failure(0, err, op, 1000, line, sizeof(line)));
    uint8_t rest[64];
    ck_assert_int_eq(recv(sv[0], rest, sizeof(rest), 0), AGENT_HDR_SIZE + AGENT_STARTED_SIZE);
    close_pair(sv);

    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode_error(AT, EPERM, AGENT_OP_RESEED));
    ck_assert_int_eq(script_reseed(1000, 0, &err, &op, sv), 0);
    ck_assert_int_eq(err, EPERM);
    ck_assert_uint_eq(op, AGENT_OP_RESEED);
    ck_assert_str_eq(agent_reseed_failure(0, err, op, 1000, line, sizeof(line)),
                     "the guest could not reseed its random number generator: "
                     "Operation not permitted");
    close_pair(sv);

    slen = 0; /* no READY is fine (another request took it) */
    ADD(agent_encode_error(AT, EINVAL, AGENT_OP_CLOCK));
    ck_assert_int_eq(script_reseed(1000, 0, &err, &op, sv), 0);
    ck_assert_str_eq(agent_reseed_failure(0, err, op, 1000, line, sizeof(line)),
                     "the guest could not set its clock: Invalid argument");
    close_pair(sv);

    /* Answers that are not a reseed's */
    slen = 0;
    ADD(agent_encode_error(AT, ENOENT, AGENT_OP_EXEC));
    ck_assert_int_eq(script_reseed(1000, 0, &err, &op, sv), -EPROTO);
    close_pair(sv);
    slen = 0;
    ADD(agent_encode(AT, AGENT_FILE_END, NULL, 0));
    ck_assert_int_eq(script_reseed(1000, 0, &err, &op, sv), -EPROTO);
    close_pair(sv);
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ck_assert_int_eq(script_reseed(1000, 0, &err, &op, sv), -ECONNRESET); /* EOF */
    close_pair(sv);
    /* A version-1 agent (it answered nothing) is refused at its READY. */
    slen = (size_t)agent_encode_ready(script, sizeof(script), 1, 0);
    wr16(script, 4, 1); /* the header's version too */
    int rc = script_reseed(1000, 0, &err, &op, sv);
    ck_assert_int_eq(rc, -EPROTONOSUPPORT);
    ck_assert_ptr_nonnull(strstr(agent_reseed_failure(rc, err, op, 1000, line, sizeof(line)),
                                 "another protocol version"));
    close_pair(sv);
}
END_TEST

/* An agent that says READY and then nothing is given up on at the bound. */
START_TEST(helper_reseed_no_answer)
{
    int sv[2], err;
    uint32_t op;
    char line[256];
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = script_reseed(300, 1, &err, &op, sv);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    ck_assert_int_eq(rc, -ETIMEDOUT);
    ck_assert_int_ge(ms, 300);
    ck_assert_int_lt(ms, 5000);
    ck_assert_str_eq(agent_reseed_failure(rc, err, op, 300, line, sizeof(line)),
                     "the guest could not reseed its random number generator: "
                     "the guest agent did not answer in 300 ms");
    ck_assert_str_eq(agent_reseed_failure(rc, err, op, 30000, line, sizeof(line)),
                     "the guest could not reseed its random number generator: "
                     "the guest agent did not answer in 30 s");
    close_pair(sv);
}
END_TEST

Suite *agent_reseed_suite(void)
{
    Suite *s = suite_create("agent_reseed");
    TCase *tc = tcase_create("helper");
    tcase_add_test(tc, helper_reseed);
    tcase_add_test(tc, helper_reseed_no_answer);
    suite_add_tcase(s, tc);
    return s;
}
