/* CREDENTIALS (vmm/agent_client/agent_cred_codec.c, agent_credentials in
 * agent_client_io.c): the payload round trip at its limits, the hostile
 * payloads a broken host could send (each refused by the decoder the agent
 * uses, and the same input refused by the encoder), and the host's helper
 * against scripted answers a hostile agent could give. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/agent_client/agent_client.h"

#define BIG (AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD)

static uint8_t frame[BIG];
static uint8_t pay[BIG];
static const char *envb[AGENT_CRED_MAX_ENVS + 1];

static const char PEM[] = "-----BEGIN CERTIFICATE-----\r\nMIIB+zCCAaGgAwIBAgIU\n"
                          "-----END CERTIFICATE-----\n";

/* Decodes one frame as the agent does: agent_decode's result, and then
 * the payload through agent_cred_parse into *c (its strings in `pay`). */
static int decode(const uint8_t *f, size_t n, struct agent_cred *c)
{
    struct agent_decoder d;
    struct agent_msg m;
    size_t used;
    ck_assert_int_eq(agent_decoder_init(&d, AGENT_DIR_REQUEST), 0);
    int rc = agent_decode(&d, f, n, &used, &m);
    if (rc == 1) {
        ck_assert_uint_eq(used, n);
        ck_assert_uint_eq(m.type, AGENT_CREDENTIALS);
        memcpy(pay, m.payload, m.len);
        ck_assert_int_eq(agent_cred_parse(pay, m.len, c, envb), 0);
    }
    agent_decoder_free(&d);
    return rc;
}

/* A hand-made payload: envc, env_bytes, then `body` (env and PEM). */
static size_t raw(uint8_t *p, uint32_t envc, uint32_t env_bytes, const void *body, size_t len)
{
    wr32(p, 0, envc);
    wr32(p, 4, env_bytes);
    memcpy(p + AGENT_CRED_FIXED, body, len);
    return AGENT_CRED_FIXED + len;
}

/* The payload as a whole frame through the decoder: its result. */
static int decode_raw(const uint8_t *p, size_t len)
{
    wr32(frame, 0, AGENT_MAGIC);
    wr16(frame, 4, AGENT_VERSION);
    wr16(frame, 6, AGENT_CREDENTIALS);
    wr32(frame, 8, (uint32_t)len);
    memmove(frame + AGENT_HDR_SIZE, p, len);
    struct agent_cred c;
    int rc = decode(frame, AGENT_HDR_SIZE + len, &c);
    /* the check alone says the same */
    ck_assert_int_eq(agent_cred_parse(p, len, NULL, NULL), rc == 1 ? 0 : -EPROTO);
    return rc;
}

static ssize_t encode(const char *const *env, uint32_t envc, const char *pem, size_t pem_len)
{
    struct agent_cred c = {.env = env, .envc = envc, .pem = pem, .pem_len = pem_len};
    return agent_encode_credentials(frame, sizeof(frame), &c);
}

START_TEST(round_trip)
{
    static const char *const env[] = {"GITHUB_TOKEN=airlock-ph-1", "_=x", "a1=v=w"};
    ssize_t n = encode(env, 3, PEM, sizeof(PEM) - 1);
    ck_assert_int_gt(n, 0);
    struct agent_cred c;
    ck_assert_int_eq(decode(frame, (size_t)n, &c), 1);
    ck_assert_uint_eq(c.envc, 3);
    ck_assert_str_eq(c.env[0], "GITHUB_TOKEN=airlock-ph-1");
    ck_assert_str_eq(c.env[2], "a1=v=w");
    ck_assert_ptr_null(c.env[3]);
    ck_assert_uint_eq(c.pem_len, sizeof(PEM) - 1);
    ck_assert_mem_eq(c.pem, PEM, sizeof(PEM) - 1);
    /* a clear: nothing at all, 8 bytes of zeros */
    n = encode(NULL, 0, NULL, 0);
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_CRED_FIXED);
    ck_assert_int_eq(decode(frame, (size_t)n, &c), 1);
    ck_assert_uint_eq(c.envc, 0);
    ck_assert_uint_eq(c.pem_len, 0);
    /* a PEM alone, and entries alone */
    ck_assert_int_eq(decode(frame, (size_t)encode(NULL, 0, PEM, sizeof(PEM) - 1), &c), 1);
    ck_assert_int_eq(decode(frame, (size_t)encode(env, 1, NULL, 0), &c), 1);
    ck_assert_uint_eq(c.envc, 1);
    ck_assert_uint_eq(c.pem_len, 0);
}
END_TEST

