/* A pod's containers in the agent protocol (version 15,
 * vmm/agent_client/agent_ctr_codec.c): EXEC's container section and
 * CONTAINER_END round trips at their limits, what the encoder refuses,
 * the hostile payloads a broken host could send (each refused by the
 * decoder the agent uses), and agent_container_end against scripted
 * answers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/agent_client/agent_client.h"

#define BIG (AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD)

static uint8_t frame[BIG], pay[AGENT_CTR_MAX_NAME + 1];
static const char *const argv1[] = {"sh"};
/* Where the container section starts in sample()'s frame: header, fixed
 * part, argv "sh" (3 bytes), no env, the process section with nothing
 * in its arrays. */
#define CTR (AGENT_HDR_SIZE + AGENT_EXEC_FIXED + 3 + AGENT_EXEC_PROC_FIXED)
/* ... and in it: nbinds, bytes, then "app-1" (6), "srl9" (5), the first
 * bind's flags and source. */
#define NAME (CTR + AGENT_EXEC_CTR_FIXED)
#define SERIAL (NAME + 6)
#define BIND0 (SERIAL + 5)

static void sample_req(struct agent_exec_req *r)
{
    agent_exec_req_init(r);
    r->argv = argv1;
    r->argc = 1;
    r->cwd = "/app";
    r->pidns = AGENT_PIDNS_NEW;
    r->flags = AGENT_EXEC_F_CONTAINER;
    r->ctr_name = "app-1";
    r->ctr_serial = "srl9";
    r->nbinds = 2;
    r->binds[0] = (struct agent_bind){"/run/airlock/pod/volumes/cache", "/cache", 0};
    r->binds[1] = (struct agent_bind){"/run/airlock/pod/files/hosts", "/etc/hosts", AGENT_BIND_F_RO};
}

static size_t sample(void)
{
    return exec_sample(sample_req, frame, sizeof(frame));
}

static int decode(const uint8_t *f, size_t n, struct agent_exec_req *r)
{
    return exec_decode(f, n, r);
}

START_TEST(round_trip)
{
    size_t n = sample();
    struct agent_exec_req r;
    ck_assert_int_eq(decode(frame, n, &r), 1);
    ck_assert_uint_eq(r.flags, AGENT_EXEC_F_CONTAINER);
    ck_assert_uint_eq(r.pidns, AGENT_PIDNS_NEW);
    ck_assert_str_eq(r.ctr_name, "app-1");
    ck_assert_str_eq(r.ctr_serial, "srl9");
    ck_assert_uint_eq(r.nbinds, 2);
    ck_assert_str_eq(r.binds[0].source, "/run/airlock/pod/volumes/cache");
    ck_assert_str_eq(r.binds[0].target, "/cache");
    ck_assert_uint_eq(r.binds[0].flags, 0);
    ck_assert_str_eq(r.binds[1].target, "/etc/hosts");
    ck_assert_uint_eq(r.binds[1].flags, AGENT_BIND_F_RO);
    ck_assert_str_eq(r.cwd, "/app");
    /* the layout proto.h gives */
    ck_assert_uint_eq(rd32le(frame + CTR), 2);
    ck_assert_uint_eq(rd32le(frame + CTR + 4), n - NAME - 5); /* all but "/app" */
    ck_assert_str_eq((const char *)frame + NAME, "app-1");
    ck_assert_str_eq((const char *)frame + SERIAL, "srl9");
    ck_assert_uint_eq(rd32le(frame + BIND0), 0);
    ck_assert_str_eq((const char *)frame + BIND0 + 4, "/run/airlock/pod/volumes/cache");
    ck_assert_str_eq((const char *)frame + n - 5, "/app");
}
END_TEST

/* No container named: the request is byte for byte what it was before
 * the section existed (the single container's path stays as it was). */
START_TEST(absent_without_flag)
{
    struct agent_exec_req r, back;
    agent_exec_req_init(&r);
    r.argv = argv1;
    r.argc = 1;
    r.pidns = AGENT_PIDNS_NEW;
    ssize_t n = agent_encode_exec(frame, sizeof(frame), &r);
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_EXEC_FIXED + 3 + AGENT_EXEC_PROC_FIXED + 1);
    ck_assert_int_eq(decode(frame, (size_t)n, &back), 1);
    ck_assert_ptr_null(back.ctr_name);
    ck_assert_ptr_null(back.ctr_serial);
    ck_assert_uint_eq(back.nbinds, 0);
}
END_TEST

