/* Writes fuzz_agent_proto's seeds with the real encoders, so they are
 * frames of this AGENT_VERSION (the decoder refuses every frame of
 * another, and committed blobs went stale with each version):
 *   agent-seed DIR
 * Each seed starts with the target's mode byte (fuzz_agent_proto.c), then
 * for the decoder modes (0, 1) the chunk-size byte, then frames; mode 9
 * takes a bare CREDENTIALS payload, mode 11 a bare MOUNT payload, mode 12
 * a bare EXEC payload, 13 a bare WATCH payload, 14 a bare EVENT payload. */
#include <stdio.h>
#include <string.h>

#include "vmm/agent_client/agent_client.h"

static uint8_t buf[AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD];
static size_t len;
#define AT buf + len, sizeof(buf) - len

static int add(ssize_t n)
{
    if (n < 0) {
        fprintf(stderr, "agent-seed: an encoder refused a sample\n");
        return -1;
    }
    len += (size_t)n;
    return 0;
}

static void start(uint8_t mode, int chunk)
{
    len = 0;
    buf[len++] = mode;
    if (chunk >= 0)
        buf[len++] = (uint8_t)chunk;
}

static int save(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/seed-agent-%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
        perror(path);
        return -1;
    }
    return 0;
}

static const char *const argv3[] = {"sh", "-c", "echo hi"};
static const char *const env1[] = {"PATH=/bin"};
static const char *const cred_env[] = {"GITHUB_TOKEN=airlock-ph-1", "OPENAI_API_KEY=ph-2"};
static const char pem[] = AGENT_CRED_PEM_BEGIN "\nMIIB\n-----END CERTIFICATE-----\n";
static const uint8_t seed[AGENT_RESEED_SEED];

static ssize_t cred(uint8_t *b, size_t cap, uint32_t envc, const char *p)
{
    struct agent_cred c = {.env = cred_env, .envc = envc, .pem = p, .pem_len = p ? strlen(p) : 0};
    return agent_encode_credentials(b, cap, &c);
}

/* An EXEC with every part of the process section (protocol version 7). */
static void proc_exec(struct agent_exec_req *r)
{
    agent_exec_req_init(r);
    r->argv = argv3;
    r->argc = 3;
    r->cwd = "/";
    r->flags = AGENT_EXEC_F_STDIN | AGENT_EXEC_F_TTY | AGENT_EXEC_F_NO_NEW_PRIVS |
               AGENT_EXEC_F_CAPS;
    r->cap_bounding = r->cap_permitted = r->cap_inheritable = (1u << 0) | (1u << 5);
    r->cap_effective = r->cap_ambient = 1u << 5;
    r->tty_rows = 24;
    r->tty_cols = 80;
    r->ngroups = 2;
    r->groups[0] = 5;
    r->groups[1] = 100;
    r->nrlimits = 2;
    r->rlimits[0] = (struct agent_rlimit){4, 0, 1 << 20};
    r->rlimits[1] = (struct agent_rlimit){7, 1024, UINT64_MAX};
}

/* A seed of `mode` holding frame f's payload alone (n: the frame's size,
 * or an encoder's error): 0 or 1. */
static int save_payload(const char *dir, uint8_t mode, const uint8_t *f, ssize_t n,
                        const char *name)
{
    if (n < AGENT_HDR_SIZE)
        return 1;
    start(mode, -1);
    memcpy(buf + len, f + AGENT_HDR_SIZE, (size_t)n - AGENT_HDR_SIZE);
    len += (size_t)n - AGENT_HDR_SIZE;
    return save(dir, name) ? 1 : 0;
}

/* An EXEC naming a pod's container (protocol version 15): a root disk by
 * serial and two binds, or (join) a later command in it. */
static void ctr_exec(struct agent_exec_req *r, int join)
{
    agent_exec_req_init(r);
    r->argv = argv3;
    r->argc = 3;
    r->flags = AGENT_EXEC_F_CONTAINER;
    r->pidns = join ? AGENT_PIDNS_JOIN : AGENT_PIDNS_NEW;
    r->ctr_name = "4f1c2d-app";
    if (join)
        return;
    r->ctr_serial = "ctr4f1c2d";
    r->nbinds = 2;
    r->binds[0] = (struct agent_bind){"/run/airlock/pod/volumes/v", "/data", 0};
    r->binds[1] = (struct agent_bind){"/run/airlock/pod/files/hosts", "/etc/hosts", AGENT_BIND_F_RO};
}