/* Every limit reached at once: 64 entries filling 64 KiB exactly, the
 * longest NAME and VALUE among them, a 16 KiB PEM. */
START_TEST(at_the_limits)
{
    static char strs[AGENT_CRED_MAX_ENVS][AGENT_CRED_MAX_NAME + AGENT_CRED_MAX_VALUE + 2];
    static const char *env[AGENT_CRED_MAX_ENVS];
    static char pem[AGENT_CRED_MAX_PEM];
    size_t left = AGENT_CRED_MAX_ENV_BYTES;
    for (unsigned i = 0; i < AGENT_CRED_MAX_ENVS; i++) {
        /* NAME: "N<i>" padded with '_' to 128 for the first, 8 after */
        size_t nl = i == 0 ? AGENT_CRED_MAX_NAME : 8;
        memset(strs[i], '_', nl);
        strs[i][0] = 'N';
        strs[i][1] = (char)('A' + i % 26);
        strs[i][2] = (char)('A' + i / 26);
        strs[i][nl] = '=';
        /* the rest shared out; the first VALUE is the longest allowed */
        size_t total = i == 0 ? nl + 1 + AGENT_CRED_MAX_VALUE + 1
                              : left / (AGENT_CRED_MAX_ENVS - i);
        memset(strs[i] + nl + 1, 'v', total - nl - 2);
        strs[i][total - 1] = 0;
        left -= total;
        env[i] = strs[i];
    }
    ck_assert_uint_eq(left, 0);
    memset(pem, 'A', sizeof(pem));
    memcpy(pem, AGENT_CRED_PEM_BEGIN, strlen(AGENT_CRED_PEM_BEGIN));
    ssize_t n = encode(env, AGENT_CRED_MAX_ENVS, pem, sizeof(pem));
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_CRED_MAX_PAYLOAD);
    struct agent_cred c;
    ck_assert_int_eq(decode(frame, (size_t)n, &c), 1);
    ck_assert_uint_eq(c.envc, AGENT_CRED_MAX_ENVS);
    ck_assert_str_eq(c.env[63], env[63]);
    ck_assert_uint_eq(c.pem_len, AGENT_CRED_MAX_PEM);
    /* one more of anything is too much, for the encoder */
    static char big_pem[AGENT_CRED_MAX_PEM + 1];
    memcpy(big_pem, pem, sizeof(pem));
    big_pem[AGENT_CRED_MAX_PEM] = 'A';
    ck_assert_int_eq(encode(env, 1, big_pem, sizeof(big_pem)), -EMSGSIZE);
    size_t l63 = strlen(strs[63]);
    strs[63][l63] = 'v'; /* 1 byte longer: 64 KiB + 1 */
    strs[63][l63 + 1] = 0;
    ck_assert_int_eq(encode(env, AGENT_CRED_MAX_ENVS, NULL, 0), -EMSGSIZE);
    static const char *many[AGENT_CRED_MAX_ENVS + 1];
    for (unsigned i = 0; i <= AGENT_CRED_MAX_ENVS; i++)
        many[i] = env[i % 8 + 1];
    ck_assert_int_eq(encode(many, AGENT_CRED_MAX_ENVS + 1, NULL, 0), -EMSGSIZE);
    /* and a frame longer than the type's maximum is refused at its header */
    wr32(frame, 0, AGENT_MAGIC);
    wr16(frame, 4, AGENT_VERSION);
    wr16(frame, 6, AGENT_CREDENTIALS);
    wr32(frame, 8, AGENT_CRED_MAX_PAYLOAD + 1);
    ck_assert_int_eq(decode(frame, AGENT_HDR_SIZE, &c), -EMSGSIZE);
}
END_TEST

/* One entry, as a broken host would send it and as a caller would ask
 * for it: refused both ways. */
static void bad_entry(const char *e, size_t len)
{
    uint8_t body[8192];
    memcpy(body, e, len);
    body[len] = 0;
    size_t n = raw(pay, 1, (uint32_t)len + 1, body, len + 1);
    ck_assert_msg(decode_raw(pay, n) == -EPROTO, "decoded: %.*s", (int)len, e);
    if (!memchr(e, 0, len)) {
        const char *env[] = {(const char *)body};
        ck_assert_msg(encode(env, 1, NULL, 0) == -EINVAL, "encoded: %.*s", (int)len, e);
    }
}

static void good_entry(const char *e)
{
    size_t n = raw(pay, 1, (uint32_t)strlen(e) + 1, e, strlen(e) + 1);
    ck_assert_msg(decode_raw(pay, n) == 1, "refused: %s", e);
    const char *env[] = {e};
    ck_assert_int_gt(encode(env, 1, NULL, 0), 0);
}

