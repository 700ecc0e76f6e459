/* vmm/agent_client/agent_client.c: the exec protocol's encoders and its decoder, with
 * well-formed frames and hostile ones (each a frame a compromised agent, or
 * a broken host, could send). */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/agent_client/agent_client.h"
#include "vmm/util/exit_codes.h"

#define BIG (AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD)

static uint8_t *buf;
static struct agent_decoder dec;

static void setup(void)
{
    buf = calloc(1, BIG + 64);
    ck_assert_ptr_nonnull(buf);
}

static void teardown(void)
{
    agent_decoder_free(&dec);
    free(buf);
}

/* Feeds data[0..len) in one call; returns agent_decode's result and
 * checks every byte was consumed when a message completed. */
static int decode_all(enum agent_dir dir, const uint8_t *data, size_t len, struct agent_msg *m)
{
    agent_decoder_free(&dec);
    ck_assert_int_eq(agent_decoder_init(&dec, dir), 0);
    size_t used = 0;
    int rc = agent_decode(&dec, data, len, &used, m);
    if (rc == 1)
        ck_assert_uint_eq(used, len);
    return rc;
}

/* A frame with an arbitrary header (no validation) around payload. */
static size_t raw_frame(uint8_t *out, uint32_t magic, uint16_t ver, uint16_t type, uint32_t len,
                        const void *payload, size_t plen)
{
    wr32(out, 0, magic);
    wr16(out, 4, ver);
    wr16(out, 6, type);
    wr32(out, 8, len);
    if (plen)
        memcpy(out + AGENT_HDR_SIZE, payload, plen);
    return AGENT_HDR_SIZE + plen;
}

static const char *const argv3[] = {"sh", "-c", "echo hi"};
static const char *const env2[] = {"PATH=/bin", "X=1"};

static ssize_t sample_exec(uint8_t *out)
{
    struct agent_exec_req r;
    agent_exec_req_init(&r);
    r.argv = argv3;
    r.argc = 3;
    r.envp = env2;
    r.envc = 2;
    r.cwd = "/tmp";
    r.uid = 1000;
    r.timeout_ms = 5000;
    r.flags = AGENT_EXEC_F_STDIN;
    r.rlim_nproc = 64;
    return agent_encode_exec(out, BIG, &r);
}

START_TEST(exec_round_trip)
{
    ssize_t n = sample_exec(buf);
    ck_assert_int_gt(n, 0);
    struct agent_msg m;
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, (size_t)n, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_EXEC);
    static const char *av[AGENT_MAX_ARGS + 1], *ev[AGENT_MAX_ENVS + 1];
    struct agent_exec_req r;
    ck_assert_int_eq(agent_exec_parse(m.payload, m.len, &r, av, ev), 0);
    ck_assert_uint_eq(r.argc, 3);
    ck_assert_str_eq(r.argv[2], "echo hi");
    ck_assert_ptr_null(r.argv[3]);
    ck_assert_uint_eq(r.envc, 2);
    ck_assert_str_eq(r.envp[1], "X=1");
    ck_assert_str_eq(r.cwd, "/tmp");
    ck_assert_uint_eq(r.uid, 1000);
    ck_assert_uint_eq(r.gid, AGENT_ID_DEFAULT);
    ck_assert_uint_eq(r.timeout_ms, 5000);
    ck_assert_uint_eq(r.flags, AGENT_EXEC_F_STDIN);
    ck_assert_uint_eq(r.rlim_nproc, 64);
    ck_assert(r.rlim_fsize == AGENT_RLIM_KEEP);
}
END_TEST

START_TEST(replies_round_trip)
{
    struct agent_msg m;
    size_t n = (size_t)agent_encode_ready(buf, BIG, AGENT_VERSION, 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), 1);
    ck_assert_uint_eq(m.u.ready.version, AGENT_VERSION);
    n = (size_t)agent_encode_started(buf, BIG, 4242);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), 1);
    ck_assert_uint_eq(m.u.started.pid, 4242);
    n = (size_t)agent_encode_exit(buf, BIG, AGENT_EXIT_SIGNAL, 9, AGENT_EXIT_F_TIMED_OUT);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), 1);
    ck_assert_uint_eq(m.u.exit.kind, AGENT_EXIT_SIGNAL);
    ck_assert_uint_eq(m.u.exit.value, 9);
    ck_assert_uint_eq(m.u.exit.flags, AGENT_EXIT_F_TIMED_OUT);
    n = (size_t)agent_encode_error(buf, BIG, ENOENT, AGENT_OP_EXEC);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), 1);
    ck_assert_uint_eq(m.u.error.code, ENOENT);
    n = (size_t)agent_encode(buf, BIG, AGENT_STDERR, "oops", 4);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_STDERR);
    ck_assert_mem_eq(m.payload, "oops", 4);
}
END_TEST

START_TEST(file_requests_round_trip)
{
    struct agent_msg m;
    size_t n = (size_t)agent_encode_file_put(buf, BIG, "/tmp/f", 0, 0644, 123456);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), 1);
    ck_assert_str_eq(m.u.file_put.path, "/tmp/f");
    ck_assert_uint_eq(m.u.file_put.mode, 0644);
    ck_assert_uint_eq(m.u.file_put.size, 123456);
    n = (size_t)agent_encode_file_get(buf, BIG, "/etc/x");
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), 1);
    ck_assert_str_eq(m.u.file_get.path, "/etc/x");
    ck_assert_int_eq(agent_encode_file_get(buf, BIG, ""), -EINVAL);
    ck_assert_int_eq(agent_encode_file_put(buf, BIG, "/x", 0, 0100000, 1), -EINVAL);
}
END_TEST

