/* EXEC's linux section (protocol version 16,
 * vmm/agent_client/agent_linux_codec.c): round trips at the limits, the
 * layout proto.h gives, what the encoder refuses, and hostile payloads
 * the agent's decoder must refuse; and config.json's linux settings as
 * the runtime reads them (vmm/runtime/oci_linux.c) into the section
 * (container_linux.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/unit/helpers.h"
#include "vmm/agent_client/agent_client.h"
#include "vmm/runtime/container_linux.h"
#include "vmm/runtime/oci_config.h"

#define BIG (AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD)

static uint8_t frame[BIG];
static const char *const argv1[] = {"sh"};
/* Where the section starts in sample()'s frame: header, fixed part, argv
 * "sh" (3 bytes), no env, the process section with empty arrays, no
 * container section. */
#define LNX (AGENT_HDR_SIZE + AGENT_EXEC_FIXED + 3 + AGENT_EXEC_PROC_FIXED)
#define TMPFS (LNX + AGENT_EXEC_LNX_FIXED)
/* after the one tmpfs: flags, propagation, "/run", "mode=755,size=1k" */
#define STRS (TMPFS + AGENT_LNX_TMPFS_FIXED + 5 + 17)

static void sample_req(struct agent_exec_req *r)
{
    agent_exec_req_init(r);
    r->argv = argv1;
    r->argc = 1;
    r->cwd = "/w";
    r->pidns = AGENT_PIDNS_NEW;
    r->flags = AGENT_EXEC_F_LINUX;
    r->lnx_flags = AGENT_LNX_F_ROOT_RO | AGENT_LNX_F_OOM;
    r->oom_score_adj = -17;
    r->propagation = AGENT_LNX_PROP_RSLAVE;
    r->nmasked = 2;
    r->masked[0] = "/proc/kcore";
    r->masked[1] = "/sys/firmware";
    r->nreadonly = 1;
    r->readonly[0] = "/proc/sys";
    r->nsysctl = 1;
    r->sysctl[0] = (struct agent_sysctl){"net.ipv4.ip_forward", "1"};
    r->ndevices = 2;
    r->devices[0] = (struct agent_device){"/dev/fuse", S_IFCHR | 0666, 10, 229, 0, 0};
    r->devices[1] = (struct agent_device){"/dev/pipe", S_IFIFO | 0600, 0, 0, 1000, 1000};
    r->ntmpfs = 1;
    r->tmpfs[0] = (struct agent_tmpfs){"/run", "mode=755,size=1k", 0x2 | 0x4, AGENT_LNX_PROP_SHARED};
}

static size_t sample(void)
{
    return exec_sample(sample_req, frame, sizeof(frame));
}

