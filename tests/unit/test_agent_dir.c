/* vmm/agent_client/agent_dir_codec.c and agent_dir.c: the folder requests and
 * their ENTRY answers, well-formed and hostile (names with '/', "..",
 * over 255 bytes, a NUL inside, no NUL at the end, a symlink without a
 * target, a file with one, kinds and modes out of range, root_len that
 * does not fit its path), and the list helper against scripted replies:
 * an entry named "" mid-listing, a stream that never ends. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "tests/unit/helpers.h"

static uint8_t buf[AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD];

/* Decodes one complete frame in `dir`: agent_decode's result. */
static int decode(enum agent_dir dir, const uint8_t *f, size_t n, struct agent_msg *m)
{
    struct agent_decoder d;
    ck_assert_int_eq(agent_decoder_init(&d, dir), 0);
    size_t used;
    int rc = agent_decode(&d, f, n, &used, m);
    /* m's strings point into d's buffer: copy what the tests look at */
    static uint8_t keep[AGENT_MAX_CHUNK];
    if (rc == 1) {
        memcpy(keep, m->payload, m->len);
        ptrdiff_t shift = keep - m->payload;
        if (m->type == AGENT_ENTRY) {
            m->u.entry.name += shift;
            m->u.entry.target += shift;
        } else if (m->type == AGENT_MKDIR) {
            m->u.mkdir.path += shift;
        } else if (m->type == AGENT_SYMLINK) {
            m->u.symlink.path += shift;
            m->u.symlink.target += shift;
        } else if (m->type == AGENT_RENAME) {
            m->u.rename.from += shift;
            m->u.rename.to += shift;
        } else if (m->type == AGENT_REMOVE) {
            m->u.remove.path += shift;
        } else if (m->type == AGENT_CHOWN) {
            m->u.chown.path += shift;
        } else if (m->type == AGENT_FILE_PUT) {
            m->u.file_put.path += shift;
        } else if (m->type == AGENT_LIST || m->type == AGENT_STAT) {
            m->u.file_get.path += shift;
        }
    }
    agent_decoder_free(&d);
    return rc;
}

/* An ENTRY frame with the payload laid out by hand (no encoder checks). */
static size_t raw_entry(uint32_t kind, uint32_t mode, const char *strings, size_t slen)
{
    uint8_t p[AGENT_ENTRY_FIXED + 8192] = {0};
    memcpy(p, &kind, 4); /* the tests run little-endian, as the wire is */
    memcpy(p + 4, &mode, 4);
    memcpy(p + AGENT_ENTRY_FIXED, strings, slen);
    ssize_t n = agent_encode(buf, sizeof(buf), AGENT_ENTRY, p, AGENT_ENTRY_FIXED + slen);
    ck_assert_int_gt(n, 0);
    return (size_t)n;
}

START_TEST(entry_round_trip)
{
    struct agent_entry e = {AGENT_ENTRY_SYMLINK, 0777, 15, -5, "link", "sub dir/private", 1000, 4294967294u};
    ssize_t n = agent_encode_entry(buf, sizeof(buf), &e);
    ck_assert_int_gt(n, 0);
    struct agent_msg m;
    ck_assert_int_eq(decode(AGENT_DIR_REPLY, buf, (size_t)n, &m), 1);
    ck_assert_uint_eq(m.u.entry.kind, AGENT_ENTRY_SYMLINK);
    ck_assert_uint_eq(m.u.entry.mode, 0777);
    ck_assert_uint_eq(m.u.entry.size, 15);
    ck_assert_int_eq(m.u.entry.mtime, -5);
    ck_assert_str_eq(m.u.entry.name, "link");
    ck_assert_str_eq(m.u.entry.target, "sub dir/private");
    ck_assert_uint_eq(m.u.entry.uid, 1000);
    ck_assert_uint_eq(m.u.entry.gid, 4294967294u);
    struct agent_entry st = {AGENT_ENTRY_DIR, 0755, 4096, 1, "", "", 0, 0};
    n = agent_encode_entry(buf, sizeof(buf), &st);
    ck_assert_int_eq(decode(AGENT_DIR_REPLY, buf, (size_t)n, &m), 1);
    ck_assert_str_eq(m.u.entry.name, "");
    /* a request decoder does not take an ENTRY */
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, (size_t)n, &m), -EPROTO);
}
END_TEST

