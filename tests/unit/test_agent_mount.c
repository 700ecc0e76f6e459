/* MOUNT (vmm/agent_client/agent_mount_codec.c, agent_mount in
 * agent_client_io.c): the payload round trip at its limits, the hostile
 * payloads a broken host could send (each refused by the decoder the
 * agent uses, and the same input refused by the encoder), the guest
 * folder's shape, and the host's helper against scripted answers a
 * hostile agent could give. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/agent_client/agent_client.h"

static uint8_t frame[AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD];

/* A whole frame through the request decoder: 1 with *m, or its error. */
static int decode(const uint8_t *f, size_t n, struct agent_msg *m)
{
    struct agent_decoder d;
    size_t used;
    ck_assert_int_eq(agent_decoder_init(&d, AGENT_DIR_REQUEST), 0);
    int rc = agent_decode(&d, f, n, &used, m);
    if (rc == 1) {
        ck_assert_uint_eq(used, n);
        ck_assert_uint_eq(m->type, AGENT_MOUNT);
        /* the decoder's buffer goes with it: the path is read from a copy */
        static uint8_t pay[AGENT_MOUNT_FIXED + AGENT_MOUNT_MAX_PATH];
        memcpy(pay, m->payload, m->len);
        ck_assert_int_eq(agent_mount_parse(pay, m->len, m), 0);
    }
    agent_decoder_free(&d);
    return rc;
}

/* A hand-made payload as a frame: the decoder's result, and the check
 * alone says the same. */
static int decode_raw(uint32_t device, uint32_t flags, const void *path, size_t len)
{
    static uint8_t p[AGENT_MOUNT_FIXED + AGENT_MOUNT_MAX_PATH + 16];
    ck_assert_uint_le(len, sizeof(p) - AGENT_MOUNT_FIXED);
    wr32(p, 0, device);
    wr32(p, 4, flags);
    memcpy(p + AGENT_MOUNT_FIXED, path, len);
    wr32(frame, 0, AGENT_MAGIC);
    wr16(frame, 4, AGENT_VERSION);
    wr16(frame, 6, AGENT_MOUNT);
    wr32(frame, 8, (uint32_t)(AGENT_MOUNT_FIXED + len));
    memcpy(frame + AGENT_HDR_SIZE, p, AGENT_MOUNT_FIXED + len);
    struct agent_msg m;
    int rc = decode(frame, AGENT_HDR_SIZE + AGENT_MOUNT_FIXED + len, &m);
    ck_assert_int_eq(agent_mount_parse(p, AGENT_MOUNT_FIXED + len, NULL), rc == 1 ? 0 : -EPROTO);
    return rc;
}

START_TEST(round_trip)
{
    struct agent_msg m;
    ssize_t n = agent_encode_mount(frame, sizeof(frame), 1, AGENT_MOUNT_F_RO, "/src");
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_MOUNT_FIXED + 5);
    ck_assert_int_eq(decode(frame, (size_t)n, &m), 1);
    ck_assert_uint_eq(m.u.mount.device, 1);
    ck_assert_uint_eq(m.u.mount.flags, AGENT_MOUNT_F_RO);
    ck_assert_str_eq(m.u.mount.path, "/src");
    n = agent_encode_mount(frame, sizeof(frame), AGENT_MOUNT_MAX_DEVICE, 0, "/a/b c/.d/e..");
    ck_assert_int_eq(decode(frame, (size_t)n, &m), 1);
    ck_assert_uint_eq(m.u.mount.device, AGENT_MOUNT_MAX_DEVICE);
    ck_assert_uint_eq(m.u.mount.flags, 0);
    ck_assert_str_eq(m.u.mount.path, "/a/b c/.d/e..");
    /* the longest path: AGENT_MOUNT_MAX_PATH bytes with its NUL */
    static char longest[AGENT_MOUNT_MAX_PATH + 1];
    memset(longest, 'x', sizeof(longest));
    longest[0] = '/';
    longest[AGENT_MOUNT_MAX_PATH - 1] = 0;
    n = agent_encode_mount(frame, sizeof(frame), 2, 0, longest);
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_MOUNT_FIXED + AGENT_MOUNT_MAX_PATH);
    ck_assert_int_eq(decode(frame, (size_t)n, &m), 1);
    ck_assert_uint_eq(strlen(m.u.mount.path), AGENT_MOUNT_MAX_PATH - 1);
    longest[AGENT_MOUNT_MAX_PATH - 1] = 'x'; /* one more */
    ck_assert_int_eq(agent_encode_mount(frame, sizeof(frame), 2, 0, longest), -EINVAL);
    ck_assert_int_eq(decode_raw(2, 0, longest, AGENT_MOUNT_MAX_PATH + 1), -EMSGSIZE);
    /* a buffer too small for it */
    ck_assert_int_eq(agent_encode_mount(frame, AGENT_HDR_SIZE + 8, 1, 0, "/src"), -EMSGSIZE);
}
END_TEST

