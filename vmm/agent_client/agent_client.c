/* The exec protocol's codec: encoders and the incremental, validating
 * decoder (layout in guest/agent/proto.h).  Pure code: no I/O, no global
 * state, so it is unit-tested and fuzzed as is, and the agent links it. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/wire.h"

void agent_exec_req_init(struct agent_exec_req *req)
{
    memset(req, 0, sizeof(*req));
    req->uid = req->gid = AGENT_ID_DEFAULT;
    req->rlim_nproc = req->rlim_fsize = req->rlim_nofile = AGENT_RLIM_KEEP;
    req->host_grace_ms = AGENT_HOST_GRACE_MS;
}

/* ---- limits per type ---- */

uint32_t agent_type_max(enum agent_dir dir, uint16_t type)
{
    /* Empty types report 0 too; agent_type_known tells them apart. */
    if (dir == AGENT_DIR_REQUEST) {
        switch (type) {
        case AGENT_EXEC: return AGENT_MAX_PAYLOAD;
        case AGENT_STDIN: case AGENT_FILE_DATA: return AGENT_MAX_CHUNK;
        case AGENT_FILE_PUT: return AGENT_FILE_PUT_FIXED + AGENT_MAX_PATH;
        case AGENT_FILE_GET: return AGENT_MAX_PATH;
        case AGENT_RESEED: return AGENT_RESEED_SIZE;
        case AGENT_SIGNAL: return AGENT_SIGNAL_SIZE;
        case AGENT_WINSIZE: return AGENT_WINSIZE_SIZE;
        case AGENT_ATTACH: return AGENT_ATTACH_SIZE;
        case AGENT_CREDENTIALS: return AGENT_CRED_MAX_PAYLOAD;
        case AGENT_MOUNT: return AGENT_MOUNT_FIXED + AGENT_MOUNT_MAX_PATH;
        case AGENT_WATCH: return AGENT_WATCH_FIXED + AGENT_MAX_PATH;
        case AGENT_CONTAINER_END: return AGENT_CTR_MAX_NAME + 1;
        default: return agent_dir_type_max(dir, type);
        }
    }
    switch (type) {
    case AGENT_READY: return AGENT_READY_SIZE;
    case AGENT_STARTED: return AGENT_STARTED_SIZE;
    case AGENT_ATTACHED: return AGENT_ATTACHED_SIZE;
    case AGENT_STDOUT: case AGENT_STDERR: case AGENT_FILE_DATA: return AGENT_MAX_CHUNK;
    case AGENT_EXIT: return AGENT_EXIT_SIZE;
    case AGENT_ERROR: return AGENT_ERROR_SIZE;
    case AGENT_EVENT: return AGENT_EVENT_FIXED + 2 * AGENT_MAX_PATH;
    default: return agent_dir_type_max(dir, type);
    }
}

static int agent_type_known(enum agent_dir dir, uint16_t type)
{
    if (agent_type_max(dir, type))
        return 1;
    if (dir == AGENT_DIR_REQUEST)
        return type == AGENT_STDIN_EOF || type == AGENT_KILL || type == AGENT_FILE_END ||
               type == AGENT_SYNC;
    return type == AGENT_FILE_END || type == AGENT_RESEEDED || type == AGENT_DONE;
}

size_t agent_dir_max(enum agent_dir dir)
{
    return dir == AGENT_DIR_REQUEST ? AGENT_MAX_PAYLOAD : AGENT_MAX_CHUNK;
}

/* ---- encoding ---- */

static uint8_t *frame(uint8_t *buf, size_t cap, uint16_t type, size_t len)
{
    if (len > AGENT_MAX_PAYLOAD || cap < AGENT_HDR_SIZE || len > cap - AGENT_HDR_SIZE)
        return NULL;
    put32(buf, AGENT_MAGIC);
    put16(buf + 4, AGENT_VERSION);
    put16(buf + 6, type);
    put32(buf + 8, (uint32_t)len);
    return buf + AGENT_HDR_SIZE;
}