#define BAD(lit) bad_entry(lit, sizeof(lit) - 1)

START_TEST(hostile_entries)
{
    /* NAMEs */
    BAD("");
    BAD("=v");
    BAD("1A=v");
    BAD("A-B=v");
    BAD("A B=v");
    BAD("A.B=v");
    BAD("\xc3\xa9=v");
    BAD("NOEQUALS");
    static char name[AGENT_CRED_MAX_NAME + 8];
    memset(name, 'N', AGENT_CRED_MAX_NAME);
    strcpy(name + AGENT_CRED_MAX_NAME, "=v");
    good_entry(name); /* 128 bytes */
    memset(name, 'N', AGENT_CRED_MAX_NAME + 1);
    strcpy(name + AGENT_CRED_MAX_NAME + 1, "=v");
    bad_entry(name, strlen(name)); /* 129 */
    /* VALUEs: printable, no space, 1..4096 bytes */
    BAD("A=");
    BAD("A=b c");
    BAD("A= b");
    BAD("A=b\tc");
    BAD("A=b\nc");
    BAD("A=b\rc");
    BAD("A=b\x7f");
    BAD("A=\x80");
    BAD("A=\xff");
    BAD("A=\x01");
    good_entry("A=!~\"'$`\\=");
    static char value[AGENT_CRED_MAX_VALUE + 8];
    strcpy(value, "V=");
    memset(value + 2, 'x', AGENT_CRED_MAX_VALUE);
    good_entry(value);
    value[2 + AGENT_CRED_MAX_VALUE] = 'x';
    bad_entry(value, strlen(value));
    /* a NUL inside what the counts say is one string: two strings */
    bad_entry("A=b\0c", 5);
}
END_TEST

START_TEST(hostile_sections)
{
    size_t n;
    /* envc over its cap, with the bytes for them */
    static uint8_t body[AGENT_CRED_MAX_ENV_BYTES + 64];
    for (unsigned i = 0; i < AGENT_CRED_MAX_ENVS + 1; i++)
        memcpy(body + 4 * i, "A=b", 4);
    n = raw(pay, AGENT_CRED_MAX_ENVS + 1, 4 * (AGENT_CRED_MAX_ENVS + 1), body,
            4 * (AGENT_CRED_MAX_ENVS + 1));
    ck_assert_int_eq(decode_raw(pay, n), -EPROTO);
    /* env_bytes over its cap, and past the payload's end; huge counts */
    memset(body, 'x', sizeof(body));
    n = raw(pay, 1, AGENT_CRED_MAX_ENV_BYTES + 1, body, AGENT_CRED_MAX_ENV_BYTES + 1);
    ck_assert_int_eq(decode_raw(pay, n), -EPROTO);
    ck_assert_int_eq(decode_raw(pay, raw(pay, 1, 5, "A=b", 4)), -EPROTO);
    ck_assert_int_eq(decode_raw(pay, raw(pay, 0xffffffffu, 4, "A=b", 4)), -EPROTO);
    ck_assert_int_eq(decode_raw(pay, raw(pay, 1, 0xfffffffcu, "A=b", 4)), -EPROTO);
    /* env_bytes that do not match the strings: more (a stray byte after
     * the last string), fewer (its NUL falls outside the section) */
    ck_assert_int_eq(decode_raw(pay, raw(pay, 1, 5, "A=b\0x", 5)), -EPROTO);
    ck_assert_int_eq(decode_raw(pay, raw(pay, 1, 3, "A=b", 4)), -EPROTO);
    ck_assert_int_eq(decode_raw(pay, raw(pay, 1, 3, "A=b\0" AGENT_CRED_PEM_BEGIN, 4 + 27)),
                     -EPROTO);
    /* more strings counted than the section holds, and fewer */
    ck_assert_int_eq(decode_raw(pay, raw(pay, 2, 4, "A=b", 4)), -EPROTO);
    ck_assert_int_eq(decode_raw(pay, raw(pay, 1, 8, "A=b\0C=d", 8)), -EPROTO);
    ck_assert_int_eq(decode_raw(pay, raw(pay, 0, 4, "A=b", 4)), -EPROTO);
    /* the same NAME twice (the second could not be told apart from the first) */
    ck_assert_int_eq(decode_raw(pay, raw(pay, 2, 8, "A=b\0A=c", 8)), -EPROTO);
    ck_assert_int_eq(decode_raw(pay, raw(pay, 2, 9, "A=b\0AB=c", 9)), 1);
    static const char *const twice[] = {"A=b", "A=c"};
    ck_assert_int_eq(encode(twice, 2, NULL, 0), -EINVAL);
    /* shorter than the fixed part */
    ck_assert_int_eq(decode_raw(pay, 7), -EPROTO);
    ck_assert_int_eq(decode_raw(pay, 0), -EPROTO);
    /* CREDENTIALS comes from the host only */
    struct agent_decoder d;
    struct agent_msg m;
    size_t used;
    n = (size_t)encode(NULL, 0, PEM, sizeof(PEM) - 1);
    ck_assert_int_eq(agent_decoder_init(&d, AGENT_DIR_REPLY), 0);
    ck_assert_int_eq(agent_decode(&d, frame, n, &used, &m), -EPROTO);
    agent_decoder_free(&d);
    /* bad arguments to the encoder */
    static const char *const holes[] = {"A=b", NULL};
    ck_assert_int_eq(encode(holes, 2, NULL, 0), -EINVAL);
    ck_assert_int_eq(encode(NULL, 1, NULL, 0), -EINVAL);
    ck_assert_int_eq(encode(NULL, 0, NULL, 5), -EINVAL);
    struct agent_cred c = {.pem = PEM, .pem_len = sizeof(PEM) - 1};
    ck_assert_int_eq(agent_encode_credentials(frame, AGENT_HDR_SIZE + 20, &c), -EMSGSIZE);
    ck_assert_int_eq(agent_encode_credentials(frame, 4, &c), -EMSGSIZE);
}
END_TEST