START_TEST(path_shapes)
{
    static const char *const good[] = {"/a", "/src", "/home/user/work", "/tmp/x", "/procx",
                                       "/devices", "/.hidden", "/a/..b", "/x.", "/mnt/a b"};
    static const char *const bad[] = {"", "/", "a", "src/x", "/a/", "//a", "/a//b", "/.",
                                      "/..", "/a/./b", "/a/../b", "/a/..", "/proc", "/proc/x",
                                      "/sys", "/sys/fs", "/dev", "/dev/shm", "/src/"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        ck_assert_msg(agent_mount_path_ok(good[i], strlen(good[i])), "%s", good[i]);
        ck_assert_int_gt(agent_encode_mount(frame, sizeof(frame), 1, 0, good[i]), 0);
        ck_assert_int_eq(decode_raw(1, 0, good[i], strlen(good[i]) + 1), 1);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(!agent_mount_path_ok(bad[i], strlen(bad[i])), "%s", bad[i]);
        ck_assert_int_eq(agent_encode_mount(frame, sizeof(frame), 1, 0, bad[i]), -EINVAL);
        ck_assert_msg(decode_raw(1, 0, bad[i], strlen(bad[i]) + 1) == -EPROTO, "%s", bad[i]);
    }
    ck_assert(!agent_mount_path_ok("/a\0b", 4)); /* a NUL inside */
    ck_assert_int_eq(agent_encode_mount(frame, sizeof(frame), 1, 0, NULL), -EINVAL);
}
END_TEST

START_TEST(hostile_payloads)
{
    /* devices: 0 is the root, past the slots is nothing */
    ck_assert_int_eq(decode_raw(0, 0, "/src", 5), -EPROTO);
    ck_assert_int_eq(decode_raw(AGENT_MOUNT_MAX_DEVICE + 1, 0, "/src", 5), -EPROTO);
    ck_assert_int_eq(decode_raw(0xffffffffu, 0, "/src", 5), -EPROTO);
    ck_assert_int_eq(agent_encode_mount(frame, sizeof(frame), 0, 0, "/src"), -EINVAL);
    ck_assert_int_eq(agent_encode_mount(frame, sizeof(frame), 8, 0, "/src"), -EINVAL);
    /* unknown flags */
    ck_assert_int_eq(decode_raw(1, 2, "/src", 5), -EPROTO);
    ck_assert_int_eq(decode_raw(1, 0x80000001u, "/src", 5), -EPROTO);
    ck_assert_int_eq(agent_encode_mount(frame, sizeof(frame), 1, 2, "/src"), -EINVAL);
    /* the path's NUL: missing, early, doubled; no path at all */
    ck_assert_int_eq(decode_raw(1, 0, "/src", 4), -EPROTO);
    ck_assert_int_eq(decode_raw(1, 0, "/s\0rc", 6), -EPROTO);
    ck_assert_int_eq(decode_raw(1, 0, "/src\0", 6), -EPROTO);
    ck_assert_int_eq(decode_raw(1, 0, "", 0), -EPROTO);
    ck_assert_int_eq(decode_raw(1, 0, "", 1), -EPROTO);
    /* a fixed part cut short */
    wr32(frame, 0, AGENT_MAGIC);
    wr16(frame, 4, AGENT_VERSION);
    wr16(frame, 6, AGENT_MOUNT);
    wr32(frame, 8, 6);
    struct agent_msg m;
    ck_assert_int_eq(decode(frame, AGENT_HDR_SIZE + 6, &m), -EPROTO);
    /* a MOUNT is a request: an agent's reply of that type is refused */
    ssize_t n = agent_encode_mount(frame, sizeof(frame), 1, 0, "/src");
    struct agent_decoder d;
    size_t used;
    ck_assert_int_eq(agent_decoder_init(&d, AGENT_DIR_REPLY), 0);
    ck_assert_int_eq(agent_decode(&d, frame, (size_t)n, &used, &m), -EPROTO);
    agent_decoder_free(&d);
}
END_TEST

/* ---- agent_mount against scripted answers ---- */