START_TEST(round_trip)
{
    size_t n = sample();
    struct agent_exec_req r;
    ck_assert_int_eq(exec_decode(frame, n, &r), 1);
    ck_assert_uint_eq(r.flags, AGENT_EXEC_F_LINUX);
    ck_assert_uint_eq(r.lnx_flags, AGENT_LNX_F_ROOT_RO | AGENT_LNX_F_OOM);
    ck_assert_int_eq(r.oom_score_adj, -17);
    ck_assert_uint_eq(r.propagation, AGENT_LNX_PROP_RSLAVE);
    ck_assert_uint_eq(r.nmasked, 2);
    ck_assert_str_eq(r.masked[1], "/sys/firmware");
    ck_assert_str_eq(r.readonly[0], "/proc/sys");
    ck_assert_str_eq(r.sysctl[0].key, "net.ipv4.ip_forward");
    ck_assert_str_eq(r.sysctl[0].value, "1");
    ck_assert_uint_eq(r.ndevices, 2);
    ck_assert_str_eq(r.devices[0].path, "/dev/fuse");
    ck_assert_uint_eq(r.devices[0].mode, S_IFCHR | 0666);
    ck_assert_uint_eq(r.devices[0].major, 10);
    ck_assert_uint_eq(r.devices[0].minor, 229);
    ck_assert_uint_eq(r.devices[1].uid, 1000);
    ck_assert_uint_eq(r.ntmpfs, 1);
    ck_assert_str_eq(r.tmpfs[0].target, "/run");
    ck_assert_str_eq(r.tmpfs[0].options, "mode=755,size=1k");
    ck_assert_uint_eq(r.tmpfs[0].flags, 0x6);
    ck_assert_uint_eq(r.tmpfs[0].propagation, AGENT_LNX_PROP_SHARED);
    ck_assert_str_eq(r.cwd, "/w");
    /* the layout proto.h gives */
    ck_assert_uint_eq(rd32le(frame + LNX), AGENT_LNX_F_ROOT_RO | AGENT_LNX_F_OOM);
    ck_assert_uint_eq(rd32le(frame + LNX + 4), (uint32_t)-17);
    ck_assert_uint_eq(rd32le(frame + LNX + 8), AGENT_LNX_PROP_RSLAVE);
    ck_assert_uint_eq(frame[LNX + 12], 2);
    ck_assert_uint_eq(frame[LNX + 18], 2);
    ck_assert_uint_eq(frame[LNX + 20], 1);
    ck_assert_uint_eq(rd32le(frame + LNX + 24), n - TMPFS - 3); /* all but "/w" */
    ck_assert_uint_eq(rd32le(frame + TMPFS), 0x6);
    ck_assert_str_eq((const char *)frame + TMPFS + 8, "/run");
    ck_assert_str_eq((const char *)frame + STRS, "/proc/kcore");
    ck_assert_str_eq((const char *)frame + n - 3, "/w");
}
END_TEST

/* Without the flag the request is byte for byte what version 15 sent. */
START_TEST(absent_without_flag)
{
    struct agent_exec_req r, back;
    agent_exec_req_init(&r);
    r.argv = argv1;
    r.argc = 1;
    r.pidns = AGENT_PIDNS_NEW;
    ssize_t n = agent_encode_exec(frame, sizeof(frame), &r);
    ck_assert_int_eq(n, LNX + 1);
    ck_assert_int_eq(exec_decode(frame, (size_t)n, &back), 1);
    ck_assert_uint_eq(back.lnx_flags | back.nmasked | back.ndevices | back.ntmpfs, 0);
}
END_TEST

/* With a pod's container section before it; every list at its limit. */
START_TEST(shapes)
{
    struct agent_exec_req *r = malloc(sizeof(*r)), *back = malloc(sizeof(*back));
    sample_req(r);
    r->flags |= AGENT_EXEC_F_CONTAINER;
    r->ctr_name = "app";
    r->ctr_serial = "s1";
    ck_assert_int_eq(exec_decode(frame, (size_t)agent_encode_exec(frame, sizeof(frame), r), back), 1);
    ck_assert_str_eq(back->ctr_name, "app");
    ck_assert_str_eq(back->sysctl[0].value, "1");
    static char path[AGENT_LNX_MAX_PATH], key[AGENT_LNX_MAX_KEY], val[AGENT_LNX_MAX_VALUE];
    memset(path, 'p', sizeof(path) - 1);
    path[0] = '/';
    memset(key, 'k', sizeof(key) - 1);
    memset(val, 'v', sizeof(val) - 1);
    sample_req(r);
    r->nmasked = r->nreadonly = r->nsysctl = r->ndevices = AGENT_LNX_MAX_LIST;
    for (unsigned i = 0; i < AGENT_LNX_MAX_LIST; i++) {
        r->masked[i] = r->readonly[i] = path;
        r->sysctl[i] = (struct agent_sysctl){key, val};
        r->devices[i] = (struct agent_device){path, S_IFBLK | 07777, 4095, 1048575, 1, 2};
    }
    /* 64 x (1024 + 1024 + 1280 + 1044) bytes: past the section's 256 KiB */
    ck_assert_int_eq(agent_encode_exec(frame, sizeof(frame), r), -EINVAL);
    r->nreadonly = 0;
    r->nsysctl = 40;
    r->ntmpfs = 0;
    ssize_t n = agent_encode_exec(frame, sizeof(frame), r);
    ck_assert_int_gt(n, 180000);
    ck_assert_int_eq(exec_decode(frame, (size_t)n, back), 1);
    ck_assert_uint_eq(back->ndevices, AGENT_LNX_MAX_LIST);
    ck_assert_uint_eq(back->devices[63].minor, 1048575);
    ck_assert_uint_eq(strlen(back->sysctl[39].value), AGENT_LNX_MAX_VALUE - 1);
    free(r);
    free(back);
}
END_TEST