ssize_t agent_encode_in_place(uint8_t *buf, size_t cap, uint16_t type, size_t len)
{
    return frame(buf, cap, type, len) ? (ssize_t)(AGENT_HDR_SIZE + len) : -EMSGSIZE;
}

ssize_t agent_encode(uint8_t *buf, size_t cap, uint16_t type, const void *payload, size_t len)
{
    uint8_t *p = frame(buf, cap, type, len);
    if (!p)
        return -EMSGSIZE;
    if (len)
        memcpy(p, payload, len);
    return AGENT_HDR_SIZE + len;
}

/* Bytes of n strings with their NULs, or SIZE_MAX over `limit`. */
static size_t strings_size(const char *const *s, uint32_t n, size_t limit)
{
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!s[i])
            return SIZE_MAX;
        total += strnlen(s[i], limit) + 1;
        if (total > limit)
            return SIZE_MAX;
    }
    return total;
}

static uint8_t *put_strings(uint8_t *p, const char *const *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        size_t l = strlen(s[i]) + 1;
        memcpy(p, s[i], l);
        p += l;
    }
    return p;
}

ssize_t agent_encode_exec(uint8_t *buf, size_t cap, const struct agent_exec_req *r)
{
    size_t pb = agent_exec_proc_size(r);
    if (r->argc < 1 || r->argc > AGENT_MAX_ARGS || r->envc > AGENT_MAX_ENVS ||
        (r->flags & ~AGENT_EXEC_F_ALL) || !r->argv || (r->envc && !r->envp) || !pb)
        return -EINVAL;
    size_t ab = strings_size(r->argv, r->argc, AGENT_MAX_ARGV_BYTES);
    size_t eb = strings_size(r->envp, r->envc, AGENT_MAX_ENV_BYTES);
    const char *cwd = r->cwd ? r->cwd : "";
    size_t cb = strnlen(cwd, AGENT_MAX_PATH) + 1;
    if (ab == SIZE_MAX || eb == SIZE_MAX || cb > AGENT_MAX_PATH)
        return -EMSGSIZE;
    size_t len = AGENT_EXEC_FIXED + ab + eb + pb + cb;
    uint8_t *p = frame(buf, cap, AGENT_EXEC, len);
    if (!p)
        return -EMSGSIZE;
    put32(p, r->uid);
    put32(p + 4, r->gid);
    put32(p + 8, r->timeout_ms);
    put32(p + 12, r->flags);
    put64(p + 16, r->rlim_nproc);
    put64(p + 24, r->rlim_fsize);
    put64(p + 32, r->rlim_nofile);
    put32(p + 40, r->argc);
    put32(p + 44, r->envc);
    put32(p + 48, (uint32_t)ab);
    put32(p + 52, (uint32_t)eb);
    p = put_strings(p + AGENT_EXEC_FIXED, r->argv, r->argc);
    p = put_strings(p, r->envp, r->envc);
    agent_exec_proc_put(p, r);
    memcpy(p + pb, cwd, cb);
    return AGENT_HDR_SIZE + len;
}

ssize_t agent_encode_file_put(uint8_t *buf, size_t cap, const char *path, uint32_t root_len,
                              uint32_t mode, uint64_t size)
{
    size_t pl = path ? strnlen(path, AGENT_MAX_PATH) + 1 : 0;
    if (pl < 2 || pl > AGENT_MAX_PATH || size > AGENT_MAX_FILE || (mode & ~07777u) ||
        !agent_root_len_ok(path, pl - 1, root_len))
        return -EINVAL;
    uint8_t *p = frame(buf, cap, AGENT_FILE_PUT, AGENT_FILE_PUT_FIXED + pl);
    if (!p)
        return -EMSGSIZE;
    put32(p, mode);
    put32(p + 4, root_len);
    put64(p + 8, size);
    memcpy(p + AGENT_FILE_PUT_FIXED, path, pl);
    return AGENT_HDR_SIZE + AGENT_FILE_PUT_FIXED + pl;
}