static uint8_t script[4096];
static size_t slen;
#define ADD(expr) (slen += (size_t)(expr))
#define AT script + slen, sizeof(script) - slen
static char why[512];

/* Queues the script (then EOF unless open_end), runs the helper with
 * (disk 2, ro, "/work/src"), and checks what it sent. */
static int script_mount(unsigned wait_ms, int open_end, int *sv)
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(write(sv[1], script, slen), (ssize_t)slen);
    if (!open_end)
        shutdown(sv[1], SHUT_WR);
    memset(why, 'x', sizeof(why));
    int rc = agent_mount(sv[0], 2, AGENT_MOUNT_F_RO, "/work/src", wait_ms, why, sizeof(why));
    ssize_t n = recv(sv[1], frame, sizeof(frame), MSG_DONTWAIT);
    struct agent_msg m;
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(decode(frame, (size_t)n, &m), 1);
    ck_assert_uint_eq(m.u.mount.device, 2);
    ck_assert_uint_eq(m.u.mount.flags, AGENT_MOUNT_F_RO);
    ck_assert_str_eq(m.u.mount.path, "/work/src");
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
    ck_assert_int_eq(script_mount(1000, 0, sv), 0);
    uint8_t rest[64];
    ck_assert_int_eq(recv(sv[0], rest, sizeof(rest), 0), AGENT_HDR_SIZE + AGENT_STARTED_SIZE);
    close_pair(sv);

    slen = 0;
    ADD(agent_encode_error(AT, ELOOP, AGENT_OP_MOUNT));
    ck_assert_int_eq(script_mount(1000, 0, sv), -ELOOP);
    ck_assert_str_eq(why, "the guest could not mount /dev/vdc at /work/src: Too many levels of "
                          "symbolic links");
    close_pair(sv);
    slen = 0;
    ADD(agent_encode_error(AT, EPROTO, AGENT_OP_PROTO));
    ck_assert_int_eq(script_mount(1000, 0, sv), -EPROTO);
    ck_assert_ptr_nonnull(strstr(why, "the agent refused the request: Protocol error"));
    close_pair(sv);

    /* answers that are not the mount's */
    slen = 0;
    ADD(agent_encode_error(AT, ENOENT, AGENT_OP_FILE));
    ck_assert_int_eq(script_mount(1000, 0, sv), -EPROTO);
    ck_assert_ptr_nonnull(strstr(why, "answered out of turn"));
    close_pair(sv);
    slen = 0;
    ADD(agent_encode(AT, AGENT_RESEEDED, NULL, 0));
    ck_assert_int_eq(script_mount(1000, 0, sv), -EPROTO);
    close_pair(sv);
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ck_assert_int_eq(script_mount(1000, 0, sv), -ECONNRESET); /* EOF */
    ck_assert_str_eq(why, "lost the guest agent while it mounted a folder: Connection reset by "
                          "peer");
    close_pair(sv);
    /* a version-4 agent (it has no MOUNT and would end the conversation) */
    slen = (size_t)agent_encode_ready(script, sizeof(script), 4, 0);
    wr16(script, 4, 4);
    ck_assert_int_eq(script_mount(1000, 0, sv), -EPROTONOSUPPORT);
    ck_assert_ptr_nonnull(strstr(why, "another protocol version"));
    close_pair(sv);
}
END_TEST

START_TEST(helper_no_answer)
{
    int sv[2];
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    int rc = script_mount(300, 1, sv);
    ck_assert_int_eq(rc, -ETIMEDOUT);
    ck_assert_str_eq(why, "the guest could not mount /dev/vdc at /work/src: the guest agent did "
                          "not answer in 300 ms");
    close_pair(sv);
}
END_TEST

/* What the encoder refuses is never sent. */
START_TEST(helper_refuses)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(agent_mount(sv[0], 1, 0, "/proc/x", 1000, why, sizeof(why)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "the mount was not sent"));
    ck_assert_int_eq(agent_mount(sv[0], 0, 0, "/src", 1000, NULL, 0), -EINVAL);
    ck_assert_int_eq(recv(sv[1], frame, sizeof(frame), MSG_DONTWAIT), -1);
    close_pair(sv);
}
END_TEST

Suite *agent_mount_suite(void)
{
    Suite *s = suite_create("agent_mount");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, path_shapes);
    tcase_add_test(tc, hostile_payloads);
    suite_add_tcase(s, tc);
    tc = tcase_create("helper");
    tcase_add_test(tc, helper);
    tcase_add_test(tc, helper_no_answer);
    tcase_add_test(tc, helper_refuses);
    suite_add_tcase(s, tc);
    return s;
}
