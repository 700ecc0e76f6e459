/* EXEC's process section and WINSIZE (protocol version 6,
 * vmm/agent_client/agent_exec_proc.c): round trips at the limits, what the
 * encoder refuses, the hostile payloads a broken host could send (each
 * refused by the decoder the agent uses), and agent_exec_signals' size
 * records reaching the agent as WINSIZE frames. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/agent_client/agent_client.h"

#define BIG (AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD)

static uint8_t frame[BIG], again[BIG], pay[AGENT_MAX_PAYLOAD];
static const char *av[AGENT_MAX_ARGS + 1], *ev[AGENT_MAX_ENVS + 1];
static const char *const argv3[] = {"sh", "-c", "echo hi"};
static const char *const env2[] = {"PATH=/bin", "X=1"};
/* Where the section starts in sample()'s frame: header, fixed part, the
 * argv strings (3 + 3 + 8 bytes), the env strings (10 + 4). */
#define PROC (AGENT_HDR_SIZE + AGENT_EXEC_FIXED + 14 + 14)

static void sample_req(struct agent_exec_req *r)
{
    agent_exec_req_init(r);
    r->argv = argv3;
    r->argc = 3;
    r->envp = env2;
    r->envc = 2;
    r->cwd = "/work";
    r->uid = r->gid = 1000;
    r->flags = AGENT_EXEC_F_STDIN | AGENT_EXEC_F_TTY | AGENT_EXEC_F_NO_NEW_PRIVS |
               AGENT_EXEC_F_CAPS;
    r->cap_bounding = 0x1ffffffffffull; /* capabilities 0..40 */
    r->cap_effective = 1u << 0;
    r->cap_permitted = (1u << 0) | (1u << 5);
    r->cap_inheritable = 1u << 5;
    r->cap_ambient = 1u << 5;
    r->tty_rows = 40;
    r->tty_cols = 120;
    r->pidns = AGENT_PIDNS_NEW;
    r->ngroups = 3;
    r->groups[0] = 5;
    r->groups[1] = 7;
    r->groups[2] = 0xfffffffeu;
    r->nrlimits = 2;
    r->rlimits[0] = (struct agent_rlimit){4, 1000, 2000};          /* RLIMIT_CORE */
    r->rlimits[1] = (struct agent_rlimit){7, 64, UINT64_MAX};      /* NOFILE, hard unlimited */
}

size_t exec_sample(void (*fill)(struct agent_exec_req *), uint8_t *f, size_t cap)
{
    struct agent_exec_req r;
    fill(&r);
    ssize_t n = agent_encode_exec(f, cap, &r);
    ck_assert_int_gt(n, 0);
    return (size_t)n;
}

static size_t sample(void)
{
    return exec_sample(sample_req, frame, sizeof(frame));
}

int exec_decode(const uint8_t *f, size_t n, struct agent_exec_req *r)
{
    struct agent_decoder d;
    struct agent_msg m;
    size_t used;
    ck_assert_int_eq(agent_decoder_init(&d, AGENT_DIR_REQUEST), 0);
    int rc = agent_decode(&d, f, n, &used, &m);
    if (rc == 1) {
        ck_assert_uint_eq(used, n);
        ck_assert_uint_eq(m.type, AGENT_EXEC);
        /* the decoder's buffer goes with it: the strings point into a copy */
        memcpy(pay, m.payload, m.len);
        ck_assert_int_eq(agent_exec_parse(pay, m.len, r, av, ev), 0);
        /* One form per request: what decodes re-encodes to the same bytes. */
        ck_assert_int_eq(agent_encode_exec(again, sizeof(again), r), (ssize_t)n);
        ck_assert_mem_eq(again, f, n);
    }
    agent_decoder_free(&d);
    return rc;
}