START_TEST(entry_hostile)
{
    struct agent_msg m;
    char s[600];
    static const struct { const char *strings; size_t len; uint32_t kind, mode; } bad[] = {
        {"a/b\0\0", 5, AGENT_ENTRY_FILE, 0644},          /* '/' in a name */
        {"..\0\0", 4, AGENT_ENTRY_FILE, 0644},           /* ".." */
        {".\0\0", 3, AGENT_ENTRY_DIR, 0755},             /* "." */
        {"a\0", 2, AGENT_ENTRY_FILE, 0644},              /* no target string */
        {"a\0\0x", 4, AGENT_ENTRY_FILE, 0644},           /* bytes after the target */
        {"a\0b", 3, AGENT_ENTRY_FILE, 0644},             /* no NUL at the end */
        {"a\0\0", 3, AGENT_ENTRY_SYMLINK, 0777},         /* a symlink without a target */
        {"a\0t\0", 4, AGENT_ENTRY_FILE, 0644},           /* a file with a target */
        {"a\0\0", 3, 4, 0644},                           /* an unknown kind */
        {"a\0\0", 3, AGENT_ENTRY_FILE, 010644},          /* type bits in mode */
        {"", 0, AGENT_ENTRY_FILE, 0644},                 /* no strings at all */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t n = raw_entry(bad[i].kind, bad[i].mode, bad[i].strings, bad[i].len);
        ck_assert_msg(decode(AGENT_DIR_REPLY, buf, n, &m) == -EPROTO, "case %zu", i);
    }
    memset(s, 'n', 256); /* a name of 256 bytes */
    s[256] = s[257] = '\0';
    ck_assert_int_eq(decode(AGENT_DIR_REPLY, buf, raw_entry(0, 0644, s, 258), &m), -EPROTO);
    s[255] = '\0'; /* 255: the longest */
    ck_assert_int_eq(decode(AGENT_DIR_REPLY, buf, raw_entry(0, 0644, s, 257), &m), 1);
    /* a payload over the type's maximum is refused from its header */
    uint8_t hdr[AGENT_HDR_SIZE];
    ck_assert_int_eq(agent_encode(hdr, sizeof(hdr), AGENT_ENTRY, NULL, 0), AGENT_HDR_SIZE);
    uint32_t huge = AGENT_MAX_CHUNK;
    memcpy(hdr + 8, &huge, 4);
    ck_assert_int_eq(decode(AGENT_DIR_REPLY, hdr, sizeof(hdr), &m), -EMSGSIZE);
    /* the encoder refuses what the decoder would */
    struct agent_entry e = {AGENT_ENTRY_FILE, 0644, 0, 0, "a/b", "", 0, 0};
    ck_assert_int_eq(agent_encode_entry(buf, sizeof(buf), &e), -EINVAL);
    e.name = "..";
    ck_assert_int_eq(agent_encode_entry(buf, sizeof(buf), &e), -EINVAL);
    e.name = "ok";
    e.kind = AGENT_ENTRY_SYMLINK;
    ck_assert_int_eq(agent_encode_entry(buf, sizeof(buf), &e), -EINVAL);
}
END_TEST