/* The VM's own root (serial ""), a JOIN, and the largest section. */
START_TEST(shapes)
{
    struct agent_exec_req r, back;
    sample_req(&r);
    r.ctr_serial = "";
    ck_assert_int_eq(decode(frame, (size_t)agent_encode_exec(frame, sizeof(frame), &r), &back), 1);
    ck_assert_str_eq(back.ctr_serial, "");
    r.ctr_serial = NULL; /* NULL is "" */
    ck_assert_int_eq(decode(frame, (size_t)agent_encode_exec(frame, sizeof(frame), &r), &back), 1);
    r.pidns = AGENT_PIDNS_JOIN;
    r.nbinds = 0;
    ck_assert_int_eq(decode(frame, (size_t)agent_encode_exec(frame, sizeof(frame), &r), &back), 1);
    ck_assert_uint_eq(back.pidns, AGENT_PIDNS_JOIN);
    ck_assert_str_eq(back.ctr_name, "app-1");
    /* 64 binds of the longest paths, a name and a serial at their limits */
    static char src[AGENT_CTR_MAX_PATH], dst[AGENT_CTR_MAX_PATH], name[AGENT_CTR_MAX_NAME + 1];
    memset(src, 'a', sizeof(src) - 1);
    memset(dst, 'b', sizeof(dst) - 1);
    src[0] = dst[0] = '/';
    memset(name, 'n', AGENT_CTR_MAX_NAME);
    sample_req(&r);
    r.ctr_name = name;
    r.ctr_serial = "12345678901234567890";
    r.nbinds = AGENT_CTR_MAX_BINDS;
    for (unsigned i = 0; i < AGENT_CTR_MAX_BINDS; i++)
        r.binds[i] = (struct agent_bind){src, dst, i & 1};
    ssize_t n = agent_encode_exec(frame, sizeof(frame), &r);
    ck_assert_int_eq(n, CTR + AGENT_EXEC_CTR_MAX + 5);
    ck_assert_int_eq(decode(frame, (size_t)n, &back), 1);
    ck_assert_uint_eq(back.nbinds, AGENT_CTR_MAX_BINDS);
    ck_assert_uint_eq(strlen(back.binds[63].target), AGENT_CTR_MAX_PATH - 1);
}
END_TEST

static ssize_t enc_with(void (*edit)(struct agent_exec_req *))
{
    return exec_edited(sample_req, edit, frame, sizeof(frame));
}

static char longer[AGENT_CTR_MAX_PATH + 8];
static void name_long(struct agent_exec_req *r) { r->ctr_name = "0123456789012345678901234567890123456789012345678901234567890123x"; }
static void name_empty(struct agent_exec_req *r) { r->ctr_name = ""; }
static void name_slash(struct agent_exec_req *r) { r->ctr_name = "a/b"; }
static void name_space(struct agent_exec_req *r) { r->ctr_name = "a b"; }
static void name_dot(struct agent_exec_req *r) { r->ctr_name = ".hidden"; }
static void name_dotdot(struct agent_exec_req *r) { r->ctr_name = ".."; }
static void name_null(struct agent_exec_req *r) { r->ctr_name = NULL; }
static void no_flag(struct agent_exec_req *r) { r->flags = 0; }
static void no_pidns(struct agent_exec_req *r) { r->pidns = 0; }
static void serial_long(struct agent_exec_req *r) { r->ctr_serial = "123456789012345678901"; }
static void serial_bad(struct agent_exec_req *r) { r->ctr_serial = "vd/a"; }
static void join_serial(struct agent_exec_req *r) { r->pidns = AGENT_PIDNS_JOIN; r->nbinds = 0; }
static void join_binds(struct agent_exec_req *r) { r->pidns = AGENT_PIDNS_JOIN; r->ctr_serial = ""; }
static void too_many(struct agent_exec_req *r) { r->nbinds = AGENT_CTR_MAX_BINDS + 1; }
static void src_relative(struct agent_exec_req *r) { r->binds[0].source = "run/x"; }
static void src_dotdot(struct agent_exec_req *r) { r->binds[0].source = "/run/airlock/pod/../containers/x"; }
static void src_other(struct agent_exec_req *r) { r->binds[0].source = AGENT_CTR_DIR "/other/root"; }
static void src_dev(struct agent_exec_req *r) { r->binds[0].source = "/dev/vda"; }
static void src_root(struct agent_exec_req *r) { r->binds[0].source = "/"; }
static void dst_relative(struct agent_exec_req *r) { r->binds[1].target = "etc/hosts"; }
static void dst_dotdot(struct agent_exec_req *r) { r->binds[1].target = "/etc/../../x"; }
static void dst_dot(struct agent_exec_req *r) { r->binds[1].target = "/etc/./hosts"; }
static void dst_slash(struct agent_exec_req *r) { r->binds[1].target = "/etc/"; }
static void dst_empty_comp(struct agent_exec_req *r) { r->binds[1].target = "/etc//hosts"; }
static void dst_proc(struct agent_exec_req *r) { r->binds[1].target = "/proc/sys"; }
static void dst_sys(struct agent_exec_req *r) { r->binds[1].target = "/sys"; }
static void dst_null(struct agent_exec_req *r) { r->binds[1].target = NULL; }
static void bind_flags(struct agent_exec_req *r) { r->binds[1].flags = 2; }
static void dst_long(struct agent_exec_req *r)
{
    memset(longer, 'x', sizeof(longer) - 1);
    longer[0] = '/';
    longer[AGENT_CTR_MAX_PATH] = '\0'; /* 1024 bytes and its NUL: one past */
    r->binds[1].target = longer;
}
static void dst_dev(struct agent_exec_req *r) { r->binds[1].target = "/dev/termination-log"; }