/* An OCI container's first command with its linux settings (protocol
 * version 16), in a pod's container or the VM's own. */
static void lnx_exec(struct agent_exec_req *r, int in_pod)
{
    if (in_pod)
        ctr_exec(r, 0);
    else {
        agent_exec_req_init(r);
        r->argv = argv3;
        r->argc = 3;
        r->pidns = AGENT_PIDNS_NEW;
    }
    r->flags |= AGENT_EXEC_F_LINUX;
    r->lnx_flags = AGENT_LNX_F_ROOT_RO | AGENT_LNX_F_OOM;
    r->oom_score_adj = 250;
    r->propagation = AGENT_LNX_PROP_RSHARED;
    r->nmasked = 2;
    r->masked[0] = "/proc/kcore";
    r->masked[1] = "/sys/firmware";
    r->nreadonly = 1;
    r->readonly[0] = "/proc/sys";
    r->nsysctl = 1;
    r->sysctl[0] = (struct agent_sysctl){"net.ipv4.ip_forward", "1"};
    r->ndevices = 1;
    r->devices[0] = (struct agent_device){"/dev/fuse", 020666, 10, 229, 0, 0};
    r->ntmpfs = 1;
    r->tmpfs[0] = (struct agent_tmpfs){"/run", "mode=755,size=64k", 0x6, AGENT_LNX_PROP_PRIVATE};
}

/* The host's side: every request the agent decodes. */
static int requests(void)
{
    static struct agent_exec_req pr, cn, cj, ln, lp;
    proc_exec(&pr);
    ctr_exec(&cn, 0);
    ctr_exec(&cj, 1);
    lnx_exec(&ln, 0);
    lnx_exec(&lp, 1);
    struct agent_exec_req r;
    agent_exec_req_init(&r);
    r.argv = argv3;
    r.argc = 3;
    r.envp = env1;
    r.envc = 1;
    r.cwd = "/tmp";
    r.flags = AGENT_EXEC_F_STDIN;
    return add(agent_encode_exec(AT, &r)) || add(agent_encode(AT, AGENT_STDIN, "abc", 3)) ||
           add(agent_encode(AT, AGENT_STDIN_EOF, NULL, 0)) || add(agent_encode_signal(AT, 2)) ||
           add(agent_encode(AT, AGENT_KILL, NULL, 0)) || add(agent_encode(AT, AGENT_SYNC, NULL, 0)) ||
           add(agent_encode_file_put(AT, "/x", 0, 0644, 3)) ||
           add(agent_encode(AT, AGENT_FILE_DATA, "abc", 3)) ||
           add(agent_encode(AT, AGENT_FILE_END, NULL, 0)) ||
           add(agent_encode_file_get(AT, "/etc/x")) || add(agent_encode_reseed(AT, 1, seed)) ||
           add(agent_encode_path_req(AT, AGENT_STAT, "/")) ||
           add(agent_encode_path_req(AT, AGENT_LIST, "/tmp")) ||
           add(agent_encode_mkdir(AT, "/r/d", 3, 0755)) ||
           add(agent_encode_symlink(AT, "/r/l", 3, "t")) || add(cred(AT, 2, pem)) ||
           add(cred(AT, 0, NULL)) || add(agent_encode_mount(AT, 1, AGENT_MOUNT_F_RO, "/src")) ||
           add(agent_encode_mount(AT, 2, 0, "/home/u/work")) || add(agent_encode_exec(AT, &pr)) ||
           add(agent_encode_exec(AT, &cn)) || add(agent_encode_exec(AT, &cj)) ||
           add(agent_encode_exec(AT, &ln)) || add(agent_encode_exec(AT, &lp)) ||
           add(agent_encode(AT, AGENT_CONTAINER_END, "4f1c2d-app", 11)) ||
           add(agent_encode_winsize(AT, 50, 132)) ||
           add(agent_encode_watch(AT, "/tmp/w", AGENT_WATCH_F_RECURSIVE)) ||
           add(agent_encode_rename(AT, "/a", "/b c", AGENT_RENAME_F_NOREPLACE)) ||
           add(agent_encode_remove(AT, "/tmp/d", AGENT_REMOVE_F_RECURSIVE)) ||
           add(agent_encode_chown(AT, "/home/user/f", 1000, 1000));
}