ssize_t agent_encode_reseed(uint8_t *buf, size_t cap, uint64_t realtime_ns, const uint8_t *seed)
{
    uint8_t *p = frame(buf, cap, AGENT_RESEED, AGENT_RESEED_SIZE);
    if (!p)
        return -EMSGSIZE;
    put64(p, realtime_ns);
    memcpy(p + 8, seed, AGENT_RESEED_SEED);
    return AGENT_HDR_SIZE + AGENT_RESEED_SIZE;
}

ssize_t agent_encode_credentials(uint8_t *buf, size_t cap, const struct agent_cred *c)
{
    /* Laid out in place: the payload may be 80 KiB, too much for a stack. */
    if (cap < AGENT_HDR_SIZE)
        return -EMSGSIZE;
    ssize_t n = agent_cred_payload(buf + AGENT_HDR_SIZE, cap - AGENT_HDR_SIZE, c);
    return n < 0 ? n : agent_encode_in_place(buf, cap, AGENT_CREDENTIALS, (size_t)n);
}

ssize_t agent_encode_mount(uint8_t *buf, size_t cap, uint32_t device, uint32_t flags,
                           const char *path)
{
    uint8_t p[AGENT_MOUNT_FIXED + AGENT_MOUNT_MAX_PATH];
    size_t n = agent_mount_payload(p, device, flags, path);
    return n ? agent_encode(buf, cap, AGENT_MOUNT, p, n) : -EINVAL;
}

ssize_t agent_encode_watch(uint8_t *buf, size_t cap, const char *path, uint32_t flags)
{
    uint8_t p[AGENT_WATCH_FIXED + AGENT_MAX_PATH];
    size_t n = agent_watch_payload(p, path, flags);
    return n ? agent_encode(buf, cap, AGENT_WATCH, p, n) : -EINVAL;
}

ssize_t agent_encode_event(uint8_t *buf, size_t cap, const struct agent_event *e)
{
    uint8_t p[AGENT_EVENT_FIXED + 2 * AGENT_MAX_PATH];
    size_t n = agent_event_payload(p, e);
    return n ? agent_encode(buf, cap, AGENT_EVENT, p, n) : -EINVAL;
}

ssize_t agent_encode_file_get(uint8_t *buf, size_t cap, const char *path)
{
    return agent_encode_path_req(buf, cap, AGENT_FILE_GET, path);
}

ssize_t agent_encode_path_req(uint8_t *buf, size_t cap, uint16_t type, const char *path)
{
    size_t pl = agent_path_payload(path);
    if (!pl || (type != AGENT_STAT && type != AGENT_LIST && type != AGENT_FILE_GET))
        return -EINVAL;
    return agent_encode(buf, cap, type, path, pl);
}

ssize_t agent_encode_mkdir(uint8_t *buf, size_t cap, const char *path, uint32_t root_len,
                           uint32_t mode)
{
    uint8_t p[AGENT_MKDIR_FIXED + AGENT_MAX_PATH];
    size_t n = agent_mkdir_payload(p, path, root_len, mode);
    return n ? agent_encode(buf, cap, AGENT_MKDIR, p, n) : -EINVAL;
}

ssize_t agent_encode_symlink(uint8_t *buf, size_t cap, const char *path, uint32_t root_len,
                             const char *target)
{
    uint8_t p[AGENT_SYMLINK_FIXED + 2 * AGENT_MAX_PATH];
    size_t n = agent_symlink_payload(p, path, root_len, target);
    return n ? agent_encode(buf, cap, AGENT_SYMLINK, p, n) : -EINVAL;
}

ssize_t agent_encode_rename(uint8_t *buf, size_t cap, const char *from, const char *to,
                            uint32_t flags)
{
    uint8_t p[AGENT_RENAME_FIXED + 2 * AGENT_MAX_PATH];
    size_t n = agent_rename_payload(p, from, to, flags);
    return n ? agent_encode(buf, cap, AGENT_RENAME, p, n) : -EINVAL;
}