static ssize_t enc_with(void (*edit)(struct agent_exec_req *))
{
    return exec_edited(sample_req, edit, frame, sizeof(frame));
}

static void no_flag(struct agent_exec_req *r) { r->flags = 0; }
static void join(struct agent_exec_req *r) { r->pidns = AGENT_PIDNS_JOIN; }
static void no_pidns(struct agent_exec_req *r) { r->pidns = 0; }
static void bad_lflag(struct agent_exec_req *r) { r->lnx_flags |= 4; }
static void oom_low(struct agent_exec_req *r) { r->oom_score_adj = -1001; }
static void oom_high(struct agent_exec_req *r) { r->oom_score_adj = 1001; }
static void oom_unflagged(struct agent_exec_req *r) { r->lnx_flags = 0; }
static void prop_past(struct agent_exec_req *r) { r->propagation = AGENT_LNX_PROP_LAST + 1; }
static void masked_many(struct agent_exec_req *r) { r->nmasked = AGENT_LNX_MAX_LIST + 1; }
static void masked_rel(struct agent_exec_req *r) { r->masked[0] = "proc/kcore"; }
static void masked_dotdot(struct agent_exec_req *r) { r->masked[0] = "/proc/../etc"; }
static void masked_root(struct agent_exec_req *r) { r->masked[0] = "/"; }
static void masked_null(struct agent_exec_req *r) { r->masked[1] = NULL; }
static void ro_slash(struct agent_exec_req *r) { r->readonly[0] = "/proc/sys/"; }
static void key_slash(struct agent_exec_req *r) { r->sysctl[0].key = "net/ipv4"; }
static void key_dots(struct agent_exec_req *r) { r->sysctl[0].key = "net..ipv4"; }
static void key_lead(struct agent_exec_req *r) { r->sysctl[0].key = ".net"; }
static void key_trail(struct agent_exec_req *r) { r->sysctl[0].key = "net."; }
static void key_empty(struct agent_exec_req *r) { r->sysctl[0].key = ""; }
static void value_nl(struct agent_exec_req *r) { r->sysctl[0].value = "1\n2"; }
static void dev_type(struct agent_exec_req *r) { r->devices[0].mode = S_IFREG | 0644; }
static void dev_bits(struct agent_exec_req *r) { r->devices[0].mode |= 010000000; }
static void dev_major(struct agent_exec_req *r) { r->devices[0].major = 4096; }
static void dev_minor(struct agent_exec_req *r) { r->devices[0].minor = 1048576; }
static void fifo_major(struct agent_exec_req *r) { r->devices[1].major = 1; }
static void dev_proc(struct agent_exec_req *r) { r->devices[0].path = "/proc/x"; }
static void dev_sys(struct agent_exec_req *r) { r->devices[0].path = "/sys/x"; }
static void tmpfs_flags(struct agent_exec_req *r) { r->tmpfs[0].flags |= 0x40; /* MS_REMOUNT */ }
static void tmpfs_bind(struct agent_exec_req *r) { r->tmpfs[0].flags |= 0x1000; /* MS_BIND */ }
static void tmpfs_prop(struct agent_exec_req *r) { r->tmpfs[0].propagation = 9; }
static void tmpfs_proc(struct agent_exec_req *r) { r->tmpfs[0].target = "/proc/sys"; }
static void tmpfs_root(struct agent_exec_req *r) { r->tmpfs[0].target = "/"; }
static void tmpfs_space(struct agent_exec_req *r) { r->tmpfs[0].options = "mode=755 size=1k"; }
static void tmpfs_nl(struct agent_exec_req *r) { r->tmpfs[0].options = "size=1k\nx"; }
static void tmpfs_many(struct agent_exec_req *r) { r->ntmpfs = AGENT_LNX_MAX_LIST + 1; }
static void fine_no_options(struct agent_exec_req *r) { r->tmpfs[0].options = ""; }
static void fine_empty_value(struct agent_exec_req *r) { r->sysctl[0].value = ""; }
static void fine_dash_key(struct agent_exec_req *r) { r->sysctl[0].key = "net.ipv4.conf.eth-0.rp_filter"; }