static ssize_t event(uint8_t *b, size_t cap, uint32_t kind, uint32_t flags, const char *path,
                     const char *to)
{
    return agent_encode_event(b, cap, &(struct agent_event){kind, flags, path, to});
}

/* A watch's answers: it began, what it saw, its end. */
static int watch_replies(void)
{
    return add(agent_encode(AT, AGENT_DONE, NULL, 0)) ||
           add(event(AT, AGENT_EVENT_CREATE, AGENT_EVENT_F_DIR, "/w/d", NULL)) ||
           add(event(AT, AGENT_EVENT_WRITE, 0, "/w/d/f", NULL)) ||
           add(event(AT, AGENT_EVENT_RENAME, 0, "/w/d/f", "/w/g")) ||
           add(event(AT, AGENT_EVENT_RENAME, 0, "/w/g", NULL)) ||
           add(event(AT, AGENT_EVENT_CHMOD, 0, "/w/h", NULL)) ||
           add(event(AT, AGENT_EVENT_OVERFLOW, 0, NULL, NULL)) ||
           add(event(AT, AGENT_EVENT_OVERFLOW, 0, "/w/deep", NULL)) ||
           add(event(AT, AGENT_EVENT_REMOVE, AGENT_EVENT_F_DIR, "/w", NULL)) ||
           add(agent_encode(AT, AGENT_DONE, NULL, 0));
}

/* The agent's side: every reply airlock decodes. */
static int replies(void)
{
    struct agent_entry e = {AGENT_ENTRY_SYMLINK, 0777, 1, 0, "l", "t", 0, 0};
    return add(agent_encode_ready(AT, AGENT_VERSION, 0)) || add(agent_encode_started(AT, 5)) ||
           add(agent_encode(AT, AGENT_STDOUT, "out", 3)) ||
           add(agent_encode(AT, AGENT_STDERR, "err", 3)) ||
           add(agent_encode_exit(AT, AGENT_EXIT_CODE, 42, 0)) || add(agent_encode_entry(AT, &e)) ||
           add(agent_encode(AT, AGENT_DONE, NULL, 0)) ||
           add(agent_encode(AT, AGENT_RESEEDED, NULL, 0)) ||
           add(agent_encode(AT, AGENT_FILE_DATA, "data", 4)) ||
           add(agent_encode(AT, AGENT_FILE_END, NULL, 0)) ||
           add(agent_encode_error(AT, 2, AGENT_OP_FILE)) ||
           add(agent_encode_error(AT, 40, AGENT_OP_MOUNT)) || watch_replies();
}