ssize_t agent_encode_remove(uint8_t *buf, size_t cap, const char *path, uint32_t flags)
{
    uint8_t p[AGENT_REMOVE_FIXED + AGENT_MAX_PATH];
    size_t n = agent_remove_payload(p, path, flags);
    return n ? agent_encode(buf, cap, AGENT_REMOVE, p, n) : -EINVAL;
}

ssize_t agent_encode_chown(uint8_t *buf, size_t cap, const char *path, uint32_t uid,
                           uint32_t gid)
{
    uint8_t p[AGENT_CHOWN_FIXED + AGENT_MAX_PATH];
    size_t n = agent_chown_payload(p, path, uid, gid);
    return n ? agent_encode(buf, cap, AGENT_CHOWN, p, n) : -EINVAL;
}

ssize_t agent_encode_entry(uint8_t *buf, size_t cap, const struct agent_entry *e)
{
    uint8_t p[AGENT_ENTRY_FIXED + AGENT_MAX_NAME + 1 + AGENT_MAX_PATH];
    size_t n = agent_entry_payload(p, e);
    return n ? agent_encode(buf, cap, AGENT_ENTRY, p, n) : -EINVAL;
}

static ssize_t encode_u32s(uint8_t *buf, size_t cap, uint16_t type, const uint32_t *v,
                           unsigned n)
{
    uint8_t p[16];
    for (unsigned i = 0; i < n; i++)
        put32(p + 4 * i, v[i]);
    return agent_encode(buf, cap, type, p, 4 * n);
}

ssize_t agent_encode_ready(uint8_t *buf, size_t cap, uint32_t version, uint32_t features)
{
    return encode_u32s(buf, cap, AGENT_READY, (uint32_t[]){version, features}, 2);
}

/* In this file, not agent_exec_proc.c: that one is called from here and
 * must not call back (scripts/check-layers). */
ssize_t agent_encode_winsize(uint8_t *buf, size_t cap, uint16_t rows, uint16_t cols)
{
    uint8_t p[AGENT_WINSIZE_SIZE];
    put16(p, rows);
    put16(p + 2, cols);
    return agent_encode(buf, cap, AGENT_WINSIZE, p, sizeof(p));
}

ssize_t agent_encode_signal(uint8_t *buf, size_t cap, uint32_t signo)
{
    uint32_t n = signo & 0xff;
    if (n < 1 || n > 64 || (signo & ~(0xffu | AGENT_SIGNAL_F_PROCESS)))
        return -EINVAL;
    return encode_u32s(buf, cap, AGENT_SIGNAL, &signo, 1);
}

ssize_t agent_encode_started(uint8_t *buf, size_t cap, uint32_t pid)
{
    return encode_u32s(buf, cap, AGENT_STARTED, &pid, 1);
}

ssize_t agent_encode_attach(uint8_t *buf, size_t cap, uint32_t pid, uint64_t have)
{
    uint8_t p[AGENT_ATTACH_SIZE] = {0};
    put32(p, pid);
    put64(p + 8, have);
    return agent_encode(buf, cap, AGENT_ATTACH, p, sizeof(p));
}

ssize_t agent_encode_attached(uint8_t *buf, size_t cap, uint32_t pid, uint64_t from,
                              uint64_t stdin_got)
{
    uint8_t p[AGENT_ATTACHED_SIZE] = {0};
    put32(p, pid);
    put64(p + 8, from);
    put64(p + 16, stdin_got);
    return agent_encode(buf, cap, AGENT_ATTACHED, p, sizeof(p));
}

ssize_t agent_encode_exit(uint8_t *buf, size_t cap, uint32_t kind, uint32_t value,
                          uint32_t flags)
{
    return encode_u32s(buf, cap, AGENT_EXIT, (uint32_t[]){kind, value, flags}, 3);
}

ssize_t agent_encode_error(uint8_t *buf, size_t cap, uint32_t code, uint32_t op)
{
    return encode_u32s(buf, cap, AGENT_ERROR, (uint32_t[]){code, op}, 2);
}

/* ---- payload validation ---- */

/* Walks n NUL-terminated strings filling exactly [p, p+size); stores them
 * in out (when not NULL) followed by a NULL.  0 or -EPROTO. */