START_TEST(reseed_round_trip)
{
    struct agent_msg m;
    uint8_t seed[AGENT_RESEED_SIZE]; /* the first AGENT_RESEED_SEED are the seed */
    for (unsigned i = 0; i < sizeof(seed); i++)
        seed[i] = (uint8_t)(i * 13 + 1);
    size_t n = (size_t)agent_encode_reseed(buf, BIG, 0x0123456789abcdefULL, seed);
    ck_assert_uint_eq(n, AGENT_HDR_SIZE + AGENT_RESEED_SIZE);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_RESEED);
    ck_assert_uint_eq(m.u.reseed.realtime_ns, 0x0123456789abcdefULL);
    ck_assert(!memcmp(m.u.reseed.seed, seed, AGENT_RESEED_SEED));
    /* exactly its size, and only host -> agent */
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_RESEED, AGENT_RESEED_SIZE - 1, seed,
                  AGENT_RESEED_SIZE - 1);
    ck_assert_int_lt(decode_all(AGENT_DIR_REQUEST, buf, n, &m), 0);
    n = (size_t)agent_encode_reseed(buf, BIG, 1, seed);
    ck_assert_int_lt(decode_all(AGENT_DIR_REPLY, buf, n, &m), 0);
    ck_assert_int_eq(agent_encode_reseed(buf, AGENT_HDR_SIZE + 3, 1, seed), -EMSGSIZE);
}
END_TEST

/* RESEEDED: empty, agent -> host only; an ERROR may name the reseed's
 * two steps. */
START_TEST(reseeded_reply)
{
    struct agent_msg m;
    size_t n = (size_t)agent_encode(buf, BIG, AGENT_RESEEDED, NULL, 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_RESEEDED);
    ck_assert_uint_eq(m.len, 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_RESEEDED, 1, "x", 1);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EMSGSIZE);
    n = (size_t)agent_encode_error(buf, BIG, EPERM, AGENT_OP_RESEED);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), 1);
    ck_assert_uint_eq(m.u.error.op, AGENT_OP_RESEED);
    n = (size_t)agent_encode_error(buf, BIG, EINVAL, AGENT_OP_CLOCK);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), 1);
    ck_assert_uint_eq(m.u.error.op, AGENT_OP_CLOCK);
}
END_TEST

START_TEST(bad_magic)
{
    struct agent_msg m;
    size_t n = raw_frame(buf, AGENT_MAGIC ^ 1, AGENT_VERSION, AGENT_EXIT, 12, "", 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EBADMSG);
}
END_TEST

START_TEST(wrong_version)
{
    struct agent_msg m;
    size_t n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION + 1, AGENT_STARTED, 4, "abcd", 4);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTONOSUPPORT);
}
END_TEST

START_TEST(unknown_type)
{
    struct agent_msg m;
    size_t n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, 0x7777, 0, "", 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, 0, 0, "", 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
}
END_TEST

/* A request type coming from the agent (or a reply type from the host). */
START_TEST(misdirected_type)
{
    struct agent_msg m;
    size_t n = (size_t)agent_encode(buf, BIG, AGENT_KILL, NULL, 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
    n = (size_t)agent_encode_exit(buf, BIG, AGENT_EXIT_CODE, 0, 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
}
END_TEST

/* SYNC (version 13): an empty request, refused with a payload or from
 * the agent. */
START_TEST(sync_codec)
{
    struct agent_msg m;
    size_t n = (size_t)agent_encode(buf, BIG, AGENT_SYNC, NULL, 0);
    ck_assert_int_eq(n, AGENT_HDR_SIZE);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_SYNC);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_SYNC, 1, "x", 1);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EMSGSIZE); /* past its 0 bytes */
}
END_TEST

/* SIGNAL: a request of exactly 4 bytes naming a signal 1..64; the
 * encoder refuses what the decoder would. */
START_TEST(signal_codec)
{
    struct agent_msg m;
    size_t n = (size_t)agent_encode_signal(buf, BIG, 15);
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_SIGNAL_SIZE);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_SIGNAL);
    ck_assert_uint_eq(m.u.signal.signo, 15);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO); /* not from the agent */
    ck_assert_uint_eq(m.u.signal.flags, 0);
    ck_assert_int_eq(agent_encode_signal(buf, BIG, 0), -EINVAL);
    ck_assert_int_eq(agent_encode_signal(buf, BIG, 65), -EINVAL);
    /* protocol 14: the process alone; any other bit is refused */
    n = (size_t)agent_encode_signal(buf, BIG, 1 | AGENT_SIGNAL_F_PROCESS);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), 1);
    ck_assert_uint_eq(m.u.signal.signo, 1);
    ck_assert_uint_eq(m.u.signal.flags, AGENT_SIGNAL_F_PROCESS);
    ck_assert_int_eq(agent_encode_signal(buf, BIG, AGENT_SIGNAL_F_PROCESS), -EINVAL);
    ck_assert_int_eq(agent_encode_signal(buf, BIG, 15 | 0x200), -EINVAL);
    uint8_t p[8] = {0};
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_SIGNAL, 4, p, 4); /* signal 0 */
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
    p[0] = 65;
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_SIGNAL, 4, p, 4);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
    p[0] = 9;
    p[1] = 0x02; /* 9 | 0x200: no such flag */
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_SIGNAL, 4, p, 4);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
    p[1] = 0;
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_SIGNAL, 3, p, 3); /* short */
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_SIGNAL, 8, p, 8); /* long */
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EMSGSIZE);
}
END_TEST

/* ATTACH (host -> agent) and ATTACHED (agent -> host), protocol 12:
 * exact sizes, the zero word, a pid, each only in its direction. */