START_TEST(requests)
{
    struct agent_msg m;
    ssize_t n = agent_encode_mkdir(buf, sizeof(buf), "/tmp/up/a/b", 8, 0750);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, (size_t)n, &m), 1);
    ck_assert_str_eq(m.u.mkdir.path, "/tmp/up/a/b");
    ck_assert_uint_eq(m.u.mkdir.root_len, 8);
    ck_assert_uint_eq(m.u.mkdir.mode, 0750);
    n = agent_encode_symlink(buf, sizeof(buf), "/t/l", 3, "../x");
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, (size_t)n, &m), 1);
    ck_assert_str_eq(m.u.symlink.path, "/t/l");
    ck_assert_str_eq(m.u.symlink.target, "../x");
    n = agent_encode_path_req(buf, sizeof(buf), AGENT_LIST, "/tmp");
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, (size_t)n, &m), 1);
    ck_assert_str_eq(m.u.file_get.path, "/tmp");
    n = agent_encode_file_put(buf, sizeof(buf), "/r/f", 3, 0600, 5);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, (size_t)n, &m), 1);
    ck_assert_uint_eq(m.u.file_put.root_len, 3);
    /* root_len that does not fit: not after a '/', the whole path, a
     * relative path, "//": refused both ways */
    ck_assert_int_eq(agent_encode_mkdir(buf, sizeof(buf), "/tmp/a", 2, 0755), -EINVAL);
    ck_assert_int_eq(agent_encode_mkdir(buf, sizeof(buf), "/tmp/", 5, 0755), -EINVAL);
    ck_assert_int_eq(agent_encode_mkdir(buf, sizeof(buf), "tmp/a", 4, 0755), -EINVAL);
    ck_assert_int_eq(agent_encode_mkdir(buf, sizeof(buf), "/t//a", 3, 0755), -EINVAL);
    ck_assert_int_eq(agent_encode_file_put(buf, sizeof(buf), "/tmp/a", 2, 0644, 0), -EINVAL);
    ck_assert_int_eq(agent_encode_symlink(buf, sizeof(buf), "/t/l", 3, ""), -EINVAL);
    ck_assert_int_eq(agent_encode_path_req(buf, sizeof(buf), AGENT_EXEC, "/t"), -EINVAL);
    uint8_t p[32] = {0};
    p[0] = 0xff; /* mode 0377 with type bits: 0xff | 0x10000 */
    p[2] = 0x01;
    p[4] = 2;
    memcpy(p + AGENT_MKDIR_FIXED, "/a/b", 5);
    n = agent_encode(buf, sizeof(buf), AGENT_MKDIR, p, AGENT_MKDIR_FIXED + 5);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, (size_t)n, &m), -EPROTO);
    p[2] = 0;
    p[4] = 1; /* root_len 1: "/" then "a/b" */
    n = agent_encode(buf, sizeof(buf), AGENT_MKDIR, p, AGENT_MKDIR_FIXED + 5);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, (size_t)n, &m), 1);
    p[4] = 4; /* past its end */
    n = agent_encode(buf, sizeof(buf), AGENT_MKDIR, p, AGENT_MKDIR_FIXED + 5);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, (size_t)n, &m), -EPROTO);
    /* a symlink whose strings do not fill the payload exactly */
    memcpy(p + AGENT_SYMLINK_FIXED, "/a\0t\0x", 6);
    memset(p, 0, 4);
    n = agent_encode(buf, sizeof(buf), AGENT_SYMLINK, p, AGENT_SYMLINK_FIXED + 6);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, (size_t)n, &m), -EPROTO);
    ck_assert_int_eq(agent_name_ok("a", 1), 1);
    ck_assert_int_eq(agent_name_ok("", 0), 0);
}
END_TEST

/* ---- agent_list against scripted replies ---- */

static int count_entries(void *opaque, const struct agent_entry *e)
{
    (void)e;
    ++*(int *)opaque;
    return 0;
}

static int stop_at_two(void *opaque, const struct agent_entry *e)
{
    (void)e;
    return ++*(int *)opaque == 2 ? -E2BIG : 0;
}

/* Runs agent_list over a socketpair whose far end holds `script`. */
static int list_with(const uint8_t *script, size_t len, agent_entry_fn *fn, int *count)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    int big = 1 << 20;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    ck_assert_int_eq(write(sv[1], script, len), (ssize_t)len);
    shutdown(sv[1], SHUT_WR);
    *count = 0;
    int rc = agent_list(sv[0], "/d", fn, count);
    close(sv[0]);
    close(sv[1]);
    return rc;
}