static int walk_strings(const uint8_t *p, size_t size, uint32_t n, const char **out)
{
    size_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (off >= size)
            return -EPROTO;
        const uint8_t *nul = memchr(p + off, 0, size - off);
        if (!nul)
            return -EPROTO;
        if (out)
            out[i] = (const char *)p + off;
        off = (size_t)(nul - p) + 1;
    }
    if (off != size)
        return -EPROTO;
    if (out)
        out[n] = NULL;
    return 0;
}

/* A path: the whole of [p, p+size), one NUL at its end, not empty. */
static const char *check_path(const uint8_t *p, size_t size, int allow_empty)
{
    return agent_path_in(p, size, allow_empty);
}

int agent_exec_parse(const uint8_t *p, size_t len, struct agent_exec_req *req,
                     const char **argv_buf, const char **env_buf)
{
    if (len < AGENT_EXEC_FIXED || len > AGENT_MAX_PAYLOAD)
        return -EPROTO;
    struct agent_exec_req r;
    agent_exec_req_init(&r);
    r.uid = get32(p);
    r.gid = get32(p + 4);
    r.timeout_ms = get32(p + 8);
    r.flags = get32(p + 12);
    r.rlim_nproc = get64(p + 16);
    r.rlim_fsize = get64(p + 24);
    r.rlim_nofile = get64(p + 32);
    r.argc = get32(p + 40);
    r.envc = get32(p + 44);
    uint32_t ab = get32(p + 48), eb = get32(p + 52);
    /* Each count is bounded before any sum, so nothing below overflows. */
    if ((r.flags & ~AGENT_EXEC_F_ALL) || r.argc < 1 || r.argc > AGENT_MAX_ARGS ||
        r.envc > AGENT_MAX_ENVS || ab > AGENT_MAX_ARGV_BYTES || eb > AGENT_MAX_ENV_BYTES ||
        ab < r.argc || eb < r.envc)
        return -EPROTO;
    size_t rest = len - AGENT_EXEC_FIXED;
    if ((size_t)ab + eb >= rest) /* cwd needs at least its NUL */
        return -EPROTO;
    const uint8_t *s = p + AGENT_EXEC_FIXED;
    if (walk_strings(s, ab, r.argc, argv_buf) || walk_strings(s + ab, eb, r.envc, env_buf))
        return -EPROTO;
    /* The process section's size comes from its own counts; cwd (at least
     * its NUL) must still follow it. */
    size_t pb = agent_exec_proc_get(s + ab + eb, rest - ab - eb - 1, &r);
    if (!pb)
        return -EPROTO;
    const char *cwd = check_path(s + ab + eb + pb, rest - ab - eb - pb, 1);
    if (!cwd)
        return -EPROTO;
    r.cwd = cwd;
    r.argv = argv_buf;
    r.envp = env_buf;
    if (req)
        *req = r;
    return 0;
}

/* The types whose payload is opaque bytes (1..AGENT_MAX_CHUNK): the
 * decoder may let a caller move them itself (agent_decode_data_frame). */
static int is_data_type(uint16_t type)
{
    return type == AGENT_STDIN || type == AGENT_FILE_DATA || type == AGENT_STDOUT ||
           type == AGENT_STDERR;
}