/* A PEM as a broken host would send it (after one good entry), and as a
 * caller would ask for it: refused both ways. */
static void bad_pem(const char *pem, size_t len)
{
    static uint8_t body[AGENT_CRED_MAX_PEM + 64];
    memcpy(body, "A=b", 4);
    memcpy(body + 4, pem, len);
    ck_assert_int_eq(decode_raw(pay, raw(pay, 1, 4, body, 4 + len)), -EPROTO);
    static const char *const env[] = {"A=b"};
    ck_assert_int_eq(encode(env, 1, pem, len), len > AGENT_CRED_MAX_PEM ? -EMSGSIZE : -EINVAL);
}

START_TEST(hostile_pem)
{
    static char pem[AGENT_CRED_MAX_PEM + 2];
    size_t l = sizeof(PEM) - 1;
    memcpy(pem, PEM, l);
    pem[40] = 0; /* a NUL inside */
    bad_pem(pem, l);
    memcpy(pem, PEM, l);
    pem[40] = (char)0xc3; /* not ASCII */
    bad_pem(pem, l);
    pem[40] = '\t';
    bad_pem(pem, l);
    pem[40] = 0x7f;
    bad_pem(pem, l);
    memcpy(pem, PEM, l);
    pem[0] = ' '; /* not BEGIN at its very start */
    bad_pem(pem, l);
    bad_pem("-----BEGIN CERTIFICATE----", 26);
    bad_pem("-----BEGIN PRIVATE KEY-----\n", 28);
    bad_pem("MIIB\n", 5);
    memset(pem, 'A', sizeof(pem));
    memcpy(pem, PEM, 27);
    bad_pem(pem, AGENT_CRED_MAX_PEM + 1); /* oversize */
    /* BEGIN alone is enough for the protocol; what it holds is the host's */
    static const char *const env[] = {"A=b"};
    ck_assert_int_gt(encode(env, 1, AGENT_CRED_PEM_BEGIN, 27), 0);
    ck_assert_int_eq(decode_raw(pay, raw(pay, 1, 4, "A=b\0" AGENT_CRED_PEM_BEGIN, 4 + 27)), 1);
}
END_TEST

/* ---- agent_credentials against scripted answers ---- */

static uint8_t script[4096];
static size_t slen;
#define ADD(expr) (slen += (size_t)(expr))
#define AT script + slen, sizeof(script) - slen
static char why[256];

/* Queues the script (then EOF unless open_end), runs the helper with
 * ("T=ph", PEM), and checks what it sent. */
static int script_cred(unsigned wait_ms, int open_end, int *sv)
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(write(sv[1], script, slen), (ssize_t)slen);
    if (!open_end)
        shutdown(sv[1], SHUT_WR);
    static const char *const env[] = {"T=ph"};
    memset(why, 'x', sizeof(why));
    int rc = agent_credentials_wait(sv[0], env, 1, PEM, sizeof(PEM) - 1, wait_ms, why, sizeof(why));
    ssize_t n = recv(sv[1], frame, sizeof(frame), MSG_DONTWAIT);
    struct agent_cred c;
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(decode(frame, (size_t)n, &c), 1);
    ck_assert_uint_eq(c.envc, 1);
    ck_assert_str_eq(c.env[0], "T=ph");
    ck_assert_mem_eq(c.pem, PEM, sizeof(PEM) - 1);
    ck_assert(rc ? why[0] != 0 : why[0] == 0);
    return rc;
}