START_TEST(proc_round_trip)
{
    size_t n = sample();
    struct agent_exec_req r;
    ck_assert_int_eq(exec_decode(frame, n, &r), 1);
    ck_assert_uint_eq(r.flags, AGENT_EXEC_F_STDIN | AGENT_EXEC_F_TTY | AGENT_EXEC_F_NO_NEW_PRIVS |
                                   AGENT_EXEC_F_CAPS);
    ck_assert(r.cap_bounding == 0x1ffffffffffull && r.cap_effective == 1 &&
              r.cap_permitted == 0x21 && r.cap_inheritable == 0x20 && r.cap_ambient == 0x20);
    ck_assert_uint_eq(r.tty_rows, 40);
    ck_assert_uint_eq(r.tty_cols, 120);
    ck_assert_uint_eq(r.pidns, AGENT_PIDNS_NEW);
    ck_assert_uint_eq(r.ngroups, 3);
    ck_assert_uint_eq(r.groups[0], 5);
    ck_assert_uint_eq(r.groups[2], 0xfffffffeu);
    ck_assert_uint_eq(r.nrlimits, 2);
    ck_assert_uint_eq(r.rlimits[0].resource, 4);
    ck_assert(r.rlimits[0].soft == 1000 && r.rlimits[0].hard == 2000);
    ck_assert(r.rlimits[1].soft == 64 && r.rlimits[1].hard == UINT64_MAX);
    ck_assert_str_eq(r.cwd, "/work");
    ck_assert_str_eq(r.argv[2], "echo hi");
    ck_assert_str_eq(r.envp[1], "X=1");
    /* the layout proto.h gives */
    ck_assert_uint_eq(rd16le(frame + PROC), 40);
    ck_assert_uint_eq(rd16le(frame + PROC + 2), 120);
    ck_assert_uint_eq(rd32le(frame + PROC + 4), 3);
    ck_assert_uint_eq(rd32le(frame + PROC + 8), 2);
    ck_assert_uint_eq(rd32le(frame + PROC + AGENT_EXEC_PROC_FIXED + 4), 7);
    ck_assert_uint_eq(rd32le(frame + PROC + 12), AGENT_PIDNS_NEW);
    ck_assert(rd64le(frame + PROC + 16) == 0x1ffffffffffull && rd64le(frame + PROC + 24) == 1 &&
              rd64le(frame + PROC + 32) == 0x21 && rd64le(frame + PROC + 40) == 0x20 &&
              rd64le(frame + PROC + 48) == 0x20);
    ck_assert_uint_eq(rd32le(frame + PROC + AGENT_EXEC_PROC_FIXED + 12), 4);
    ck_assert(rd64le(frame + PROC + AGENT_EXEC_PROC_FIXED + 16) == 1000 &&
              rd64le(frame + PROC + AGENT_EXEC_PROC_FIXED + 24) == 2000);
    ck_assert_str_eq((const char *)frame + PROC + AGENT_EXEC_PROC_FIXED + 12 + 40, "/work");
}
END_TEST

/* An existing caller's request (no terminal, no capabilities, no groups,
 * no list): the section is its fixed part's zero bytes, and the request
 * reads back the same. */
START_TEST(proc_defaults)
{
    struct agent_exec_req r;
    agent_exec_req_init(&r);
    r.argv = argv3;
    r.argc = 3;
    r.envp = env2;
    r.envc = 2;
    ssize_t n = agent_encode_exec(frame, sizeof(frame), &r);
    ck_assert_int_eq(n, PROC + AGENT_EXEC_PROC_FIXED + 1);
    static const uint8_t zero[AGENT_EXEC_PROC_FIXED];
    ck_assert_mem_eq(frame + PROC, zero, sizeof(zero));
    struct agent_exec_req back;
    ck_assert_int_eq(exec_decode(frame, (size_t)n, &back), 1);
    ck_assert_uint_eq(back.flags, 0);
    ck_assert_uint_eq(back.ngroups, 0);
    ck_assert_uint_eq(back.nrlimits, 0);
    ck_assert_uint_eq(back.tty_rows, 0);
}
END_TEST