START_TEST(encoder_refuses)
{
    void (*bad[])(struct agent_exec_req *) = {
        no_flag,    join,      no_pidns,  bad_lflag,  oom_low,    oom_high,  oom_unflagged,
        prop_past,  masked_many, masked_rel, masked_dotdot, masked_root, masked_null, ro_slash,
        key_slash,  key_dots,  key_lead,  key_trail,  key_empty,  value_nl,  dev_type,
        dev_bits,   dev_major, dev_minor, fifo_major, dev_proc,   dev_sys,   tmpfs_flags,
        tmpfs_bind, tmpfs_prop, tmpfs_proc, tmpfs_root, tmpfs_space, tmpfs_nl, tmpfs_many,
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(enc_with(bad[i]) == -EINVAL, "case %zu encoded", i);
    ck_assert_int_gt(enc_with(fine_empty_value), 0);
    ck_assert_int_gt(enc_with(fine_no_options), 0);
    ck_assert_int_gt(enc_with(fine_dash_key), 0);
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

START_TEST(hostile)
{
    size_t n = sample();
    uint32_t bytes = rd32le(frame + LNX + 24);
    ck_assert_int_eq(with32(LNX, 4), -EPROTO);                      /* an unknown flag */
    ck_assert_int_eq(with32(LNX + 4, 1001), -EPROTO);               /* oom past 1000 */
    ck_assert_int_eq(with32(LNX + 4, (uint32_t)-1001), -EPROTO);
    ck_assert_int_eq(with32(LNX + 8, 9), -EPROTO);                  /* propagation */
    ck_assert_int_eq(with32(LNX + 12, 0xffff), -EPROTO);            /* nmasked, nreadonly */
    ck_assert_int_eq(with32(LNX + 16, 0x00ff0001), -EPROTO);        /* 255 devices */
    ck_assert_int_eq(with32(LNX + 24, AGENT_LNX_MAX_BYTES + 1), -EPROTO);
    ck_assert_int_eq(with32(LNX + 24, 0xffffffffu), -EPROTO);
    ck_assert_int_eq(with32(LNX + 24, bytes - 1), -EPROTO);         /* the last NUL outside */
    ck_assert_int_eq(with32(LNX + 24, bytes + 1), -EPROTO);         /* the cwd's first byte in */
    ck_assert_int_eq(with32(LNX + 24, 0), -EPROTO);
    ck_assert_int_eq(with32(LNX + 20, 1 | 1u << 16), -EPROTO);      /* the zero field not 0 */
    ck_assert_int_eq(with32(LNX + 20, 2), -EPROTO);                 /* a tmpfs more */
    ck_assert_int_eq(with32(TMPFS, 0x1000), -EPROTO);               /* MS_BIND */
    ck_assert_int_eq(with32(TMPFS + 4, 9), -EPROTO);                /* its propagation */
    ck_assert_int_eq(with8(TMPFS + 8 + 5 + 4, ' '), -EPROTO);       /* "mode 755,..." */
    ck_assert_int_eq(with32(LNX + 12, 3 | 1u << 16), -EPROTO);      /* a path more */
    ck_assert_int_eq(with32(LNX + 12, 1 | 0u << 16), -EPROTO);      /* a path less */
    /* the same three paths counted another way: the bytes still add up */
    ck_assert_int_eq(with32(LNX + 12, 1 | 2u << 16), 1);
    ck_assert_int_eq(with8(STRS, 'p'), -EPROTO);                    /* "pproc/kcore" */
    ck_assert_int_eq(with8(STRS + 5, '.'), 1);                      /* "/proc.kcore" is fine */
    n = sample();
    memcpy(frame + STRS + 5, "/../", 4);                             /* "/proc/../re" */
    struct agent_exec_req r;
    ck_assert_int_eq(exec_decode(frame, n, &r), -EPROTO);
    /* the sysctl's key with a '/', its value with a newline */
    size_t key = STRS + strlen("/proc/kcore") + 1 + strlen("/sys/firmware") + 1 + strlen("/proc/sys") + 1;
    ck_assert_str_eq((const char *)frame + key, "net.ipv4.ip_forward");
    ck_assert_int_eq(with8(key + 3, '/'), -EPROTO);
    ck_assert_int_eq(with8(key + strlen("net.ipv4.ip_forward") + 1, '\n'), -EPROTO);
    /* the first device: its mode a regular file's, its major past 12 bits */
    size_t dev = key + strlen("net.ipv4.ip_forward") + 1 + 2;
    ck_assert_int_eq(rd32le(frame + dev), S_IFCHR | 0666);
    ck_assert_int_eq(with32(dev, S_IFREG | 0666), -EPROTO);
    ck_assert_int_eq(with32(dev + 4, 4096), -EPROTO);
    ck_assert_int_eq(with32(dev + 8, 0xffffffffu), -EPROTO);
    /* a JOIN with the section; pidns 0 */
    ck_assert_int_eq(with32(LNX - AGENT_EXEC_PROC_FIXED + 12, AGENT_PIDNS_JOIN), -EPROTO);
    ck_assert_int_eq(with32(LNX - AGENT_EXEC_PROC_FIXED + 12, 0), -EPROTO);
    /* the flag set with no room for the section: the cwd read as one */
    struct agent_exec_req q;
    agent_exec_req_init(&q);
    q.argv = argv1;
    q.argc = 1;
    q.pidns = AGENT_PIDNS_NEW;
    q.cwd = "/0123456789012345678901234";
    n = (size_t)agent_encode_exec(frame, sizeof(frame), &q);
    wr32(frame, AGENT_HDR_SIZE + 12, AGENT_EXEC_F_LINUX);
    ck_assert_int_eq(exec_decode(frame, n, &q), -EPROTO);
}
END_TEST

/* ---- config.json's linux settings, read and put in the section ---- */

/* A container's first process's request for c (free it). */
static struct agent_exec_req *first_process_of(const struct oci_config *c)
{
    struct agent_exec_req *r = malloc(sizeof(*r));
    ck_assert_ptr_nonnull(r);
    agent_exec_req_init(r);
    r->argv = argv1;
    r->argc = 1;
    r->pidns = AGENT_PIDNS_NEW;
    container_linux_section(c, r);
    return r;
}

static int parse(const char *linux_json, const char *process_extra, struct oci_config *c,
                 char *err, size_t cap)
{
    char doc[4096];
    snprintf(doc, sizeof(doc),
             "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\",\"readonly\":true},"
             "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"%s},\"linux\":%s}",
             process_extra, linux_json);
    return oci_config_parse(doc, strlen(doc), c, err, cap);
}

START_TEST(config_read)
{
    struct oci_config c;
    char err[512];
    int rc = parse("{\"maskedPaths\":[\"/proc/kcore\",\"/sys/firmware\"],"
                   "\"readonlyPaths\":[\"/proc/sys\"],"
                   "\"sysctl\":{\"net.ipv4.ip_forward\":\"1\",\"kernel.shmmax\":\"65536\"},"
                   "\"devices\":[{\"path\":\"/dev/file1\",\"type\":\"c\",\"major\":1,\"minor\":3,"
                   "\"fileMode\":432,\"uid\":0,\"gid\":0},"
                   "{\"path\":\"/dev/file2\",\"type\":\"u\",\"major\":1,\"minor\":5},"
                   "{\"path\":\"/dev/file3\",\"type\":\"p\"}],"
                   "\"rootfsPropagation\":\"rslave\"}",
                   ",\"oomScoreAdj\":500", &c, err, sizeof(err));
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_uint_eq(c.linux_view.nmasked, 2);
    ck_assert_uint_eq(c.linux_view.ndevices, 3);
    ck_assert_int_eq(c.linux_view.devices[1].type, 'c');
    ck_assert_uint_eq(c.linux_view.devices[1].mode, 0666); /* fileMode not given */
    ck_assert_uint_eq(c.linux_view.devices[0].mode, 0660);
    ck_assert(c.process.has_oom);
    struct agent_exec_req *r = first_process_of(&c);
    ck_assert_uint_eq(r->flags, AGENT_EXEC_F_LINUX);
    ck_assert_uint_eq(r->lnx_flags, AGENT_LNX_F_ROOT_RO | AGENT_LNX_F_OOM);
    ck_assert_int_eq(r->oom_score_adj, 500);
    ck_assert_uint_eq(r->propagation, AGENT_LNX_PROP_RSLAVE);
    ck_assert_uint_eq(r->devices[2].mode, S_IFIFO | 0666);
    ck_assert_uint_eq(r->devices[0].mode, S_IFCHR | 0660);
    ck_assert_int_gt(agent_encode_exec(frame, sizeof(frame), r), 0);
    ck_assert_int_eq(container_linux_check(&c, err, sizeof(err)), 0);
    oci_config_free(&c);
    /* nothing asked: no section, the request as before */
    static const char plain[] = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},"
                                "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"}}";
    ck_assert_int_eq(oci_config_parse(plain, strlen(plain), &c, err, sizeof(err)), 0);
    agent_exec_req_init(r);
    container_linux_section(&c, r);
    ck_assert_uint_eq(r->flags, 0);
    oci_config_free(&c);
    free(r);
}
END_TEST