/* Checks the payload of a complete message and fills msg's fields. */
static int check_payload(enum agent_dir dir, uint16_t type, const uint8_t *p, uint32_t len,
                         struct agent_msg *m)
{
    memset(&m->u, 0, sizeof(m->u));
    if (is_data_type(type))
        return len ? 0 : -EPROTO; /* an empty chunk would mean nothing */
    switch (type) {
    case AGENT_EXEC:
        return agent_exec_parse(p, len, NULL, NULL, NULL);
    case AGENT_STDIN_EOF: case AGENT_KILL: case AGENT_FILE_END: case AGENT_RESEEDED:
    case AGENT_DONE: case AGENT_SYNC:
        return len == 0 ? 0 : -EPROTO;
    case AGENT_FILE_PUT:
        if (len < AGENT_FILE_PUT_FIXED)
            return -EPROTO;
        m->u.file_put.mode = get32(p);
        m->u.file_put.root_len = get32(p + 4);
        m->u.file_put.size = get64(p + 8);
        m->u.file_put.path = check_path(p + AGENT_FILE_PUT_FIXED, len - AGENT_FILE_PUT_FIXED, 0);
        if ((m->u.file_put.mode & ~07777u) || m->u.file_put.size > AGENT_MAX_FILE ||
            !m->u.file_put.path ||
            !agent_root_len_ok(m->u.file_put.path, len - AGENT_FILE_PUT_FIXED - 1,
                               m->u.file_put.root_len))
            return -EPROTO;
        return 0;
    case AGENT_FILE_GET: case AGENT_STAT: case AGENT_LIST:
        m->u.file_get.path = check_path(p, len, 0);
        return m->u.file_get.path ? 0 : -EPROTO;
    case AGENT_RESEED:
        if (len != AGENT_RESEED_SIZE)
            return -EPROTO;
        m->u.reseed.realtime_ns = get64(p);
        m->u.reseed.seed = p + 8;
        return 0;
    case AGENT_CREDENTIALS:
        return agent_cred_parse(p, len, NULL, NULL);
    case AGENT_MOUNT:
        return agent_mount_parse(p, len, m);
    case AGENT_WATCH:
        return agent_watch_parse(p, len, m);
    case AGENT_CONTAINER_END:
        return agent_ctr_end_parse(p, len, m);
    case AGENT_EVENT:
        return agent_event_parse(p, len, m);
    case AGENT_SIGNAL:
        if (len != AGENT_SIGNAL_SIZE)
            return -EPROTO;
        m->u.signal.signo = get32(p) & 0xff;
        m->u.signal.flags = get32(p) & ~0xffu;
        return m->u.signal.signo >= 1 && m->u.signal.signo <= 64 &&
                       !(m->u.signal.flags & ~AGENT_SIGNAL_F_PROCESS)
                   ? 0
                   : -EPROTO;
    case AGENT_WINSIZE:
        if (len != AGENT_WINSIZE_SIZE)
            return -EPROTO;
        m->u.winsize.rows = get16(p);
        m->u.winsize.cols = get16(p + 2);
        return 0;
    case AGENT_READY:
        if (len != AGENT_READY_SIZE)
            return -EPROTO;
        m->u.ready.version = get32(p);
        m->u.ready.features = get32(p + 4);
        return 0;
    case AGENT_STARTED:
        if (len != AGENT_STARTED_SIZE)
            return -EPROTO;
        m->u.started.pid = get32(p);
        return 0;
    case AGENT_ATTACH:
        if (len != AGENT_ATTACH_SIZE || get32(p + 4))
            return -EPROTO;
        m->u.attach.pid = get32(p);
        m->u.attach.have = get64(p + 8);
        return m->u.attach.pid ? 0 : -EPROTO;
    case AGENT_ATTACHED:
        if (len != AGENT_ATTACHED_SIZE || get32(p + 4))
            return -EPROTO;
        m->u.attached.pid = get32(p);
        m->u.attached.from = get64(p + 8);
        m->u.attached.stdin_got = get64(p + 16);
        return m->u.attached.pid ? 0 : -EPROTO;
    case AGENT_EXIT:
        if (len != AGENT_EXIT_SIZE)
            return -EPROTO;
        m->u.exit.kind = get32(p);
        m->u.exit.value = get32(p + 4);
        m->u.exit.flags = get32(p + 8);
        if (m->u.exit.flags & ~AGENT_EXIT_F_TIMED_OUT)
            return -EPROTO;
        if (m->u.exit.kind == AGENT_EXIT_CODE)
            return m->u.exit.value <= 255 ? 0 : -EPROTO;
        if (m->u.exit.kind == AGENT_EXIT_SIGNAL)
            return m->u.exit.value >= 1 && m->u.exit.value <= 64 ? 0 : -EPROTO;
        return -EPROTO;
    case AGENT_ERROR:
        if (len != AGENT_ERROR_SIZE)
            return -EPROTO;
        m->u.error.code = get32(p);
        m->u.error.op = get32(p + 4);
        return m->u.error.code >= 1 && m->u.error.code <= 4095 &&
                       m->u.error.op <= AGENT_OP_MAX ? 0 : -EPROTO;
    }
    (void)dir;
    return agent_dir_check_payload(type, p, len, m);
}