START_TEST(proc_at_limits)
{
    struct agent_exec_req r;
    sample_req(&r);
    r.ngroups = AGENT_MAX_GROUPS;
    for (uint32_t i = 0; i < AGENT_MAX_GROUPS; i++)
        r.groups[i] = 100 + i;
    r.nrlimits = AGENT_MAX_RLIMITS;
    for (uint32_t i = 0; i < AGENT_MAX_RLIMITS; i++) /* every resource, backwards */
        r.rlimits[i] = (struct agent_rlimit){AGENT_RLIMIT_NUM - 1 - i, i, i};
    r.tty_rows = r.tty_cols = 65535;
    ssize_t n = agent_encode_exec(frame, sizeof(frame), &r);
    ck_assert_int_eq(n, PROC + AGENT_EXEC_PROC_MAX + 6);
    struct agent_exec_req back;
    ck_assert_int_eq(exec_decode(frame, (size_t)n, &back), 1);
    ck_assert_uint_eq(back.groups[AGENT_MAX_GROUPS - 1], 100 + AGENT_MAX_GROUPS - 1);
    ck_assert_uint_eq(back.rlimits[AGENT_MAX_RLIMITS - 1].resource, 0);
    ck_assert_uint_eq(back.tty_cols, 65535);
}
END_TEST

/* The encoder refuses what the decoder would: nothing is sent. */
START_TEST(proc_encoder_refuses)
{
    struct agent_exec_req r;
#define REFUSED(change)                                                         \
    do {                                                                        \
        sample_req(&r);                                                         \
        change;                                                                 \
        ck_assert_int_eq(agent_encode_exec(frame, sizeof(frame), &r), -EINVAL); \
    } while (0)
    REFUSED(r.ngroups = AGENT_MAX_GROUPS + 1);
    REFUSED(r.nrlimits = AGENT_MAX_RLIMITS + 1);
    REFUSED(r.groups[1] = 0xffffffffu);
    REFUSED(r.rlimits[1].resource = AGENT_RLIMIT_NUM);
    REFUSED(r.rlimits[1].resource = 4);                       /* CORE twice */
    REFUSED(r.rlimits[0].soft = 2001);                        /* soft > hard */
    REFUSED(r.flags &= ~AGENT_EXEC_F_TTY);                    /* a size, no terminal */
    REFUSED(r.flags |= AGENT_EXEC_F_KEEP << 1);               /* unknown flag */
    REFUSED(r.flags &= ~AGENT_EXEC_F_CAPS);                   /* sets without the flag */
#undef REFUSED
    sample_req(&r);
    r.flags &= ~AGENT_EXEC_F_TTY;
    r.tty_rows = r.tty_cols = 0;
    ck_assert_int_gt(agent_encode_exec(frame, sizeof(frame), &r), 0);
}
END_TEST

/* sample()'s frame with the u32 at `off` replaced: the decoder's verdict. */
int exec_with32(void (*fill)(struct agent_exec_req *), uint8_t *f, size_t cap, size_t off,
                uint32_t v)
{
    size_t n = exec_sample(fill, f, cap);
    wr32(f, off, v);
    struct agent_exec_req r;
    return exec_decode(f, n, &r);
}

/* ... with the byte at `off` replaced. */
int exec_with8(void (*fill)(struct agent_exec_req *), uint8_t *f, size_t cap, size_t off,
               uint8_t v)
{
    size_t n = exec_sample(fill, f, cap);
    f[off] = v;
    struct agent_exec_req r;
    return exec_decode(f, n, &r);
}

/* The request `fill` makes with one change, `edit`: what the encoder says. */
ssize_t exec_edited(void (*fill)(struct agent_exec_req *), void (*edit)(struct agent_exec_req *),
                    uint8_t *f, size_t cap)
{
    struct agent_exec_req r;
    fill(&r);
    edit(&r);
    return agent_encode_exec(f, cap, &r);
}

static int with32(size_t off, uint32_t v)
{
    return exec_with32(sample_req, frame, sizeof(frame), off, v);
}

static int with64(size_t off, uint64_t v)
{
    size_t n = sample();
    wr64(frame, off, v);
    struct agent_exec_req r;
    return exec_decode(frame, n, &r);
}