/* A request frame with a payload laid out by hand: fixed words, then bytes. */
static size_t raw_req(uint16_t type, const uint32_t *w, size_t nw, const char *bytes, size_t blen)
{
    uint8_t p[64 + 2 * AGENT_MAX_PATH + 16] = {0};
    if (nw)
        memcpy(p, w, 4 * nw);
    if (blen)
        memcpy(p + 4 * nw, bytes, blen);
    ssize_t n = agent_encode(buf, sizeof(buf), type, p, 4 * nw + blen);
    ck_assert_int_gt(n, 0);
    return (size_t)n;
}

START_TEST(moves)
{
    struct agent_msg m;
    ssize_t n = agent_encode_rename(buf, sizeof(buf), "/a/b", "/c", AGENT_RENAME_F_NOREPLACE);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, (size_t)n, &m), 1);
    ck_assert_str_eq(m.u.rename.from, "/a/b");
    ck_assert_str_eq(m.u.rename.to, "/c");
    ck_assert_uint_eq(m.u.rename.flags, AGENT_RENAME_F_NOREPLACE);
    /* an agent's decoder refuses them as replies, and the host's encoders
     * refuse what the agent would */
    ck_assert_int_eq(decode(AGENT_DIR_REPLY, buf, (size_t)n, &m), -EPROTO);
    ck_assert_int_eq(agent_encode_rename(buf, sizeof(buf), "a", "/c", 0), -EINVAL);
    ck_assert_int_eq(agent_encode_rename(buf, sizeof(buf), "/a", "", 0), -EINVAL);
    ck_assert_int_eq(agent_encode_rename(buf, sizeof(buf), "/a", NULL, 0), -EINVAL);
    ck_assert_int_eq(agent_encode_rename(buf, sizeof(buf), "/a", "/b", 2), -EINVAL);
    ck_assert_int_eq(agent_encode_remove(buf, sizeof(buf), "/", 4), -EINVAL);
    ck_assert_int_eq(agent_encode_remove(buf, sizeof(buf), "rel", 0), -EINVAL);
    ck_assert_int_eq(agent_encode_chown(buf, sizeof(buf), NULL, 0, 0), -EINVAL);
    static char lng[AGENT_MAX_PATH + 1];
    memset(lng, 'a', AGENT_MAX_PATH);
    lng[0] = '/';
    ck_assert_int_eq(agent_encode_remove(buf, sizeof(buf), lng, 0), -EINVAL);
    lng[AGENT_MAX_PATH - 1] = '\0'; /* 4095 bytes and the NUL: the longest */
    ck_assert_int_gt(agent_encode_remove(buf, sizeof(buf), lng, 0), 0);

    n = agent_encode_remove(buf, sizeof(buf), "/tmp/x", AGENT_REMOVE_F_RECURSIVE);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, (size_t)n, &m), 1);
    ck_assert_str_eq(m.u.remove.path, "/tmp/x");
    ck_assert_uint_eq(m.u.remove.flags, AGENT_REMOVE_F_RECURSIVE);
    n = agent_encode_chown(buf, sizeof(buf), "/f", 1000, AGENT_CHOWN_KEEP);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, (size_t)n, &m), 1);
    ck_assert_str_eq(m.u.chown.path, "/f");
    ck_assert_uint_eq(m.u.chown.uid, 1000);
    ck_assert_uint_eq(m.u.chown.gid, AGENT_CHOWN_KEEP);

    /* hostile payloads */
    uint32_t zero = 0, two = 2, ids[2] = {1, 2};
    static const struct { const char *b; size_t n; } bad_rename[] = {
        {"/a\0", 3},          /* one string */
        {"/a\0/b", 5},        /* no NUL at the end */
        {"/a\0/b\0x", 7},    /* bytes after the second */
        {"a\0/b\0", 5},      /* relative */
        {"/a\0b\0", 5},
        {"\0/b\0", 4},       /* empty */
        {"", 0},
    };
    for (size_t i = 0; i < sizeof(bad_rename) / sizeof(bad_rename[0]); i++)
        ck_assert_msg(decode(AGENT_DIR_REQUEST, buf,
                             raw_req(AGENT_RENAME, &zero, 1, bad_rename[i].b, bad_rename[i].n),
                             &m) == -EPROTO, "rename %zu", i);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, raw_req(AGENT_RENAME, &two, 1, "/a\0/b\0", 6),
                            &m), -EPROTO); /* an unknown flag */
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, raw_req(AGENT_RENAME, NULL, 0, "", 0), &m),
                     -EPROTO); /* shorter than its fixed part */
    static const struct { const char *b; size_t n; } bad_path[] = {
        {"/a", 2}, {"a\0", 2}, {"\0", 1}, {"/a\0\0", 4}, {"/\0b\0", 4}, {"", 0},
    };
    for (size_t i = 0; i < sizeof(bad_path) / sizeof(bad_path[0]); i++) {
        ck_assert_msg(decode(AGENT_DIR_REQUEST, buf,
                             raw_req(AGENT_REMOVE, &zero, 1, bad_path[i].b, bad_path[i].n),
                             &m) == -EPROTO, "remove %zu", i);
        ck_assert_msg(decode(AGENT_DIR_REQUEST, buf,
                             raw_req(AGENT_CHOWN, ids, 2, bad_path[i].b, bad_path[i].n),
                             &m) == -EPROTO, "chown %zu", i);
    }
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, raw_req(AGENT_REMOVE, &two, 1, "/a\0", 3), &m),
                     -EPROTO);
    ck_assert_int_eq(decode(AGENT_DIR_REQUEST, buf, raw_req(AGENT_CHOWN, ids, 1, "/a", 2), &m),
                     -EPROTO); /* fixed part cut: the path would start inside it */
}
END_TEST