START_TEST(config_refused)
{
    static const struct {
        const char *linux_json, *process_extra, *says;
    } bad[] = {
        {"{\"maskedPaths\":\"/proc\"}", "", "linux.maskedPaths: want an array"},
        {"{\"maskedPaths\":[\"proc/kcore\"]}", "", "linux.maskedPaths: proc/kcore: want a clean"},
        {"{\"readonlyPaths\":[\"/proc/../etc\"]}", "", "linux.readonlyPaths: /proc/../etc"},
        {"{\"readonlyPaths\":[7]}", "", "linux.readonlyPaths: want strings"},
        {"{\"sysctl\":{\"net/ipv4\":\"1\"}}", "", "linux.sysctl: net/ipv4: want a key"},
        {"{\"sysctl\":{\"net.ipv4.ip_forward\":1}}", "", "linux.sysctl: net.ipv4.ip_forward: want a one-line"},
        {"{\"sysctl\":{\"a\":\"1\\n2\"}}", "", "linux.sysctl: a: want a one-line"},
        {"{\"sysctl\":[]}", "", "linux.sysctl: want an object"},
        {"{\"devices\":[{\"path\":\"/dev/x\",\"type\":\"z\",\"major\":1,\"minor\":1}]}", "", "linux.devices.type: z"},
        {"{\"devices\":[{\"path\":\"/dev/x\",\"type\":\"c\"}]}", "", "linux.devices: /dev/x: a device without major"},
        {"{\"devices\":[{\"path\":\"/dev/x\",\"type\":\"b\",\"major\":4096,\"minor\":1}]}", "", "linux.devices.major: want an integer from 0 to 4095"},
        {"{\"devices\":[{\"path\":\"/sys/x\",\"type\":\"c\",\"major\":1,\"minor\":1}]}", "", "linux.devices: /sys/x: want a clean"},
        {"{\"devices\":[{\"path\":\"/dev/x\",\"type\":\"c\",\"major\":1,\"minor\":1,\"fileMode\":65535}]}", "", "linux.devices.fileMode"},
        {"{\"devices\":[{\"type\":\"c\"}]}", "", "linux.devices: want objects with a path"},
        {"{\"rootfsPropagation\":\"sideways\"}", "", "linux.rootfsPropagation: want shared"},
        {"{}", ",\"oomScoreAdj\":1001", "process.oomScoreAdj: want an integer from -1000 to 1000"},
        {"{}", ",\"oomScoreAdj\":\"5\"", "process.oomScoreAdj"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct oci_config c;
        char err[512] = "";
        ck_assert_msg(parse(bad[i].linux_json, bad[i].process_extra, &c, err, sizeof(err)) == -1,
                      "case %zu accepted", i);
        ck_assert_msg(strstr(err, bad[i].says), "case %zu: \"%s\"", i, err);
    }
    /* 65 masked paths: past the list's bound */
    char doc[4096] = "{\"maskedPaths\":[";
    for (int i = 0; i <= OCI_MAX_LINUX_LIST; i++)
        strcat(doc, i ? ",\"/a\"" : "\"/a\"");
    strcat(doc, "]}");
    struct oci_config c;
    char err[512];
    ck_assert_int_eq(parse(doc, "", &c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "at most 64 paths"));
}
END_TEST

/* A config's tmpfs mounts: those the agent makes, their options sorted
 * into flags, propagation and data; /dev's left to the guest. */
START_TEST(config_tmpfs)
{
    static const char doc[] =
        "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},"
        "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},\"mounts\":["
        "{\"destination\":\"/tmp/test-shared\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
        "\"options\":[\"nosuid\",\"strictatime\",\"mode=755\",\"size=1k\",\"shared\"]},"
        "{\"destination\":\"/dev/shm\",\"type\":\"tmpfs\",\"source\":\"shm\",\"options\":[\"size=65536k\"]},"
        "{\"destination\":\"/run\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
        "\"options\":[\"rw\",\"noexec\",\"tmpcopyup\",\"ro\",\"rw\"]}]}";
    struct oci_config c;
    char err[512];
    ck_assert_msg(oci_config_parse(doc, strlen(doc), &c, err, sizeof(err)) == 0, "%s", err);
    struct agent_exec_req *r = first_process_of(&c);
    ck_assert_uint_eq(r->flags, AGENT_EXEC_F_LINUX);
    ck_assert_uint_eq(r->ntmpfs, 2);
    ck_assert_str_eq(r->tmpfs[0].target, "/tmp/test-shared");
    ck_assert_str_eq(r->tmpfs[0].options, "mode=755,size=1k");
    ck_assert_uint_eq(r->tmpfs[0].flags, 0x2 | 0x1000000); /* MS_NOSUID | MS_STRICTATIME */
    ck_assert_uint_eq(r->tmpfs[0].propagation, AGENT_LNX_PROP_SHARED);
    ck_assert_str_eq(r->tmpfs[1].target, "/run");
    ck_assert_str_eq(r->tmpfs[1].options, ""); /* tmpcopyup is not passed on */
    ck_assert_uint_eq(r->tmpfs[1].flags, 0x8);  /* MS_NOEXEC; rw last */
    ck_assert_int_gt(agent_encode_exec(frame, sizeof(frame), r), 0);
    oci_config_free(&c);
    free(r);
    static const char *const bad[] = {
        "[\"size=1k,nr_inodes=5\"]", "[\"mode=755 x\"]", "[\"\"]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char d[1024];
        snprintf(d, sizeof(d),
                 "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},\"mounts\":["
                 "{\"destination\":\"/x\",\"type\":\"tmpfs\",\"options\":%s}]}", bad[i]);
        ck_assert_msg(oci_config_parse(d, strlen(d), &c, err, sizeof(err)) == -1, "case %zu", i);
        ck_assert_msg(strstr(err, "mounts: tmpfs on /x: option"), "case %zu: %s", i, err);
    }
    static const char dotdot[] = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},"
                                 "\"mounts\":[{\"destination\":\"/a/../b\",\"type\":\"tmpfs\"}]}";
    ck_assert_int_eq(oci_config_parse(dotdot, strlen(dotdot), &c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "mounts: tmpfs on /a/../b: want a clean"));
}
END_TEST

Suite *agent_linux_suite(void)
{
    Suite *s = suite_create("agent_linux");
    TCase *tc = tcase_create("section");
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, absent_without_flag);
    tcase_add_test(tc, shapes);
    tcase_add_test(tc, encoder_refuses);
    tcase_add_test(tc, hostile);
    suite_add_tcase(s, tc);
    tc = tcase_create("config");
    tcase_add_test(tc, config_read);
    tcase_add_test(tc, config_refused);
    tcase_add_test(tc, config_tmpfs);
    suite_add_tcase(s, tc);
    return s;
}