START_TEST(attach_codec)
{
    struct agent_msg m;
    size_t n = (size_t)agent_encode_attach(buf, BIG, 1234, 5678901234ull);
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_ATTACH_SIZE);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_ATTACH);
    ck_assert_uint_eq(m.u.attach.pid, 1234);
    ck_assert_uint_eq(m.u.attach.have, 5678901234ull);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO); /* not from the agent */
    n = (size_t)agent_encode_attached(buf, BIG, 1234, 99, 7);
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_ATTACHED_SIZE);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_ATTACHED);
    ck_assert_uint_eq(m.u.attached.pid, 1234);
    ck_assert_uint_eq(m.u.attached.from, 99);
    ck_assert_uint_eq(m.u.attached.stdin_got, 7);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO); /* not from the host */
    uint8_t p[32] = {0};
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_ATTACH, 16, p, 16); /* pid 0 */
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
    p[0] = 1;
    p[4] = 1; /* the zero word is not */
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_ATTACH, 16, p, 16);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_ATTACHED, 24, p, 24);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
    p[4] = 0;
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_ATTACH, 15, p, 15); /* short */
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_ATTACH, 17, p, 17); /* long */
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EMSGSIZE);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_ATTACHED, 23, p, 23);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_ATTACHED, 24, p, 24);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), 1);
}
END_TEST

/* Rejected from the header alone: not one payload byte is needed. */
START_TEST(length_over_max)
{
    struct agent_msg m;
    size_t used;
    size_t n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_STDOUT, AGENT_MAX_CHUNK + 1, "", 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EMSGSIZE);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_STDOUT, 0xffffffffu, "", 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EMSGSIZE);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_EXIT, AGENT_EXIT_SIZE + 1, "", 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EMSGSIZE);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_EXEC, AGENT_MAX_PAYLOAD + 1, "", 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EMSGSIZE);
    /* sticky: the stream is dead */
    n = (size_t)agent_encode_started(buf, BIG, 1);
    ck_assert_int_eq(agent_decode(&dec, buf, n, &used, &m), -EMSGSIZE);
}
END_TEST

START_TEST(length_shorter_than_fields)
{
    struct agent_msg m;
    uint8_t p[64] = {0};
    size_t n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_EXIT, 8, p, 8);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_STARTED, 3, p, 3);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_EXEC, 40, p, 40);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_FILE_PUT, 10, p, 10);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
    /* an empty data chunk is not a message either */
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_STDOUT, 0, p, 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
}
END_TEST

/* Mutates field `off` (u32) of the sample EXEC payload and decodes. */
static int exec_with(size_t off, uint32_t v)
{
    size_t n = (size_t)sample_exec(buf);
    wr32(buf, AGENT_HDR_SIZE + off, v);
    struct agent_msg m;
    return decode_all(AGENT_DIR_REQUEST, buf, n, &m);
}

START_TEST(argv_count_larger_than_payload)
{
    ck_assert_int_eq(exec_with(40, 4), -EPROTO);    /* 4 strings, 3 present */
    ck_assert_int_eq(exec_with(44, 3), -EPROTO);    /* env: 3 of 2 */
    ck_assert_int_eq(exec_with(48, 100), -EPROTO);  /* argv_bytes past the end */
    ck_assert_int_eq(exec_with(52, 2000), -EPROTO);
    ck_assert_int_eq(exec_with(40, 0), -EPROTO);    /* argc 0 */
    ck_assert_int_eq(exec_with(40, 2), -EPROTO);    /* fewer than the bytes hold */
    ck_assert_int_eq(exec_with(12, 0x80), -EPROTO); /* unknown flag */
}
END_TEST

START_TEST(huge_counts)
{
    ck_assert_int_eq(exec_with(40, 0xffffffffu), -EPROTO);
    ck_assert_int_eq(exec_with(44, 0xffffffffu), -EPROTO);
    ck_assert_int_eq(exec_with(48, 0xffffffffu), -EPROTO);
    ck_assert_int_eq(exec_with(52, 0xfffffff0u), -EPROTO);
    ck_assert_int_eq(exec_with(40, AGENT_MAX_ARGS + 1), -EPROTO);
    /* byte counts that together wrap a 32-bit sum */
    size_t n = (size_t)sample_exec(buf);
    wr32(buf, AGENT_HDR_SIZE + 48, 0x80000000u);
    wr32(buf, AGENT_HDR_SIZE + 52, 0x80000000u);
    struct agent_msg m;
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
}
END_TEST

START_TEST(strings_without_nul)
{
    struct agent_msg m;
    size_t n = (size_t)sample_exec(buf);
    /* "echo hi\0" is the last argv string: drop its NUL */
    uint8_t *a = buf + AGENT_HDR_SIZE + AGENT_EXEC_FIXED;
    a[3 + 3 + 7] = 'X';
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
    /* the cwd without its NUL */
    n = (size_t)sample_exec(buf);
    buf[n - 1] = 'p';
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
    /* a path with a NUL inside, and without one */
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_FILE_GET, 4, "a\0b", 4);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
    n = raw_frame(buf, AGENT_MAGIC, AGENT_VERSION, AGENT_FILE_GET, 3, "abc", 3);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, n, &m), -EPROTO);
}
END_TEST