START_TEST(proc_hostile_counts)
{
    ck_assert_int_eq(with32(PROC + 4, AGENT_MAX_GROUPS + 1), -EPROTO);
    ck_assert_int_eq(with32(PROC + 4, 0xffffffffu), -EPROTO);
    ck_assert_int_eq(with32(PROC + 8, AGENT_MAX_RLIMITS + 1), -EPROTO);
    ck_assert_int_eq(with32(PROC + 8, 0x80000000u), -EPROTO);
    /* counts within their limits whose arrays run past the payload */
    ck_assert_int_eq(with32(PROC + 4, AGENT_MAX_GROUPS), -EPROTO);
    ck_assert_int_eq(with32(PROC + 8, AGENT_MAX_RLIMITS), -EPROTO);
}
END_TEST

/* Sections that do not add up: one count off either way moves where
 * the next section starts, and the bytes no longer fit it. */
START_TEST(proc_sections_do_not_add_up)
{
    ck_assert_int_eq(with32(PROC + 4, 4), -EPROTO);  /* a group eats the cwd */
    ck_assert_int_eq(with32(PROC + 4, 2), -EPROTO);  /* a gid left for the rlimits */
    ck_assert_int_eq(with32(PROC + 8, 3), -EPROTO);
    ck_assert_int_eq(with32(PROC + 8, 1), -EPROTO);  /* an rlimit read as the cwd */
    /* env_bytes one short: the section starts on the env's last NUL */
    ck_assert_int_eq(with32(AGENT_HDR_SIZE + 52, 13), -EPROTO);
    /* cut inside the section's fixed part: the payload ends after env
     * and 11 bytes (the length field says so) */
    size_t n = sample();
    uint32_t cut = PROC - AGENT_HDR_SIZE + 11;
    wr32(frame, 8, cut);
    struct agent_exec_req r;
    ck_assert_int_eq(exec_decode(frame, AGENT_HDR_SIZE + cut, &r), -EPROTO);
    /* the whole section and no cwd at all (its NUL is not there) */
    n = sample();
    wr32(frame, 8, (uint32_t)(n - AGENT_HDR_SIZE - 6));
    ck_assert_int_eq(exec_decode(frame, n - 6, &r), -EPROTO);
}
END_TEST

START_TEST(proc_hostile_values)
{
    size_t rl = PROC + AGENT_EXEC_PROC_FIXED + 12; /* the first rlimit */
    ck_assert_int_eq(with32(rl, AGENT_RLIMIT_NUM), -EPROTO);
    ck_assert_int_eq(with32(rl, 0xffffffffu), -EPROTO);
    ck_assert_int_eq(with32(rl + 20, 4), -EPROTO);             /* CORE twice */
    ck_assert_int_eq(with64(rl + 4, 2001), -EPROTO);           /* soft > hard */
    ck_assert_int_eq(with64(rl + 12, 999), -EPROTO);
    ck_assert_int_eq(with64(rl + 4, UINT64_MAX), -EPROTO);     /* unlimited soft, finite hard */
    ck_assert_int_eq(with32(PROC + AGENT_EXEC_PROC_FIXED, 0xffffffffu), -EPROTO); /* gid -1 */
    ck_assert_int_eq(with32(PROC + 12, 5), -EPROTO); /* a pidns that is none of the three */
    /* a size without the terminal flag; capability sets without theirs */
    ck_assert_int_eq(with32(AGENT_HDR_SIZE + 12, AGENT_EXEC_F_STDIN | AGENT_EXEC_F_CAPS), -EPROTO);
    ck_assert_int_eq(with32(AGENT_HDR_SIZE + 12, AGENT_EXEC_F_STDIN | AGENT_EXEC_F_TTY), -EPROTO);
    ck_assert_int_eq(with32(AGENT_HDR_SIZE + 12, (AGENT_EXEC_F_CONTAINER << 1) | AGENT_EXEC_F_ALL),
                     -EPROTO); /* unknown */
    /* the same values the rules allow still decode */
    ck_assert_int_eq(with64(rl + 4, 2000), 1);
    ck_assert_int_eq(with32(rl + 20, 15), 1);
}
END_TEST

/* AGENT_EXEC_F_SCRIPT (version 8): SHELL -c SCRIPT only, and a script as
 * long as the sandbox API's whole 1 MiB body round-trips. */