START_TEST(list_helper)
{
    static uint8_t script[1 << 16];
    size_t n = 0;
    struct agent_entry e = {AGENT_ENTRY_FILE, 0644, 1, 0, "a", "", 0, 0};
    for (int i = 0; i < 3; i++)
        n += (size_t)agent_encode_entry(script + n, sizeof(script) - n, &e);
    size_t three = n;
    n += (size_t)agent_encode(script + n, sizeof(script) - n, AGENT_DONE, NULL, 0);
    int count;
    ck_assert_int_eq(list_with(script, n, count_entries, &count), 0);
    ck_assert_int_eq(count, 3);
    /* the caller's bound stops it */
    ck_assert_int_eq(list_with(script, n, stop_at_two, &count), -E2BIG);
    ck_assert_int_eq(count, 2);
    /* no DONE: the stream's end is an error, not a short listing */
    ck_assert_int_eq(list_with(script, three, count_entries, &count), -ECONNRESET);
    /* STAT's answer (name "") inside a listing is refused */
    struct agent_entry st = {AGENT_ENTRY_FILE, 0644, 1, 0, "", "", 0, 0};
    n = (size_t)agent_encode_entry(script, sizeof(script), &st);
    ck_assert_int_eq(list_with(script, n, count_entries, &count), -EPROTO);
    /* an ERROR is the guest's errno */
    n = (size_t)agent_encode_error(script, sizeof(script), ENOTDIR, AGENT_OP_FILE);
    ck_assert_int_eq(list_with(script, n, count_entries, &count), -ENOTDIR);
    /* a reply of another kind is refused */
    n = (size_t)agent_encode(script, sizeof(script), AGENT_FILE_END, NULL, 0);
    ck_assert_int_eq(list_with(script, n, count_entries, &count), -EPROTO);
}
END_TEST

Suite *agent_dir_suite(void)
{
    Suite *s = suite_create("agent_dir");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, entry_round_trip);
    tcase_add_test(tc, entry_hostile);
    tcase_add_test(tc, requests);
    tcase_add_test(tc, list_helper);
    tcase_add_test(tc, moves);
    suite_add_tcase(s, tc);
    return s;
}