START_TEST(bad_reply_values)
{
    struct agent_msg m;
    size_t n = (size_t)agent_encode_exit(buf, BIG, AGENT_EXIT_CODE, 256, 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
    n = (size_t)agent_encode_exit(buf, BIG, AGENT_EXIT_SIGNAL, 0, 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
    n = (size_t)agent_encode_exit(buf, BIG, 7, 0, 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
    n = (size_t)agent_encode_exit(buf, BIG, AGENT_EXIT_CODE, 0, 2);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
    n = (size_t)agent_encode_error(buf, BIG, 0, AGENT_OP_EXEC);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
    n = (size_t)agent_encode_error(buf, BIG, ENOENT, AGENT_OP_MAX + 1);
    ck_assert_int_eq(decode_all(AGENT_DIR_REPLY, buf, n, &m), -EPROTO);
}
END_TEST

/* Three messages delivered one byte per call come out whole, in order. */
START_TEST(split_byte_by_byte)
{
    size_t n = (size_t)agent_encode_started(buf, BIG, 7);
    n += (size_t)agent_encode(buf + n, BIG - n, AGENT_STDOUT, "hello", 5);
    n += (size_t)agent_encode_exit(buf + n, BIG - n, AGENT_EXIT_CODE, 42, 0);
    ck_assert_int_eq(agent_decoder_init(&dec, AGENT_DIR_REPLY), 0);
    uint16_t seen[3];
    unsigned got = 0;
    for (size_t i = 0; i < n; i++) {
        struct agent_msg m;
        size_t used;
        int rc = agent_decode(&dec, buf + i, 1, &used, &m);
        ck_assert_int_ge(rc, 0);
        ck_assert_uint_eq(used, 1);
        if (rc == 1) {
            ck_assert_uint_lt(got, 3);
            seen[got++] = m.type;
            if (m.type == AGENT_STDOUT)
                ck_assert_mem_eq(m.payload, "hello", 5);
            if (m.type == AGENT_EXIT)
                ck_assert_uint_eq(m.u.exit.value, 42);
        }
    }
    ck_assert_uint_eq(got, 3);
    ck_assert_uint_eq(seen[0], AGENT_STARTED);
    ck_assert_uint_eq(seen[2], AGENT_EXIT);
}
END_TEST

/* Several messages in one buffer: each call stops after one. */
START_TEST(many_in_one_buffer)
{
    size_t n = (size_t)agent_encode(buf, BIG, AGENT_STDIN, "ab", 2);
    n += (size_t)agent_encode(buf + n, BIG - n, AGENT_STDIN_EOF, NULL, 0);
    ck_assert_int_eq(agent_decoder_init(&dec, AGENT_DIR_REQUEST), 0);
    struct agent_msg m;
    size_t used;
    ck_assert_int_eq(agent_decode(&dec, buf, n, &used, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_STDIN);
    ck_assert_uint_eq(used, AGENT_HDR_SIZE + 2);
    size_t off = used;
    ck_assert_int_eq(agent_decode(&dec, buf + off, n - off, &used, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_STDIN_EOF);
    ck_assert_uint_eq(off + used, n);
    ck_assert_int_eq(agent_decode(&dec, buf, 0, &used, &m), 0);
}
END_TEST

START_TEST(encoder_limits)
{
    struct agent_exec_req r;
    agent_exec_req_init(&r);
    ck_assert_int_eq(agent_encode_exec(buf, BIG, &r), -EINVAL); /* argc 0 */
    static const char *many[AGENT_MAX_ARGS + 1];
    for (unsigned i = 0; i <= AGENT_MAX_ARGS; i++)
        many[i] = "x";
    r.argv = many;
    r.argc = AGENT_MAX_ARGS + 1;
    ck_assert_int_eq(agent_encode_exec(buf, BIG, &r), -EINVAL);
    r.argc = AGENT_MAX_ARGS; /* the limit itself is fine, and decodes */
    ssize_t n = agent_encode_exec(buf, BIG, &r);
    ck_assert_int_gt(n, 0);
    struct agent_msg m;
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, (size_t)n, &m), 1);
    char *huge = malloc(AGENT_MAX_ARGV_BYTES + 1);
    memset(huge, 'a', AGENT_MAX_ARGV_BYTES);
    huge[AGENT_MAX_ARGV_BYTES] = 0;
    const char *one[] = {huge};
    r.argv = one;
    r.argc = 1;
    ck_assert_int_eq(agent_encode_exec(buf, BIG, &r), -EMSGSIZE);
    huge[AGENT_MAX_ARGV_BYTES - 1] = 0; /* exactly the limit with its NUL */
    n = agent_encode_exec(buf, BIG, &r);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, (size_t)n, &m), 1);
    ck_assert_int_eq(agent_encode_exec(buf, (size_t)n - 1, &r), -EMSGSIZE);
    free(huge);
}
END_TEST

START_TEST(result_status_mapping)
{
    struct agent_exec_result r = {.started = 1, .value = 42};
    ck_assert_int_eq(agent_result_status(&r), 42);
    r.signaled = 1;
    r.value = 9;
    ck_assert_int_eq(agent_result_status(&r), 137);
    r.timed_out = 1;
    ck_assert_int_eq(agent_result_status(&r), EXIT_TIMEOUT);
    r = (struct agent_exec_result){.error = ENOENT, .error_op = AGENT_OP_EXEC};
    ck_assert_int_eq(agent_result_status(&r), EXIT_NOT_FOUND);
    r.error = EACCES;
    ck_assert_int_eq(agent_result_status(&r), EXIT_CANNOT_EXECUTE);
    r = (struct agent_exec_result){.error = ENOENT, .error_op = AGENT_OP_CHDIR};
    ck_assert_int_eq(agent_result_status(&r), EXIT_CANNOT_EXECUTE);
    r = (struct agent_exec_result){0};
    ck_assert_int_eq(agent_result_status(&r), EXIT_AIRLOCK_ERROR);
}
END_TEST

/* ---- the blocking helpers against a scripted "agent" ---- */

/* The whole of a memfd as a NUL-terminated string. */
static void readback(int fd, char *to, size_t cap)
{
    ssize_t n = pread(fd, to, cap - 1, 0);
    ck_assert_int_ge(n, 0);
    to[n] = 0;
}

/* Queues `script` as the agent's replies on a socketpair (whole, then EOF),
 * runs agent_exec for `true`, and returns its result; stdout and stderr
 * land in memfds read back into out/err (NUL-terminated). */
static uint64_t script_max_output = UINT64_MAX; /* agent_exec's output cap */
static int script_pipes;                          /* bit 0: stdout a pipe, bit 1: stderr */

static int script_exec(const uint8_t *script, size_t len, struct agent_exec_result *res,
                       char *out, char *err, size_t cap)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(write(sv[1], script, len), (ssize_t)len);
    shutdown(sv[1], SHUT_WR);
    int fo = memfd_create("out", MFD_CLOEXEC), fe = memfd_create("err", MFD_CLOEXEC);
    /* Pipes: the output is spliced from the socket (memfds: copied).
     * script_pipes bit 0: stdout is one, bit 1: stderr. */
    int po[2] = {-1, -1}, pe[2] = {-1, -1};
    if (script_pipes & 1)
        ck_assert_int_eq(pipe2(po, O_CLOEXEC), 0);
    if (script_pipes & 2)
        ck_assert_int_eq(pipe2(pe, O_CLOEXEC), 0);
    static const char *const argv[] = {"true"};
    struct agent_exec_req req;
    agent_exec_req_init(&req);
    req.argv = argv;
    req.argc = 1;
    int rc = agent_exec(sv[0], &req, po[1] >= 0 ? po[1] : fo, pe[1] >= 0 ? pe[1] : fe, -1,
                        script_max_output, res);
    /* What the pipes got goes to the memfds, so the checks are the same. */
    int pipes[2][2] = {{po[0], fo}, {pe[0], fe}};
    close(po[1]);
    close(pe[1]);
    for (int i = 0; i < 2; i++) {
        ssize_t k;
        while (pipes[i][0] >= 0 && (k = read(pipes[i][0], buf, BIG)) > 0)
            ck_assert_int_eq(write(pipes[i][1], buf, (size_t)k), k);
        close(pipes[i][0]);
    }
    /* What the helper sent is one well-formed EXEC and nothing more. */
    ssize_t n = read(sv[1], buf, BIG);
    struct agent_msg m;
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, (size_t)n, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_EXEC);
    readback(fo, out, cap);
    readback(fe, err, cap);
    close(fo);
    close(fe);
    close(sv[0]);
    close(sv[1]);
    return rc;
}