static void close_pair(int *sv)
{
    close(sv[0]);
    close(sv[1]);
}

START_TEST(helper)
{
    int sv[2];
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode(AT, AGENT_DONE, NULL, 0));
    ADD(agent_encode_started(AT, 5)); /* the next request's: left for its reader */
    ck_assert_int_eq(script_cred(1000, 0, sv), 0);
    uint8_t rest[64];
    ck_assert_int_eq(recv(sv[0], rest, sizeof(rest), 0), AGENT_HDR_SIZE + AGENT_STARTED_SIZE);
    close_pair(sv);

    slen = 0;
    ADD(agent_encode_error(AT, ENOSPC, AGENT_OP_FILE));
    ck_assert_int_eq(script_cred(1000, 0, sv), -ENOSPC);
    ck_assert_str_eq(why, "the guest could not install the credentials: No space left on device");
    close_pair(sv);
    slen = 0;
    ADD(agent_encode_error(AT, EPROTO, AGENT_OP_PROTO));
    ck_assert_int_eq(script_cred(1000, 0, sv), -EPROTO);
    ck_assert_str_eq(why, "the guest could not install the credentials: the agent refused the "
                          "request: Protocol error");
    close_pair(sv);

    /* answers that are not the credentials' */
    slen = 0;
    ADD(agent_encode_error(AT, ENOENT, AGENT_OP_EXEC));
    ck_assert_int_eq(script_cred(1000, 0, sv), -EPROTO);
    ck_assert_str_eq(why, "the guest could not install the credentials: the guest agent "
                          "answered out of turn");
    close_pair(sv);
    slen = 0;
    ADD(agent_encode(AT, AGENT_RESEEDED, NULL, 0));
    ck_assert_int_eq(script_cred(1000, 0, sv), -EPROTO);
    close_pair(sv);
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ck_assert_int_eq(script_cred(1000, 0, sv), -ECONNRESET); /* EOF */
    ck_assert_str_eq(why, "lost the guest agent while it installed the credentials: "
                          "Connection reset by peer");
    close_pair(sv);
    /* a version-3 agent (it would end the conversation) */
    slen = (size_t)agent_encode_ready(script, sizeof(script), 3, 0);
    wr16(script, 4, 3);
    ck_assert_int_eq(script_cred(1000, 0, sv), -EPROTONOSUPPORT);
    ck_assert_ptr_nonnull(strstr(why, "another protocol version"));
    close_pair(sv);
}
END_TEST

START_TEST(helper_no_answer)
{
    int sv[2];
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = script_cred(300, 1, sv);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    ck_assert_int_eq(rc, -ETIMEDOUT);
    ck_assert_int_ge(ms, 300);
    ck_assert_int_lt(ms, 5000);
    ck_assert_str_eq(why, "the guest could not install the credentials: the guest agent did not "
                          "answer in 300 ms");
    close_pair(sv);
}
END_TEST

/* What the encoder refuses is never sent. */
START_TEST(helper_refuses)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    static const char *const env[] = {"T=two words"};
    ck_assert_int_eq(agent_credentials(sv[0], env, 1, NULL, 0, why, sizeof(why)), -EINVAL);
    ck_assert_str_eq(why, "the credentials were not sent: an entry or the CA is not what the "
                          "protocol allows");
    ck_assert_int_eq(agent_credentials(sv[0], env, AGENT_CRED_MAX_ENVS + 1, NULL, 0, NULL, 0),
                     -EMSGSIZE);
    ck_assert_int_eq(agent_credentials(sv[0], NULL, 0, "MIIB", 4, why, sizeof(why)), -EINVAL);
    ck_assert_int_eq(recv(sv[1], frame, sizeof(frame), MSG_DONTWAIT), -1);
    close_pair(sv);
}
END_TEST

Suite *agent_cred_suite(void)
{
    Suite *s = suite_create("agent_cred");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, at_the_limits);
    tcase_add_test(tc, hostile_entries);
    tcase_add_test(tc, hostile_sections);
    tcase_add_test(tc, hostile_pem);
    suite_add_tcase(s, tc);
    tc = tcase_create("helper");
    tcase_add_test(tc, helper);
    tcase_add_test(tc, helper_no_answer);
    tcase_add_test(tc, helper_refuses);
    suite_add_tcase(s, tc);
    return s;
}