static int exec_replies(void)
{
    return add(agent_encode_ready(AT, AGENT_VERSION, 0)) || add(agent_encode_started(AT, 5)) ||
           add(agent_encode(AT, AGENT_STDOUT, "out", 3)) ||
           add(agent_encode(AT, AGENT_STDERR, "err", 3)) ||
           add(agent_encode_exit(AT, AGENT_EXIT_CODE, 42, 0));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    const char *d = argv[1];
    struct agent_entry file = {AGENT_ENTRY_FILE, 0644, 3, 0, "a", "", 1000, 1000};
    struct agent_entry self = {AGENT_ENTRY_DIR, 0755, 0, 0, "", "", 0, 0};
    int bad = 0;
    start(0, 3);
    bad |= replies() || save(d, "rep");
    start(1, 7);
    bad |= requests() || save(d, "req");
    start(2, -1);
    bad |= exec_replies() || save(d, "exec");
    start(3, -1);
    bad |= add(agent_encode(AT, AGENT_FILE_DATA, "data", 4)) ||
           add(agent_encode(AT, AGENT_FILE_END, NULL, 0)) || save(d, "get");
    start(4, -1);
    bad |= exec_replies() || save(d, "exec-pipes");
    start(5, -1);
    bad |= add(agent_encode_ready(AT, AGENT_VERSION, 0)) ||
           add(agent_encode(AT, AGENT_RESEEDED, NULL, 0)) || save(d, "reseed");
    start(6, -1);
    bad |= add(agent_encode_ready(AT, AGENT_VERSION, 0)) || add(agent_encode_entry(AT, &file)) ||
           add(agent_encode(AT, AGENT_DONE, NULL, 0)) || save(d, "list");
    start(7, -1);
    bad |= add(agent_encode_ready(AT, AGENT_VERSION, 0)) || add(agent_encode_entry(AT, &self)) ||
           save(d, "stat");
    start(8, -1);
    bad |= add(agent_encode_ready(AT, AGENT_VERSION, 0)) ||
           add(agent_encode(AT, AGENT_DONE, NULL, 0)) || save(d, "cred");
    start(8, -1);
    bad |= add(agent_encode_error(AT, 28, AGENT_OP_FILE)) || save(d, "cred-error");
    /* mode 9: the payload alone (the frame's header cut off) */
    start(9, -1);
    static uint8_t f[AGENT_HDR_SIZE + AGENT_CRED_MAX_PAYLOAD];
    ssize_t n = cred(f, sizeof(f), 2, pem);
    if (n < AGENT_HDR_SIZE) {
        bad = 1;
    } else {
        memcpy(buf + len, f + AGENT_HDR_SIZE, (size_t)n - AGENT_HDR_SIZE);
        len += (size_t)n - AGENT_HDR_SIZE;
        bad |= save(d, "cred-payload");
    }
    start(10, -1);
    bad |= add(agent_encode_ready(AT, AGENT_VERSION, 0)) ||
           add(agent_encode(AT, AGENT_DONE, NULL, 0)) || save(d, "mount");
    start(10, -1);
    bad |= add(agent_encode_error(AT, 40, AGENT_OP_MOUNT)) || save(d, "mount-error");
    /* mode 11: the payload alone */
    start(11, -1);
    n = agent_encode_mount(f, sizeof(f), 3, AGENT_MOUNT_F_RO, "/work/src");
    if (n < AGENT_HDR_SIZE) {
        bad = 1;
    } else {
        memcpy(buf + len, f + AGENT_HDR_SIZE, (size_t)n - AGENT_HDR_SIZE);
        len += (size_t)n - AGENT_HDR_SIZE;
        bad |= save(d, "mount-payload");
    }
    /* mode 12: an EXEC payload alone, its process section full; one
     * naming a pod's container (protocol 15) */
    static uint8_t ef[AGENT_HDR_SIZE + AGENT_MAX_PAYLOAD];
    struct agent_exec_req pr;
    proc_exec(&pr);
    bad |= save_payload(d, 12, ef, agent_encode_exec(ef, sizeof(ef), &pr), "exec-payload");
    ctr_exec(&pr, 0);
    bad |= save_payload(d, 12, ef, agent_encode_exec(ef, sizeof(ef), &pr), "exec-ctr-payload");
    /* modes 13 and 14: a WATCH and an EVENT payload alone */
    static const struct { uint8_t mode; const char *name; } bare[] = {
        {13, "watch-payload"}, {14, "event-payload"}, {14, "event-rename-payload"}};
    for (size_t i = 0; i < sizeof(bare) / sizeof(bare[0]); i++) {
        start(bare[i].mode, -1);
        n = i == 0 ? agent_encode_watch(f, sizeof(f), "/tmp/w", AGENT_WATCH_F_RECURSIVE)
            : i == 1 ? event(f, sizeof(f), AGENT_EVENT_CREATE, AGENT_EVENT_F_DIR, "/tmp/w/d", NULL)
                     : event(f, sizeof(f), AGENT_EVENT_RENAME, 0, "/tmp/w/a", "/tmp/w/b");
        if (n < AGENT_HDR_SIZE) {
            bad = 1;
            continue;
        }
        memcpy(buf + len, f + AGENT_HDR_SIZE, (size_t)n - AGENT_HDR_SIZE);
        len += (size_t)n - AGENT_HDR_SIZE;
        bad |= save(d, bare[i].name);
    }
    start(15, -1);
    bad |= add(agent_encode_ready(AT, AGENT_VERSION, 0)) || watch_replies() || save(d, "watch");
    return bad ? 1 : 0;
}