/* Builds a reply script from frames appended with these. */
static uint8_t script[4096];
static size_t slen;
#define ADD(expr) (slen += (size_t)(expr))
#define AT script + slen, sizeof(script) - slen

/* READY, STARTED, "hi" "err" "!" on stdout, stderr, stdout, exit 3. */
static void happy_script(void)
{
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode_started(AT, 99));
    ADD(agent_encode(AT, AGENT_STDOUT, "hi", 2));
    ADD(agent_encode(AT, AGENT_STDERR, "err", 3));
    ADD(agent_encode(AT, AGENT_STDOUT, "!", 1));
    ADD(agent_encode_exit(AT, AGENT_EXIT_CODE, 3, 0));
}

START_TEST(helper_exec_happy)
{
    happy_script();
    struct agent_exec_result res;
    char out[64], err[64];
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), 0);
    ck_assert_int_eq(agent_result_status(&res), 3);
    ck_assert_uint_eq(res.pid, 99);
    ck_assert_uint_eq(res.agent_version, AGENT_VERSION);
    ck_assert_str_eq(out, "hi!");
    ck_assert_str_eq(err, "err");
}
END_TEST

struct sig_job {
    int sock, sig_r;
    struct agent_exec_result res;
    int rc;
};

static void *sig_job_run(void *arg)
{
    struct sig_job *j = arg;
    static const char *const argv[] = {"sleep"};
    struct agent_exec_req req;
    agent_exec_req_init(&req);
    req.argv = argv;
    req.argc = 1;
    j->rc = agent_exec_signals(j->sock, &req, -1, -1, -1, j->sig_r, UINT64_MAX, &j->res);
    return NULL;
}

/* Signal numbers written to agent_exec_signals' fd reach the agent as
 * SIGNAL frames, in order, once the command started, with
 * AGENT_SIGQ_PROCESS as AGENT_SIGNAL_F_PROCESS; a byte out of range
 * sends nothing. */
START_TEST(helper_exec_signals)
{
    int sv[2], sp[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(pipe2(sp, O_CLOEXEC), 0);
    struct sig_job j = {.sock = sv[0], .sig_r = sp[0]};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, sig_job_run, &j), 0);
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode_started(AT, 7));
    ck_assert_int_eq(write(sv[1], script, slen), (ssize_t)slen);
    /* 0 would start a size record (AGENT_SIGQ_WINSIZE) */
    uint8_t sigs[5] = {15, 65, 2, AGENT_SIGQ_PROCESS | 9, AGENT_SIGQ_PROCESS | 65};
    ck_assert_int_eq(write(sp[1], sigs, 5), 5);
    struct agent_decoder d;
    ck_assert_int_eq(agent_decoder_init(&d, AGENT_DIR_REQUEST), 0);
    uint32_t seen[4];
    unsigned nseen = 0, execs = 0;
    uint8_t in[4096];
    while (nseen < 3) {
        ssize_t r = read(sv[1], in, sizeof(in));
        ck_assert_int_gt(r, 0);
        size_t off = 0;
        while (off < (size_t)r) {
            size_t used;
            struct agent_msg m;
            int rc = agent_decode(&d, in + off, (size_t)r - off, &used, &m);
            ck_assert_int_ge(rc, 0);
            off += used;
            if (rc == 1 && m.type == AGENT_EXEC)
                execs++;
            else if (rc == 1) {
                ck_assert_uint_eq(m.type, AGENT_SIGNAL);
                ck_assert_uint_lt(nseen, 4);
                seen[nseen++] = m.u.signal.signo | m.u.signal.flags;
            }
        }
    }
    agent_decoder_free(&d);
    ck_assert_uint_eq(execs, 1);
    ck_assert_uint_eq(seen[0], 15);
    ck_assert_uint_eq(seen[1], 2);
    ck_assert_uint_eq(seen[2], 9 | AGENT_SIGNAL_F_PROCESS);
    slen = 0;
    ADD(agent_encode_exit(AT, AGENT_EXIT_SIGNAL, 2, 0));
    ck_assert_int_eq(write(sv[1], script, slen), (ssize_t)slen);
    pthread_join(t, NULL);
    ck_assert_int_eq(j.rc, 0);
    ck_assert(j.res.signaled);
    ck_assert_int_eq(agent_result_status(&j.res), 128 + 2);
    for (int i = 0; i < 2; i++) {
        close(sv[i]);
        close(sp[i]);
    }
}
END_TEST