START_TEST(encoder_refuses)
{
    void (*bad[])(struct agent_exec_req *) = {
        name_long,   name_empty,   name_slash, name_space,   name_dot,     name_dotdot,
        name_null,   no_flag,      no_pidns,   serial_long,  serial_bad,   join_serial,
        join_binds,  too_many,     src_relative, src_dotdot, src_other,    src_dev,
        src_root,    dst_relative, dst_dotdot, dst_dot,      dst_slash,    dst_empty_comp,
        dst_proc,    dst_sys,      dst_null,   bind_flags,   dst_long,
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(enc_with(bad[i]) == -EINVAL, "case %zu encoded", i);
    /* what the rules allow: a target in the container's /dev */
    ck_assert_int_gt(enc_with(dst_dev), 0);
}
END_TEST

static int with32(size_t off, uint32_t v)
{
    return exec_with32(sample_req, frame, sizeof(frame), off, v);
}

static int with8(size_t off, uint8_t v)
{
    return exec_with8(sample_req, frame, sizeof(frame), off, v);
}

START_TEST(hostile_counts)
{
    ck_assert_int_eq(with32(CTR, AGENT_CTR_MAX_BINDS + 1), -EPROTO);
    ck_assert_int_eq(with32(CTR, 0xffffffffu), -EPROTO);
    ck_assert_int_eq(with32(CTR + 4, AGENT_CTR_MAX_BYTES + 1), -EPROTO);
    ck_assert_int_eq(with32(CTR + 4, 0xffffffffu), -EPROTO);
    /* the flag with no room for the section: the cwd read as one */
    struct agent_exec_req r;
    agent_exec_req_init(&r);
    r.argv = argv1;
    r.argc = 1;
    r.pidns = AGENT_PIDNS_NEW;
    r.cwd = "/0123456789";
    size_t n = (size_t)agent_encode_exec(frame, sizeof(frame), &r);
    wr32(frame, AGENT_HDR_SIZE + 12, AGENT_EXEC_F_CONTAINER);
    ck_assert_int_eq(decode(frame, n, &r), -EPROTO);
}
END_TEST

/* Sections that do not add up: a count or a length off either way. */
START_TEST(sections_do_not_add_up)
{
    size_t n = sample();
    uint32_t bytes = rd32le(frame + CTR + 4);
    ck_assert_int_eq(with32(CTR, 1), -EPROTO);  /* a bind left over */
    ck_assert_int_eq(with32(CTR, 3), -EPROTO);  /* a bind missing: read into the cwd */
    ck_assert_int_eq(with32(CTR + 4, bytes - 1), -EPROTO); /* the last NUL outside */
    ck_assert_int_eq(with32(CTR + 4, bytes + 1), -EPROTO); /* the cwd's first byte inside */
    ck_assert_int_eq(with32(CTR + 4, bytes + 5), -EPROTO); /* all of the cwd: none left */
    ck_assert_int_eq(with32(CTR + 4, 0), -EPROTO);
    ck_assert_int_eq(with32(CTR + 4, 7), -EPROTO);         /* the name, not the serial */
    /* the frame cut inside the section (the header's length says so) */
    sample();
    wr32(frame, 8, (uint32_t)(BIND0 + 3 - AGENT_HDR_SIZE));
    struct agent_exec_req r;
    ck_assert_int_eq(decode(frame, BIND0 + 3, &r), -EPROTO);
    (void)n;
}
END_TEST

START_TEST(hostile_values)
{
    ck_assert_int_eq(with8(NAME + 1, '/'), -EPROTO);      /* "a/p-1" */
    ck_assert_int_eq(with8(NAME, '.'), -EPROTO);          /* ".pp-1" */
    ck_assert_int_eq(with8(NAME + 2, ' '), -EPROTO);
    ck_assert_int_eq(with8(NAME + 2, 0xc3), -EPROTO);     /* not ASCII */
    ck_assert_int_eq(with8(NAME, 0), -EPROTO);            /* "" and the rest misread */
    ck_assert_int_eq(with8(SERIAL, '/'), -EPROTO);
    ck_assert_int_eq(with32(BIND0, 2), -EPROTO);          /* an unknown bind flag */
    ck_assert_int_eq(with8(BIND0 + 4, 'r'), -EPROTO);     /* source "rrun/...": relative */
    /* "/run/airlock/pod/volumes/cache" -> "/run/airlock/pod/volumes/.." + 'he' */
    ck_assert_int_eq(with8(BIND0 + 4 + 25, '.'), 1);      /* ".ache": a fine name */
    size_t n = sample();
    memcpy(frame + BIND0 + 4 + 25, "..\0\0\0", 5);         /* cut short: sizes shift */
    struct agent_exec_req r;
    ck_assert_int_eq(decode(frame, n, &r), -EPROTO);
    n = sample();
    memcpy(frame + BIND0 + 4 + 25, "../he", 5);           /* same length, ".." in it */
    ck_assert_int_eq(decode(frame, n, &r), -EPROTO);
    /* a JOIN that carries binds; pidns 0 with the section */
    ck_assert_int_eq(with32(CTR - AGENT_EXEC_PROC_FIXED + 12, AGENT_PIDNS_JOIN), -EPROTO);
    ck_assert_int_eq(with32(CTR - AGENT_EXEC_PROC_FIXED + 12, 0), -EPROTO);
    /* the target "/cache" -> "/proc/"+ no: "/sys/x" is shorter; "/proc0" is fine */
    size_t t0 = BIND0 + 4 + strlen("/run/airlock/pod/volumes/cache") + 1;
    ck_assert_int_eq(with8(t0 + 1, 'p'), 1);              /* "/pache" */
    n = sample();
    memcpy(frame + t0, "/sys/x", 6);                      /* "/cache" -> "/sys/x" */
    ck_assert_int_eq(decode(frame, n, &r), -EPROTO);
}
END_TEST

/* ---- CONTAINER_END ---- */

static int decode_end(const uint8_t *f, size_t n, enum agent_dir dir, struct agent_msg *m)
{
    struct agent_decoder d;
    size_t used;
    ck_assert_int_eq(agent_decoder_init(&d, dir), 0);
    int rc = agent_decode(&d, f, n, &used, m);
    if (rc == 1) {
        memcpy(pay, m->payload, m->len);
        m->u.ctr_end.name = (const char *)pay + (m->u.ctr_end.name - (const char *)m->payload);
    }
    agent_decoder_free(&d);
    return rc;
}

START_TEST(end_round_trip)
{
    struct agent_msg m;
    ssize_t n = agent_encode_container_end(frame, sizeof(frame), "app-1");
    ck_assert_int_eq(n, AGENT_HDR_SIZE + 6);
    ck_assert_uint_eq(rd16le(frame + 6), AGENT_CONTAINER_END);
    ck_assert_int_eq(decode_end(frame, (size_t)n, AGENT_DIR_REQUEST, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_CONTAINER_END);
    ck_assert_str_eq(m.u.ctr_end.name, "app-1");
    /* the agent never sends one */
    ck_assert_int_eq(decode_end(frame, (size_t)n, AGENT_DIR_REPLY, &m), -EPROTO);
    char name[AGENT_CTR_MAX_NAME + 2];
    memset(name, 'a', sizeof(name) - 1);
    name[AGENT_CTR_MAX_NAME] = '\0';
    ck_assert_int_eq(agent_encode_container_end(frame, sizeof(frame), name),
                     AGENT_HDR_SIZE + AGENT_CTR_MAX_NAME + 1);
    name[AGENT_CTR_MAX_NAME] = 'a';
    name[AGENT_CTR_MAX_NAME + 1] = '\0';
    ck_assert_int_eq(agent_encode_container_end(frame, sizeof(frame), name), -EINVAL);
    ck_assert_int_eq(agent_encode_container_end(frame, sizeof(frame), ".x"), -EINVAL);
    ck_assert_int_eq(agent_encode_container_end(frame, sizeof(frame), NULL), -EINVAL);
    ck_assert_int_eq(agent_encode_container_end(frame, 10, "app"), -EMSGSIZE);
}
END_TEST

static int end_payload(const void *p, size_t len)
{
    struct agent_msg m;
    ssize_t n = agent_encode(frame, sizeof(frame), AGENT_CONTAINER_END, p, len);
    ck_assert_int_gt(n, 0);
    return decode_end(frame, (size_t)n, AGENT_DIR_REQUEST, &m);
}

START_TEST(end_hostile)
{
    ck_assert_int_eq(end_payload("app", 3), -EPROTO);       /* no NUL */
    ck_assert_int_eq(end_payload("app\0x", 5), -EPROTO);    /* bytes after it */
    ck_assert_int_eq(end_payload("", 0), -EPROTO);
    ck_assert_int_eq(end_payload("\0", 1), -EPROTO);        /* empty name */
    ck_assert_int_eq(end_payload("..\0", 3), -EPROTO);
    ck_assert_int_eq(end_payload("a/b\0", 4), -EPROTO);
    ck_assert_int_eq(end_payload("a\nb\0", 4), -EPROTO);
    ck_assert_int_eq(end_payload("app\0", 4), 1);
    /* past its maximum: refused at the header, before the payload */
    char big[AGENT_CTR_MAX_NAME + 2];
    memset(big, 'a', sizeof(big));
    big[sizeof(big) - 1] = '\0';
    ck_assert_int_eq(end_payload(big, sizeof(big)), -EMSGSIZE);
}
END_TEST

/* ---- agent_container_end against scripted answers ---- */

static uint8_t script[4096];
static size_t slen;
#define ADD(x) (slen += (size_t)(x))
#define AT script + slen, sizeof(script) - slen
static char why[512];

static int script_end(unsigned wait_ms, int *sv)
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(write(sv[1], script, slen), (ssize_t)slen);
    int rc = agent_container_end(sv[0], "app-1", wait_ms, why, sizeof(why));
    struct agent_msg m;
    ssize_t n = recv(sv[1], frame, sizeof(frame), MSG_DONTWAIT);
    ck_assert_int_eq(n, AGENT_HDR_SIZE + 6);
    ck_assert_int_eq(decode_end(frame, (size_t)n, AGENT_DIR_REQUEST, &m), 1);
    ck_assert_str_eq(m.u.ctr_end.name, "app-1");
    close(sv[0]);
    close(sv[1]);
    return rc;
}

START_TEST(helper)
{
    int sv[2];
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ADD(agent_encode(AT, AGENT_DONE, NULL, 0));
    ck_assert_int_eq(script_end(1000, sv), 0);
    ck_assert_str_eq(why, "");
    slen = 0;
    ADD(agent_encode_error(AT, ESRCH, AGENT_OP_CONTAINER));
    ck_assert_int_eq(script_end(1000, sv), -ESRCH);
    ck_assert_str_eq(why, "the guest could not end container app-1: No such process");
    slen = 0;
    ADD(agent_encode_error(AT, ESRCH, AGENT_OP_EXEC)); /* not this request's */
    ck_assert_int_eq(script_end(1000, sv), -EPROTO);
    slen = 0;
    ADD(agent_encode_ready(AT, AGENT_VERSION, 0));
    ck_assert_int_eq(script_end(200, sv), -ETIMEDOUT);
    /* refused names are never sent */
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(agent_container_end(sv[0], "a b", 1000, why, sizeof(why)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "was not sent"));
    ck_assert_int_eq(recv(sv[1], frame, sizeof(frame), MSG_DONTWAIT), -1);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

Suite *agent_ctr_suite(void)
{
    Suite *s = suite_create("agent_ctr");
    TCase *tc = tcase_create("exec");
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, absent_without_flag);
    tcase_add_test(tc, shapes);
    tcase_add_test(tc, encoder_refuses);
    tcase_add_test(tc, hostile_counts);
    tcase_add_test(tc, sections_do_not_add_up);
    tcase_add_test(tc, hostile_values);
    suite_add_tcase(s, tc);
    tc = tcase_create("end");
    tcase_add_test(tc, end_round_trip);
    tcase_add_test(tc, end_hostile);
    tcase_add_test(tc, helper);
    suite_add_tcase(s, tc);
    return s;
}