/* ---- the incremental decoder ---- */

int agent_decoder_init(struct agent_decoder *d, enum agent_dir dir)
{
    memset(d, 0, sizeof(*d));
    d->dir = dir;
    d->buf = malloc(agent_dir_max(dir));
    return d->buf ? 0 : -ENOMEM;
}

void agent_decoder_free(struct agent_decoder *d)
{
    free(d->buf);
    d->buf = NULL;
}

/* Validates a complete header; the length is checked here, before a single
 * payload byte is buffered. */
static int check_header(struct agent_decoder *d)
{
    if (get32(d->hdr) != AGENT_MAGIC)
        return -EBADMSG;
    if (get16(d->hdr + 4) != AGENT_VERSION)
        return -EPROTONOSUPPORT;
    d->type = get16(d->hdr + 6);
    d->len = get32(d->hdr + 8);
    if (!agent_type_known(d->dir, d->type))
        return -EPROTO;
    if (d->len > agent_type_max(d->dir, d->type))
        return -EMSGSIZE;
    return 0;
}

int agent_decode(struct agent_decoder *d, const void *data, size_t len, size_t *used,
                 struct agent_msg *msg)
{
    const uint8_t *in = data;
    size_t off = 0;
    *used = 0;
    if (d->error)
        return d->error;
    if (!d->buf || d->passing)
        return -EINVAL; /* a frame's payload is being skipped (agent_decode_skip) */
    while (off < len) {
        if (d->hdr_have < AGENT_HDR_SIZE) {
            size_t n = AGENT_HDR_SIZE - d->hdr_have;
            if (n > len - off)
                n = len - off;
            memcpy(d->hdr + d->hdr_have, in + off, n);
            d->hdr_have += n;
            off += n;
            if (d->hdr_have < AGENT_HDR_SIZE)
                break;
            int rc = check_header(d);
            if (rc) {
                *used = off;
                return d->error = rc;
            }
            d->have = 0;
        }
        size_t n = d->len - d->have;
        if (n > len - off)
            n = len - off;
        memcpy(d->buf + d->have, in + off, n);
        d->have += n;
        off += n;
        if (d->have < d->len)
            break;
        /* Complete: the next call starts a new header. */
        d->hdr_have = 0;
        *used = off;
        msg->type = d->type;
        msg->len = d->len;
        msg->payload = d->buf;
        int rc = check_payload(d->dir, d->type, d->buf, d->len, msg);
        if (rc)
            return d->error = rc;
        return 1;
    }
    *used = off;
    return 0;
}

uint32_t agent_decode_data_frame(const struct agent_decoder *d, uint16_t *type)
{
    if (d->error || !d->buf || d->hdr_have < AGENT_HDR_SIZE || d->have || !d->len ||
        !is_data_type(d->type))
        return 0;
    *type = d->type;
    return d->len;
}

int agent_decode_skip(struct agent_decoder *d, uint32_t n)
{
    if (d->error)
        return d->error;
    if (d->hdr_have < AGENT_HDR_SIZE || !is_data_type(d->type) || n > d->len - d->have ||
        (!d->passing && d->have))
        return -EINVAL;
    d->have += n;
    d->passing = d->have < d->len;
    if (!d->passing)
        d->hdr_have = 0; /* done: the next byte starts a header */
    return 0;
}

size_t agent_decode_want(const struct agent_decoder *d)
{
    if (d->hdr_have < AGENT_HDR_SIZE)
        return AGENT_HDR_SIZE - d->hdr_have;
    /* An empty payload completes with the next frame's first byte. */
    return d->len > d->have ? d->len - d->have : AGENT_HDR_SIZE;
}