/* The wall clock does not depend on the guest: an agent that started the
 * command and then says nothing (a stalled PID 1) is given up on at
 * timeout + grace, as a timeout; an agent that reports its own timeout in
 * time is just that. */
START_TEST(helper_exec_host_timeout)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode_started(AT, 7));
    ck_assert_int_eq(write(sv[1], script, slen), (ssize_t)slen); /* then silence, no EOF */
    static const char *const argv[] = {"sleep"};
    struct agent_exec_req req;
    agent_exec_req_init(&req);
    ck_assert_uint_eq(req.host_grace_ms, AGENT_HOST_GRACE_MS);
    req.argv = argv;
    req.argc = 1;
    req.timeout_ms = 200;
    req.host_grace_ms = 300;
    struct agent_exec_result res;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(agent_exec(sv[0], &req, -1, -1, -1, UINT64_MAX, &res), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    ck_assert_int_ge(ms, 500);
    ck_assert_int_lt(ms, 5000);
    ck_assert(res.timed_out && res.host_timeout);
    ck_assert_int_eq(agent_result_status(&res), EXIT_TIMEOUT);
    close(sv[0]);
    close(sv[1]);

    /* The agent's own timeout report, in time: not the host's. */
    slen = 0;
    ADD(agent_encode_started(AT, 7));
    ADD(agent_encode_exit(AT, AGENT_EXIT_SIGNAL, 9, AGENT_EXIT_F_TIMED_OUT));
    char out[8], err[8];
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), 0);
    ck_assert(res.timed_out && !res.host_timeout);
    ck_assert_int_eq(agent_result_status(&res), EXIT_TIMEOUT);
}
END_TEST

/* The output cap counts stdout and stderr together, cuts the chunk that
 * crosses it, drops (and counts) the rest, and keeps the command's status. */
START_TEST(helper_exec_output_cap)
{
    happy_script();
    struct agent_exec_result res;
    char out[64], err[64];
    script_max_output = 3;
    int rc = script_exec(script, slen, &res, out, err, sizeof(out));
    script_max_output = UINT64_MAX;
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(agent_result_status(&res), 3);
    ck_assert_str_eq(out, "hi");
    ck_assert_str_eq(err, "e");
    ck_assert_uint_eq(res.out_bytes, 3);
    ck_assert_uint_eq(res.err_bytes, 3);
    ck_assert_uint_eq(res.dropped, 3);
}
END_TEST

/* agent_exec_attach against a scripted agent: res as an earlier
 * conversation left it (started, pid 7, 5 bytes received). */
static int script_attach(const uint8_t *scr, size_t len, struct agent_exec_result *res, char *out)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(write(sv[1], scr, len), (ssize_t)len);
    shutdown(sv[1], SHUT_WR);
    int fo = memfd_create("out", MFD_CLOEXEC);
    static const char *const argv[] = {"true"};
    struct agent_exec_req req;
    agent_exec_req_init(&req);
    req.argv = argv;
    req.argc = 1;
    *res = (struct agent_exec_result){.started = 1, .pid = 7, .received = 5, .out_bytes = 5};
    int rc = agent_exec_attach(sv[0], &req, fo, fo, -1, -1, UINT64_MAX, res);
    readback(fo, out, 64);
    /* What the helper sent: one ATTACH naming pid 7 and the 5 bytes. */
    ssize_t n = read(sv[1], buf, BIG);
    struct agent_msg m;
    ck_assert_int_eq(decode_all(AGENT_DIR_REQUEST, buf, (size_t)n, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_ATTACH);
    ck_assert_uint_eq(m.u.attach.pid, 7);
    ck_assert_uint_eq(m.u.attach.have, 5);
    close(sv[0]);
    close(sv[1]);
    close(fo);
    return rc;
}

START_TEST(helper_exec_attach)
{
    struct agent_exec_result res;
    char out[64];
    /* Taken up: 3 bytes were gone (from 8 > 5), the rest arrives, EXIT. */
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode_attached(AT, 7, 8, 0));
    ADD(agent_encode(AT, AGENT_STDOUT, "rest", 4));
    ADD(agent_encode_exit(AT, AGENT_EXIT_CODE, 3, 0));
    ck_assert_int_eq(script_attach(script, slen, &res, out), 0);
    ck_assert_str_eq(out, "rest");
    ck_assert_uint_eq(res.lost, 3);
    ck_assert_uint_eq(res.received, 12);
    ck_assert_uint_eq(res.attaches, 1);
    ck_assert_int_eq(agent_result_status(&res), 3);
    /* No such command: the ERROR is the outcome, nothing more. */
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode_error(AT, ESRCH, AGENT_OP_EXEC));
    ck_assert_int_eq(script_attach(script, slen, &res, out), 0);
    ck_assert_int_eq(res.attach_error, ESRCH);
    /* Lies: ATTACHED going back, for another pid, twice, or output before it. */
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode_attached(AT, 7, 4, 0));
    ck_assert_int_eq(script_attach(script, slen, &res, out), -EPROTO);
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode_attached(AT, 8, 5, 0));
    ck_assert_int_eq(script_attach(script, slen, &res, out), -EPROTO);
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode_attached(AT, 7, 5, 0));
    ADD(agent_encode_attached(AT, 7, 5, 0));
    ck_assert_int_eq(script_attach(script, slen, &res, out), -EPROTO);
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode(AT, AGENT_STDOUT, "x", 1));
    ck_assert_int_eq(script_attach(script, slen, &res, out), -EPROTO);
    /* The connection ends before ATTACHED: a transport error, to try again. */
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ck_assert_int_lt(script_attach(script, slen, &res, out), 0);
}
END_TEST