START_TEST(script_flag)
{
    struct agent_exec_req r, back;
    agent_exec_req_init(&r);
    size_t len = (1u << 20) - 10; /* the body {"cmd":"..."} at 1 MiB */
    char *script = malloc(len + 1);
    memset(script, 'x', len);
    script[len] = '\0';
    const char *args[] = {"/bin/sh", "-c", script, "extra"};
    r.argv = args;
    r.argc = 3;
    r.flags = AGENT_EXEC_F_SCRIPT;
    ssize_t n = agent_encode_exec(frame, sizeof(frame), &r);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(exec_decode(frame, (size_t)n, &back), 1);
    ck_assert_uint_eq(back.flags, AGENT_EXEC_F_SCRIPT);
    ck_assert_uint_eq(strlen(back.argv[2]), len);
    for (uint32_t argc = 1; argc <= 4; argc += 1 + (argc == 2)) { /* 1, 2, 4 */
        r.argc = argc;
        ck_assert_int_eq(agent_encode_exec(frame, sizeof(frame), &r), -EINVAL);
    }
    free(script);
    /* A host that sets it anyway on another argv: the agent refuses. */
    const char *two[] = {"/bin/sh", "-c"};
    r.argv = two;
    r.argc = 2;
    r.flags = 0;
    n = agent_encode_exec(frame, sizeof(frame), &r);
    ck_assert_int_gt(n, 0);
    wr32(frame, AGENT_HDR_SIZE + 12, AGENT_EXEC_F_SCRIPT);
    ck_assert_int_eq(exec_decode(frame, (size_t)n, &back), -EPROTO);
}
END_TEST

START_TEST(winsize_codec)
{
    struct agent_decoder d;
    struct agent_msg m;
    size_t used;
    ssize_t n = agent_encode_winsize(frame, sizeof(frame), 50, 132);
    ck_assert_int_eq(n, AGENT_HDR_SIZE + AGENT_WINSIZE_SIZE);
    ck_assert_int_eq(agent_decoder_init(&d, AGENT_DIR_REQUEST), 0);
    ck_assert_int_eq(agent_decode(&d, frame, (size_t)n, &used, &m), 1);
    ck_assert_uint_eq(m.type, AGENT_WINSIZE);
    ck_assert_uint_eq(m.u.winsize.rows, 50);
    ck_assert_uint_eq(m.u.winsize.cols, 132);
    agent_decoder_free(&d);
    /* not from the agent */
    ck_assert_int_eq(agent_decoder_init(&d, AGENT_DIR_REPLY), 0);
    ck_assert_int_eq(agent_decode(&d, frame, (size_t)n, &used, &m), -EPROTO);
    agent_decoder_free(&d);
    /* wrong lengths: short and empty are malformed, long is over the limit */
    static const uint32_t lens[] = {0, 3, 5, 8};
    static const int want[] = {-EPROTO, -EPROTO, -EMSGSIZE, -EMSGSIZE};
    for (unsigned i = 0; i < 4; i++) {
        memset(frame + AGENT_HDR_SIZE, 0, 8);
        wr32(frame, 0, AGENT_MAGIC);
        wr16(frame, 4, AGENT_VERSION);
        wr16(frame, 6, AGENT_WINSIZE);
        wr32(frame, 8, lens[i]);
        ck_assert_int_eq(agent_decoder_init(&d, AGENT_DIR_REQUEST), 0);
        ck_assert_int_eq(agent_decode(&d, frame, AGENT_HDR_SIZE + lens[i], &used, &m), want[i]);
        agent_decoder_free(&d);
    }
}
END_TEST

struct win_job {
    int sock, sig_r, rc;
    struct agent_exec_result res;
};

static void *win_job_run(void *arg)
{
    struct win_job *j = arg;
    static const char *const argv[] = {"sh"};
    struct agent_exec_req req;
    agent_exec_req_init(&req);
    req.argv = argv;
    req.argc = 1;
    req.flags = AGENT_EXEC_F_TTY;
    req.tty_rows = 24;
    req.tty_cols = 80;
    j->rc = agent_exec_signals(j->sock, &req, -1, -1, -1, j->sig_r, UINT64_MAX, &j->res);
    return NULL;
}