START_TEST(helper_exec_error_reply)
{
    slen = 0;
    ADD(agent_encode_error(AT, ENOENT, AGENT_OP_EXEC));
    struct agent_exec_result res;
    char out[64], err[64];
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), 0);
    ck_assert_int_eq(agent_result_status(&res), EXIT_NOT_FOUND);
}
END_TEST

/* Replies out of the order proto.h fixes are the agent lying. */
START_TEST(helper_exec_out_of_order)
{
    struct agent_exec_result res;
    char out[64], err[64];
    slen = 0;
    ADD(agent_encode(AT, AGENT_STDOUT, "x", 1));
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), -EPROTO);
    slen = 0;
    ADD(agent_encode_started(AT, 1));
    ADD(agent_encode_error(AT, EACCES, AGENT_OP_EXEC));
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), -EPROTO);
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), -EPROTO);
    slen = 0;
    ADD(agent_encode_started(AT, 1));
    ADD(agent_encode_started(AT, 2));
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), -EPROTO);
    slen = 0;
    ADD(agent_encode_exit(AT, AGENT_EXIT_CODE, 0, 0)); /* EXIT before STARTED */
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), -EPROTO);
}
END_TEST

START_TEST(helper_exec_eof_midway)
{
    slen = 0;
    ADD(agent_encode_started(AT, 1));
    ADD(agent_encode(AT, AGENT_STDOUT, "partial", 7));
    slen -= 3; /* the connection dies inside a frame */
    struct agent_exec_result res;
    char out[64], err[64];
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), -ECONNRESET);
}
END_TEST

/* The same replies with stdout and stderr as pipes: the payloads are
 * spliced from the socket, the cap still cuts exactly, and an agent that
 * dies inside a spliced payload or sends output before STARTED is still
 * caught. */
START_TEST(helper_exec_spliced)
{
    struct agent_exec_result res;
    char out[64], err[64];
    script_pipes = 3;
    happy_script();
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), 0);
    ck_assert_int_eq(agent_result_status(&res), 3);
    ck_assert_str_eq(out, "hi!");
    ck_assert_str_eq(err, "err");
    script_max_output = 3;
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), 0);
    script_max_output = UINT64_MAX;
    ck_assert_str_eq(out, "hi");
    ck_assert_str_eq(err, "e");
    ck_assert_uint_eq(res.dropped, 3);
    slen = 0;
    ADD(agent_encode_started(AT, 1));
    ADD(agent_encode(AT, AGENT_STDOUT, "partial", 7));
    slen -= 3;
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), -ECONNRESET);
    ck_assert_str_eq(out, "part");
    slen = 0;
    ADD(agent_encode(AT, AGENT_STDOUT, "x", 1));
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), -EPROTO);
    slen = 0;
    ADD(agent_encode_started(AT, 1));
    ADD(agent_encode(AT, AGENT_FILE_DATA, "x", 1)); /* a data frame, but not an exec's */
    ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), -EPROTO);
    /* One stream a pipe, the other a file: each is spliced or copied on
     * its own (a file on stdout must not stop stderr's splice). */
    for (script_pipes = 1; script_pipes <= 2; script_pipes++) {
        happy_script();
        ck_assert_int_eq(script_exec(script, slen, &res, out, err, sizeof(out)), 0);
        ck_assert_str_eq(out, "hi!");
        ck_assert_str_eq(err, "err");
    }
    script_pipes = 0;
}
END_TEST

/* `airlock run ... | head`: once our stdout has no reader, the exec ends
 * for us at once as 141 (SIGPIPE's status), whether the output was being
 * spliced (into a pipe) or written (into anything else, here a socket);
 * the agent's later replies are not awaited. */
START_TEST(helper_exec_output_closed)
{
    signal(SIGPIPE, SIG_IGN); /* as airlock does */
    for (int spliced = 0; spliced < 2; spliced++) {
        int sv[2], out[2];
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        if (spliced)
            ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
        else
            ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out), 0);
        close(out[0]); /* the reader is gone */
        slen = 0;
        ADD(agent_encode_started(AT, 5));
        ADD(agent_encode(AT, AGENT_STDOUT, "y\n", 2));
        ck_assert_int_eq(write(sv[1], script, slen), (ssize_t)slen); /* no EXIT, no EOF */
        static const char *const argv[] = {"yes"};
        struct agent_exec_req req;
        agent_exec_req_init(&req);
        req.argv = argv;
        req.argc = 1;
        struct agent_exec_result res;
        ck_assert_int_eq(agent_exec(sv[0], &req, out[1], -1, -1, UINT64_MAX, &res), 0);
        ck_assert(res.output_closed);
        ck_assert_int_eq(agent_result_status(&res), 128 + SIGPIPE);
        close(out[1]);
        close(sv[0]);
        close(sv[1]);
    }
}
END_TEST

/* agent_decode_data_frame / _skip / _want: a payload moved by the caller
 * leaves the decoder at the next header, and the decoder will not be
 * misused halfway through. */