/* Size records on agent_exec_signals' fd reach the agent as WINSIZE, in
 * order with the signals around them; a record cut short (its writer
 * closed after the first byte) sends nothing. */
START_TEST(helper_exec_winsize)
{
    int sv[2], sp[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(pipe2(sp, O_CLOEXEC), 0);
    struct win_job j = {.sock = sv[0], .sig_r = sp[0]};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, win_job_run, &j), 0);
    uint8_t script[64];
    size_t slen = (size_t)agent_encode_ready(script, sizeof(script), AGENT_VERSION, 0);
    slen += (size_t)agent_encode_started(script + slen, sizeof(script) - slen, 7);
    ck_assert_int_eq(write(sv[1], script, slen), (ssize_t)slen);
    uint8_t recs[32];
    size_t rl = 0;
    agent_sigq_winsize(recs, 50, 132);
    rl += AGENT_SIGQ_WINSIZE_LEN;
    recs[rl++] = 28; /* SIGWINCH as a signal: a byte still means a signal */
    agent_sigq_winsize(recs + rl, 1, 65535);
    rl += AGENT_SIGQ_WINSIZE_LEN;
    recs[rl++] = AGENT_SIGQ_WINSIZE; /* cut short: dropped */
    ck_assert_int_eq(write(sp[1], recs, rl), (ssize_t)rl);
    close(sp[1]);
    struct agent_decoder d;
    ck_assert_int_eq(agent_decoder_init(&d, AGENT_DIR_REQUEST), 0);
    struct agent_msg seen[4];
    unsigned nseen = 0;
    uint8_t in[4096];
    while (nseen < 3) {
        ssize_t r = read(sv[1], in, sizeof(in));
        ck_assert_int_gt(r, 0);
        for (size_t off = 0, used; off < (size_t)r; off += used) {
            struct agent_msg m;
            int rc = agent_decode(&d, in + off, (size_t)r - off, &used, &m);
            ck_assert_int_ge(rc, 0);
            if (rc == 1 && m.type != AGENT_EXEC) {
                ck_assert_uint_lt(nseen, 3);
                seen[nseen++] = m;
            }
        }
    }
    agent_decoder_free(&d);
    ck_assert_uint_eq(seen[0].type, AGENT_WINSIZE);
    ck_assert_uint_eq(seen[0].u.winsize.rows, 50);
    ck_assert_uint_eq(seen[0].u.winsize.cols, 132);
    ck_assert_uint_eq(seen[1].type, AGENT_SIGNAL);
    ck_assert_uint_eq(seen[1].u.signal.signo, 28);
    ck_assert_uint_eq(seen[2].type, AGENT_WINSIZE);
    ck_assert_uint_eq(seen[2].u.winsize.cols, 65535);
    slen = (size_t)agent_encode_exit(script, sizeof(script), AGENT_EXIT_CODE, 0, 0);
    ck_assert_int_eq(write(sv[1], script, slen), (ssize_t)slen);
    pthread_join(t, NULL);
    ck_assert_int_eq(j.rc, 0);
    ck_assert_int_eq(agent_result_status(&j.res), 0);
    /* nothing more came: the cut record was dropped */
    shutdown(sv[0], SHUT_WR);
    ck_assert_int_eq(read(sv[1], in, sizeof(in)), 0);
    close(sv[0]);
    close(sv[1]);
    close(sp[0]);
}
END_TEST

Suite *agent_exec_proc_suite(void)
{
    Suite *s = suite_create("agent_exec_proc");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, proc_round_trip);
    tcase_add_test(tc, proc_defaults);
    tcase_add_test(tc, proc_at_limits);
    tcase_add_test(tc, proc_encoder_refuses);
    tcase_add_test(tc, proc_hostile_counts);
    tcase_add_test(tc, proc_sections_do_not_add_up);
    tcase_add_test(tc, proc_hostile_values);
    tcase_add_test(tc, script_flag);
    tcase_add_test(tc, winsize_codec);
    suite_add_tcase(s, tc);
    tc = tcase_create("helper");
    tcase_add_test(tc, helper_exec_winsize);
    suite_add_tcase(s, tc);
    return s;
}