START_TEST(decoder_skips_data_payload)
{
    struct agent_decoder d;
    struct agent_msg m;
    size_t used;
    uint16_t type = 0;
    ck_assert_int_eq(agent_decoder_init(&d, AGENT_DIR_REPLY), 0);
    ssize_t n = agent_encode(buf, BIG, AGENT_STDOUT, "hello", 5);
    ssize_t n2 = agent_encode_exit(buf + n, BIG - (size_t)n, AGENT_EXIT_CODE, 7, 0);
    ck_assert_uint_eq(agent_decode_want(&d), AGENT_HDR_SIZE);
    ck_assert_uint_eq(agent_decode_data_frame(&d, &type), 0);
    ck_assert_int_eq(agent_decode(&d, buf, 5, &used, &m), 0);
    ck_assert_uint_eq(agent_decode_want(&d), AGENT_HDR_SIZE - 5);
    ck_assert_int_eq(agent_decode(&d, buf + 5, AGENT_HDR_SIZE - 5, &used, &m), 0);
    ck_assert_uint_eq(agent_decode_want(&d), 5);
    ck_assert_uint_eq(agent_decode_data_frame(&d, &type), 5);
    ck_assert_uint_eq(type, AGENT_STDOUT);
    ck_assert_int_eq(agent_decode_skip(&d, 6), -EINVAL); /* more than the frame */
    ck_assert_int_eq(agent_decode_skip(&d, 2), 0);
    ck_assert_uint_eq(agent_decode_data_frame(&d, &type), 0); /* part moved */
    ck_assert_int_eq(agent_decode(&d, buf + AGENT_HDR_SIZE, 3, &used, &m), -EINVAL);
    ck_assert_int_eq(agent_decode_skip(&d, 3), 0);
    ck_assert_uint_eq(agent_decode_want(&d), AGENT_HDR_SIZE);
    ck_assert_int_eq(agent_decode_skip(&d, 1), -EINVAL); /* no frame now */
    ck_assert_int_eq(agent_decode(&d, buf + n, (size_t)n2, &used, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_EXIT);
    ck_assert_uint_eq(m.u.exit.value, 7);
    /* A control frame's header is no data frame; once its payload is
     * partly buffered, neither is a data frame's. */
    ck_assert_int_eq(agent_decode(&d, buf + n, AGENT_HDR_SIZE, &used, &m), 0);
    ck_assert_uint_eq(agent_decode_data_frame(&d, &type), 0);
    ck_assert_int_eq(agent_decode_skip(&d, 1), -EINVAL);
    ck_assert_int_eq(agent_decode(&d, buf + n + AGENT_HDR_SIZE, (size_t)n2 - AGENT_HDR_SIZE,
                                  &used, &m), 1);
    ck_assert_int_eq(agent_decode(&d, buf, AGENT_HDR_SIZE + 1, &used, &m), 0);
    ck_assert_uint_eq(agent_decode_data_frame(&d, &type), 0);
    ck_assert_int_eq(agent_decode_skip(&d, 1), -EINVAL);
    agent_decoder_free(&d);
}
END_TEST

static int script_get(uint64_t cap)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(write(sv[1], script, slen), (ssize_t)slen);
    shutdown(sv[1], SHUT_WR);
    int fo = memfd_create("get", MFD_CLOEXEC);
    int rc = agent_file_get(sv[0], "/f", fo, cap);
    close(fo);
    close(sv[0]);
    close(sv[1]);
    return rc;
}

START_TEST(helper_file_get)
{
    slen = 0;
    ADD(agent_encode(AT, AGENT_FILE_DATA, "0123456789", 10));
    ADD(agent_encode(AT, AGENT_FILE_END, NULL, 0));
    ck_assert_int_eq(script_get(10), 0);
    ck_assert_int_eq(script_get(9), -EFBIG); /* over the caller's cap */
    slen = 0;
    ADD(agent_encode_error(AT, ENOENT, AGENT_OP_FILE));
    ck_assert_int_eq(script_get(10), -ENOENT);
    slen = 0;
    ADD(agent_encode(AT, AGENT_STDOUT, "x", 1));
    ck_assert_int_eq(script_get(10), -EPROTO);
}
END_TEST

Suite *agent_proto_suite(void)
{
    Suite *s = suite_create("agent_proto");
    TCase *tc = tcase_create("codec");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, exec_round_trip);
    tcase_add_test(tc, replies_round_trip);
    tcase_add_test(tc, file_requests_round_trip);
    tcase_add_test(tc, reseed_round_trip);
    tcase_add_test(tc, reseeded_reply);
    tcase_add_test(tc, bad_magic);
    tcase_add_test(tc, wrong_version);
    tcase_add_test(tc, unknown_type);
    tcase_add_test(tc, misdirected_type);
    tcase_add_test(tc, signal_codec);
    tcase_add_test(tc, attach_codec);
    tcase_add_test(tc, sync_codec);
    tcase_add_test(tc, length_over_max);
    tcase_add_test(tc, length_shorter_than_fields);
    tcase_add_test(tc, argv_count_larger_than_payload);
    tcase_add_test(tc, huge_counts);
    tcase_add_test(tc, strings_without_nul);
    tcase_add_test(tc, bad_reply_values);
    tcase_add_test(tc, split_byte_by_byte);
    tcase_add_test(tc, many_in_one_buffer);
    tcase_add_test(tc, encoder_limits);
    tcase_add_test(tc, result_status_mapping);
    tcase_add_test(tc, decoder_skips_data_payload);
    suite_add_tcase(s, tc);
    tc = tcase_create("helpers");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, helper_exec_happy);
    tcase_add_test(tc, helper_exec_signals);
    tcase_add_test(tc, helper_exec_host_timeout);
    tcase_add_test(tc, helper_exec_error_reply);
    tcase_add_test(tc, helper_exec_attach);
    tcase_add_test(tc, helper_exec_output_cap);
    tcase_add_test(tc, helper_exec_out_of_order);
    tcase_add_test(tc, helper_exec_eof_midway);
    tcase_add_test(tc, helper_exec_spliced);
    tcase_add_test(tc, helper_exec_output_closed);
    tcase_add_test(tc, helper_file_get);
    suite_add_tcase(s, tc);
    return s;
}
