/* The exec protocol (guest/agent/proto.h) as code: encoders for every
 * message, an incremental decoder that yields only complete, validated
 * messages, and blocking helpers that drive one exec or one file transfer
 * over an already-connected socket.  The codec is pure (no I/O) so the unit
 * tests and the fuzz target reach all of it; the agent links it too.
 * Every byte handed to the decoder is treated as hostile. */
#ifndef AIRLOCK_AGENT_CLIENT_AGENT_CLIENT_H
#define AIRLOCK_AGENT_CLIENT_AGENT_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "guest/agent/proto.h"

/* One entry of EXEC's rlimit list (proto.h): Linux's RLIMIT_* number. */
struct agent_rlimit {
    uint32_t resource;   /* 0..AGENT_RLIMIT_NUM-1 */
    uint64_t soft, hard; /* soft <= hard; UINT64_MAX: unlimited */
};

/* One bind mount of EXEC's container section (proto.h). */
struct agent_bind {
    const char *source; /* a guest path outside the containers */
    const char *target; /* where it goes in the container */
    uint32_t flags;     /* AGENT_BIND_F_* */
};

/* One device node of EXEC's linux section (proto.h). */
struct agent_device {
    const char *path;    /* in the container */
    uint32_t mode;       /* S_IFCHR, S_IFBLK or S_IFIFO | permissions */
    uint32_t major, minor;
    uint32_t uid, gid;
};

/* One tmpfs mount of EXEC's linux section (proto.h). */
struct agent_tmpfs {
    const char *target, *options; /* options "" for none */
    uint32_t flags;               /* AGENT_LNX_TMPFS_FLAGS bits */
    uint32_t propagation;         /* 0 or AGENT_LNX_PROP_* */
};

/* One sysctl of EXEC's linux section: "net.ipv4.ip_forward", "1". */
struct agent_sysctl {
    const char *key, *value;
};

/* An exec request.  Encoding reads it; agent_exec_parse fills it with
 * pointers into a decoded payload (valid while that payload is). */
struct agent_exec_req {
    const char *const *argv; /* argc strings */
    uint32_t argc;
    const char *const *envp; /* envc "K=V" strings */
    uint32_t envc;
    const char *cwd;         /* NULL or "" = "/" */
    uint32_t uid, gid;       /* AGENT_ID_DEFAULT = nobody */
    uint32_t timeout_ms;     /* 0 = none */
    uint32_t flags;          /* AGENT_EXEC_F_* */
    uint64_t rlim_nproc, rlim_fsize, rlim_nofile; /* AGENT_RLIM_KEEP = as is */
    /* The process section (proto.h; zero by default: none of it). */
    uint16_t tty_rows, tty_cols; /* with AGENT_EXEC_F_TTY */
    uint32_t pidns;              /* 0, AGENT_PIDNS_NEW or AGENT_PIDNS_JOIN */
    uint32_t ngroups;
    uint32_t groups[AGENT_MAX_GROUPS];
    uint32_t nrlimits;
    struct agent_rlimit rlimits[AGENT_MAX_RLIMITS];
    /* with AGENT_EXEC_F_CAPS: bit n = capability n */
    uint64_t cap_bounding, cap_effective, cap_permitted, cap_inheritable, cap_ambient;
    /* The container section (proto.h; since version 15): with
     * AGENT_EXEC_F_CONTAINER and pidns NEW or JOIN, ctr_name names the
     * pod's container (NULL without the flag); ctr_serial is NEW's root
     * disk (NULL or "": the VM's own root); binds[0, nbinds) with NEW. */
    const char *ctr_name;
    const char *ctr_serial;
    uint32_t nbinds;
    struct agent_bind binds[AGENT_CTR_MAX_BINDS];
    /* The linux section (proto.h; since version 16): with
     * AGENT_EXEC_F_LINUX and pidns NEW; all 0 without it. */
    uint32_t lnx_flags;   /* AGENT_LNX_F_* */
    int32_t oom_score_adj; /* with AGENT_LNX_F_OOM */
    uint32_t propagation; /* 0 or AGENT_LNX_PROP_* */
    uint32_t nmasked, nreadonly, nsysctl, ndevices, ntmpfs;
    struct agent_tmpfs tmpfs[AGENT_LNX_MAX_LIST];
    const char *masked[AGENT_LNX_MAX_LIST];
    const char *readonly[AGENT_LNX_MAX_LIST];
    struct agent_sysctl sysctl[AGENT_LNX_MAX_LIST];
    struct agent_device devices[AGENT_LNX_MAX_LIST];
    /* Host side only (not sent): agent_exec stops waiting this long after
     * timeout_ms, whatever the guest does.  The agent enforces the
     * timeout, but the agent is in the guest, and a guest root can stall
     * it (ptrace PID 1, a process stuck in the kernel): the wall clock
     * must not depend on the guest.  AGENT_HOST_GRACE_MS by default. */
    uint32_t host_grace_ms;
    /* Host side, never sent: called from agent_exec_signals once the
     * command started, with its guest pid (NULL: nobody asks). */
    void (*on_started)(void *arg, uint32_t pid);
    void *on_started_arg;
    /* ... and from agent_exec_attach once ATTACHED came, with the output
     * lost so far (same arg; NULL: nobody asks). */
    void (*on_attached)(void *arg, uint64_t lost);
};

/* Time the agent gets, past the timeout, to kill the command and report:
 * far beyond the 1 s it drains output, even in the nested lab. */
#define AGENT_HOST_GRACE_MS 30000

/* Sets every field to "default": no args, nobody, no limits, no timeout. */
void agent_exec_req_init(struct agent_exec_req *req);

/* ---- encoding: each returns the frame's size, or -EMSGSIZE when it does
 * not fit `cap` or breaks a protocol limit, -EINVAL for bad arguments ---- */

/* Any message whose payload the caller already laid out. */
ssize_t agent_encode(uint8_t *buf, size_t cap, uint16_t type, const void *payload,
                     size_t len);
/* The same with the payload already in place at buf + AGENT_HDR_SIZE (read
 * there straight from its source: no copy); writes only the header. */
ssize_t agent_encode_in_place(uint8_t *buf, size_t cap, uint16_t type, size_t len);
ssize_t agent_encode_exec(uint8_t *buf, size_t cap, const struct agent_exec_req *req);
/* root_len: 0, or path is a root folder and a name beneath it (proto.h). */
ssize_t agent_encode_file_put(uint8_t *buf, size_t cap, const char *path, uint32_t root_len,
                              uint32_t mode, uint64_t size);
ssize_t agent_encode_file_get(uint8_t *buf, size_t cap, const char *path);

/* ---- the folder requests (agent_dir_codec.c) ---- */

/* One entry of a folder, or STAT's answer (name ""): what ENTRY carries. */
struct agent_entry {
    uint32_t kind;       /* AGENT_ENTRY_* */
    uint32_t mode;       /* & 07777 */
    uint64_t size;
    int64_t mtime;       /* seconds */
    const char *name;    /* one component, or "" for STAT */
    const char *target;  /* a symlink's, else "" */
    uint32_t uid, gid;   /* the owner (since version 11) */
};

/* FILE_GET, STAT or LIST of one path. */
ssize_t agent_encode_path_req(uint8_t *buf, size_t cap, uint16_t type, const char *path);
ssize_t agent_encode_mkdir(uint8_t *buf, size_t cap, const char *path, uint32_t root_len,
                           uint32_t mode);
ssize_t agent_encode_symlink(uint8_t *buf, size_t cap, const char *path, uint32_t root_len,
                             const char *target);
ssize_t agent_encode_entry(uint8_t *buf, size_t cap, const struct agent_entry *e);
/* RENAME, REMOVE, CHOWN (proto.h has the rules): -EINVAL for arguments
 * the rules refuse, -EMSGSIZE past `cap`. */
ssize_t agent_encode_rename(uint8_t *buf, size_t cap, const char *from, const char *to,
                            uint32_t flags);
ssize_t agent_encode_remove(uint8_t *buf, size_t cap, const char *path, uint32_t flags);
ssize_t agent_encode_chown(uint8_t *buf, size_t cap, const char *path, uint32_t uid,
                           uint32_t gid);
/* Whether root_len fits path (path_len bytes, no NUL): 0 (none), or a
 * '/'-ended prefix of an absolute path with a name after it. */
int agent_root_len_ok(const char *path, size_t path_len, uint32_t root_len);
/* Whether name[0, len) is one path component: 1..AGENT_MAX_NAME bytes, no
 * '/' or NUL, not "." or "..". */
int agent_name_ok(const char *name, size_t len);
ssize_t agent_encode_reseed(uint8_t *buf, size_t cap, uint64_t realtime_ns, const uint8_t *seed);

/* ---- CREDENTIALS (agent_cred_codec.c; proto.h has the rules) ---- */

/* What a CREDENTIALS carries.  Encoding reads it; agent_cred_parse fills
 * it with pointers into a decoded payload. */
struct agent_cred {
    const char *const *env; /* envc "NAME=VALUE" strings */
    uint32_t envc;
    const char *pem;        /* pem_len bytes of PEM text (no NUL); 0: no CA */
    size_t pem_len;
};
/* A CREDENTIALS frame: -EINVAL for an entry or PEM the rules refuse (a
 * bad NAME or VALUE, a NAME twice, a PEM that is not one), -EMSGSIZE over
 * a count or size limit or `cap`. */
ssize_t agent_encode_credentials(uint8_t *buf, size_t cap, const struct agent_cred *c);
/* The payload alone, laid out at p (cap bytes): its length or the same
 * errors. */
ssize_t agent_cred_payload(uint8_t *p, size_t cap, const struct agent_cred *c);
/* Validates a CREDENTIALS payload; with env_buf (AGENT_CRED_MAX_ENVS + 1
 * entries) fills c with pointers into the payload, env NULL-terminated.
 * 0 or -EPROTO. */
int agent_cred_parse(const uint8_t *p, size_t len, struct agent_cred *c, const char **env_buf);
/* Whether s[0, len) (no NUL in it) is one entry: NAME=VALUE as proto.h
 * says. */
int agent_cred_entry_ok(const char *s, size_t len);
/* Whether two "NAME=..." strings (a holds an '=') have the same NAME. */
int agent_cred_same_name(const char *a, const char *b);
/* Whether pem[0, len) may be a CREDENTIALS' PEM (empty included). */
int agent_cred_pem_ok(const char *pem, size_t len);
/* ---- MOUNT (agent_mount_codec.c; proto.h has the rules) ---- */

/* Whether path[0, len) is absolute and clean: no empty, "." or ".."
 * component, no '/' at its end, not "/", under max bytes, no NUL; and
 * whether it is `dir` or lies beneath it. */
int agent_clean_path(const char *path, size_t len, size_t max);
int agent_path_under(const char *path, size_t len, const char *dir);
/* A MOUNT frame: -EINVAL for a device, flags or path the rules refuse,
 * -EMSGSIZE past `cap`. */
ssize_t agent_encode_mount(uint8_t *buf, size_t cap, uint32_t device, uint32_t flags,
                           const char *path);
/* The payload alone at p (AGENT_MOUNT_FIXED + AGENT_MOUNT_MAX_PATH bytes
 * of room): its length, 0 when the arguments break the rules. */
size_t agent_mount_payload(uint8_t *p, uint32_t device, uint32_t flags, const char *path);
/* Whether path[0, len) (no NUL in it) may be a MOUNT's guest folder:
 * absolute, clean, short enough, outside the agent's own mounts. */
int agent_mount_path_ok(const char *path, size_t len);

/* ---- WATCH and EVENT (agent_watch_codec.c; proto.h has the rules) ---- */

/* One change a watch saw: what EVENT carries. */
struct agent_event {
    uint32_t kind;    /* AGENT_EVENT_* */
    uint32_t flags;   /* AGENT_EVENT_F_DIR */
    const char *path; /* absolute; "" only for an OVERFLOW */
    const char *to;   /* a RENAME's destination inside the watch, else "" */
};
/* A WATCH frame: -EINVAL for flags or a path the rules refuse, -EMSGSIZE
 * past `cap`. */
ssize_t agent_encode_watch(uint8_t *buf, size_t cap, const char *path, uint32_t flags);
/* An EVENT frame (NULL path or to: ""): -EINVAL for an event the rules
 * refuse, -EMSGSIZE past `cap`. */
ssize_t agent_encode_event(uint8_t *buf, size_t cap, const struct agent_event *e);
/* The payloads alone at p (room for AGENT_WATCH_FIXED + AGENT_MAX_PATH,
 * AGENT_EVENT_FIXED + 2 * AGENT_MAX_PATH bytes): their length, 0 when the
 * arguments break the rules. */
size_t agent_watch_payload(uint8_t *p, const char *path, uint32_t flags);
size_t agent_event_payload(uint8_t *p, const struct agent_event *e);
/* Whether path is `root` (a WATCH's path) or lies beneath it, root's
 * trailing '/'s aside: where a hostile agent's events must stay. */
int agent_watch_beneath(const char *root, const char *path);

/* SIGNAL with signo 1..64 (else -EINVAL). */
/* signo 1..64, ORed with AGENT_SIGNAL_F_* */
ssize_t agent_encode_signal(uint8_t *buf, size_t cap, uint32_t signo);
/* WINSIZE: the command's terminal is now rows x cols. */
ssize_t agent_encode_winsize(uint8_t *buf, size_t cap, uint16_t rows, uint16_t cols);
/* EXEC's process section (agent_exec_proc.c): its size for req, or 0
 * when req breaks its rules (a count over its limit, a gid of -1, a bad
 * resource, one twice, soft > hard, a size without a terminal); laid out
 * at p, which has that many bytes. */
size_t agent_exec_proc_size(const struct agent_exec_req *req);
void agent_exec_proc_put(uint8_t *p, const struct agent_exec_req *req);
/* Reads the section at p[0, avail) into req: its size, or 0 when it does
 * not fit avail or breaks the rules above. */
size_t agent_exec_proc_get(const uint8_t *p, size_t avail, struct agent_exec_req *req);
struct agent_msg;
/* EXEC's container section and CONTAINER_END (agent_ctr_codec.c; proto.h
 * has the rules), called by the process section's functions: its size
 * for req (AGENT_EXEC_CTR_FIXED and up; 0 without AGENT_EXEC_F_CONTAINER),
 * or SIZE_MAX when req breaks the rules; laid out at p; read from
 * p[0, avail) into req (pointers into p): its size, 0 without the flag,
 * SIZE_MAX when it does not fit avail or breaks the rules. */
size_t agent_exec_ctr_size(const struct agent_exec_req *req);
void agent_exec_ctr_put(uint8_t *p, const struct agent_exec_req *req);
size_t agent_exec_ctr_get(const uint8_t *p, size_t avail, struct agent_exec_req *req);
/* EXEC's linux section (agent_linux_codec.c; proto.h has the rules),
 * called by the process section's functions after the container
 * section's, with the same contract: its size (0 without
 * AGENT_EXEC_F_LINUX, SIZE_MAX when req breaks the rules), laid out at
 * p, read from p[0, avail) (its size, 0 without the flag, SIZE_MAX). */
size_t agent_exec_lnx_size(const struct agent_exec_req *req);
void agent_exec_lnx_put(uint8_t *p, const struct agent_exec_req *req);
size_t agent_exec_lnx_get(const uint8_t *p, size_t avail, struct agent_exec_req *req);
/* Whether key[0, len) may be a sysctl's key (components of
 * [A-Za-z0-9_-] joined by '.'), value[0, len) its value. */
int agent_sysctl_key_ok(const char *key, size_t len);
int agent_sysctl_value_ok(const char *value, size_t len);
/* Whether path[0, len) may be a masked or read-only path (device 0: in
 * /proc and /sys too, that is their point), or a device's or a tmpfs's
 * place (device 1: never there): absolute and clean. */
int agent_lnx_path_ok(const char *path, size_t len, int device);
/* Whether options[0, len) may be a tmpfs's options (printable ASCII, no
 * space, shorter than AGENT_LNX_MAX_DATA). */
int agent_tmpfs_options_ok(const char *options, size_t len);
/* Whether name[0, len) (no NUL in it) may name a container; whether
 * serial[0, len) may be a root disk's serial (len 0 excluded). */
int agent_ctr_name_ok(const char *name, size_t len);
int agent_ctr_serial_ok(const char *serial, size_t len);
/* Whether path[0, len) may be a bind's source (target 0) or target
 * (target 1). */
int agent_ctr_bind_path_ok(const char *path, size_t len, int target);
/* CONTAINER_END: the payload at p (AGENT_CTR_MAX_NAME + 1 bytes of room):
 * its length, 0 for a name the rules refuse; the frame (-EINVAL, or
 * -EMSGSIZE past cap); a payload checked, with m its name filled in:
 * 0 or -EPROTO. */
size_t agent_ctr_end_payload(uint8_t *p, const char *name);
ssize_t agent_encode_container_end(uint8_t *buf, size_t cap, const char *name);
int agent_ctr_end_parse(const uint8_t *p, size_t len, struct agent_msg *m);
ssize_t agent_encode_ready(uint8_t *buf, size_t cap, uint32_t version, uint32_t features);
ssize_t agent_encode_started(uint8_t *buf, size_t cap, uint32_t pid);
/* ATTACH and ATTACHED (proto.h). */
ssize_t agent_encode_attach(uint8_t *buf, size_t cap, uint32_t pid, uint64_t have);
ssize_t agent_encode_attached(uint8_t *buf, size_t cap, uint32_t pid, uint64_t from,
                              uint64_t stdin_got);
ssize_t agent_encode_exit(uint8_t *buf, size_t cap, uint32_t kind, uint32_t value,
                          uint32_t flags);
ssize_t agent_encode_error(uint8_t *buf, size_t cap, uint32_t code, uint32_t op);

/* ---- decoding ---- */

enum agent_dir {
    AGENT_DIR_REQUEST, /* decoding what the host sent (the agent's side) */
    AGENT_DIR_REPLY,   /* decoding what the agent sent (airlock's side) */
};

/* A complete message.  `payload` points into the decoder's buffer and is
 * valid until the next agent_decode call.  The fixed-layout fields of the
 * message's type are filled in (others are zero). */
struct agent_msg {
    uint16_t type;
    uint32_t len;
    const uint8_t *payload;
    union {
        struct { uint32_t version, features; } ready;
        struct { uint32_t pid; } started;
        struct { uint32_t pid; uint64_t have; } attach;
        struct { uint32_t pid; uint64_t from, stdin_got; } attached;
        struct { uint32_t kind, value, flags; } exit;
        struct { uint32_t code, op; } error;
        struct { uint32_t mode, root_len; uint64_t size; const char *path; } file_put;
        struct { const char *path; } file_get; /* also STAT's and LIST's */
        struct { uint32_t mode, root_len; const char *path; } mkdir;
        struct { uint32_t root_len; const char *path, *target; } symlink;
        struct { uint32_t flags; const char *from, *to; } rename;
        struct { uint32_t flags; const char *path; } remove;
        struct { uint32_t uid, gid; const char *path; } chown;
        struct agent_entry entry;
        struct { uint64_t realtime_ns; const uint8_t *seed; } reseed; /* AGENT_RESEED_SEED bytes */
        struct { uint32_t signo, flags; } signal; /* flags: AGENT_SIGNAL_F_* */
        struct { uint16_t rows, cols; } winsize;
        struct { uint32_t device, flags; const char *path; } mount;
        struct { uint32_t flags; const char *path; } watch;
        struct agent_event event;
        struct { const char *name; } ctr_end; /* CONTAINER_END's */
    } u;
};

/* Validate a WATCH or an EVENT payload; with m, fill m->u.watch or
 * m->u.event (the strings point into the payload).  0 or -EPROTO. */
int agent_watch_parse(const uint8_t *p, size_t len, struct agent_msg *m);
int agent_event_parse(const uint8_t *p, size_t len, struct agent_msg *m);

/* Validates a MOUNT payload; with m, fills m->u.mount (the path points
 * into the payload).  0 or -EPROTO. */
int agent_mount_parse(const uint8_t *p, size_t len, struct agent_msg *m);

/* The largest payload the decoder buffers for a direction: replies never
 * need more than a data chunk, so a hostile agent cannot make airlock hold
 * more than that per connection. */
size_t agent_dir_max(enum agent_dir dir);
/* Largest payload allowed for `type` in `dir`; 0 when the type is not
 * valid in that direction (or, for empty types, ask agent_type_known). */
uint32_t agent_type_max(enum agent_dir dir, uint16_t type);
/* The same for the folder requests and ENTRY (agent_dir_codec.c). */
uint32_t agent_dir_type_max(enum agent_dir dir, uint16_t type);
/* Checks a complete MKDIR, SYMLINK, RENAME, REMOVE, CHOWN or ENTRY payload and fills m->u: 0 or
 * -EPROTO (any other type is -EPROTO too). */
int agent_dir_check_payload(uint16_t type, const uint8_t *p, uint32_t len, struct agent_msg *m);
/* [p, p+size) as a path: one NUL, at its end, and not empty (unless
 * allow_empty); else NULL. */
const char *agent_path_in(const uint8_t *p, size_t size, int allow_empty);
/* The payloads agent_encode_{path_req,mkdir,symlink,entry} frame, laid out
 * at p (room for the type's maximum): their length, 0 when the arguments
 * break the protocol's rules. */
size_t agent_path_payload(const char *path);
size_t agent_mkdir_payload(uint8_t *p, const char *path, uint32_t root_len, uint32_t mode);
size_t agent_symlink_payload(uint8_t *p, const char *path, uint32_t root_len, const char *target);
size_t agent_rename_payload(uint8_t *p, const char *from, const char *to, uint32_t flags);
size_t agent_remove_payload(uint8_t *p, const char *path, uint32_t flags);
size_t agent_chown_payload(uint8_t *p, const char *path, uint32_t uid, uint32_t gid);
size_t agent_entry_payload(uint8_t *p, const struct agent_entry *e);

struct agent_decoder {
    enum agent_dir dir;
    uint8_t hdr[AGENT_HDR_SIZE];
    size_t hdr_have;
    uint16_t type;
    uint32_t len;
    uint8_t *buf;       /* agent_dir_max(dir) bytes */
    size_t have;
    int error;          /* sticky: once a frame is bad, the stream is */
    int passing;        /* a data frame's payload is part skipped (agent_decode_skip) */
};

/* 0 or -ENOMEM. */
int agent_decoder_init(struct agent_decoder *d, enum agent_dir dir);
void agent_decoder_free(struct agent_decoder *d);

/* Consumes bytes from data[0..len) and sets *used to how many.  Returns 1
 * with *msg filled when a message completed (call again with the rest),
 * 0 when every byte was consumed without completing one, or a negative
 * errno when the stream is bad (and stays so): -EBADMSG bad magic,
 * -EPROTONOSUPPORT wrong version, -EPROTO unknown/misdirected type or
 * malformed payload, -EMSGSIZE length over the type's maximum. */
int agent_decode(struct agent_decoder *d, const void *data, size_t len, size_t *used,
                 struct agent_msg *msg);

/* Data frames without the copy through the decoder: when the decoder
 * holds the complete header of a data frame (STDIN, STDOUT, STDERR,
 * FILE_DATA) and none of its payload, agent_decode_data_frame returns the
 * payload length (>= 1, already checked against the type's maximum) and
 * sets *type; else 0.  The caller then moves those bytes itself (e.g.
 * splice from the socket to where they go) and counts each part with
 * agent_decode_skip; after the last, the decoder expects a header again.
 * agent_decode refuses (-EINVAL) while a payload is part skipped;
 * agent_decode_skip refuses more than the frame holds. */
uint32_t agent_decode_data_frame(const struct agent_decoder *d, uint16_t *type);
int agent_decode_skip(struct agent_decoder *d, uint32_t n);
/* How many bytes the decoder takes before its current header or payload
 * is complete: a reader that never asks for more never reads past a frame
 * boundary, so a data frame's payload is still in the socket when its
 * header has been decoded. */
size_t agent_decode_want(const struct agent_decoder *d);

/* A buffered reader of one connection's messages, the same for both ends
 * (the agent reads requests, airlock replies): the socket, the decoder,
 * and a buffer the owner provides.  A READY (replies only: a request
 * decoder refuses it) is taken here, once and of this version, so every
 * helper accepts one at the start of a connection. */
struct agent_reader {
    int fd;
    struct agent_decoder dec;
    uint8_t *buf;
    size_t cap, pos, len;   /* buf[pos, len) is received, not yet decoded */
    uint32_t version;       /* the READY's version; 0 until one came */
};
/* 0, or -ENOMEM (the decoder's buffer); agent_reader_free releases it. */
int agent_reader_init(struct agent_reader *r, int fd, enum agent_dir dir, uint8_t *buf,
                      size_t cap);
void agent_reader_free(struct agent_reader *r);
/* The next complete message already received: 1, 0 when more bytes are
 * needed, or -errno for a bad stream. */
int agent_reader_next(struct agent_reader *r, struct agent_msg *m);
/* Reads more bytes once the buffer is decoded: 1, or -errno (-ECONNRESET
 * on EOF). */
int agent_reader_fill(struct agent_reader *r);
/* The same, never past the decoder's current header or payload: a data
 * frame's payload is still in the socket once its header is decoded, for
 * the caller to move itself (agent_decode_data_frame). */
int agent_reader_fill_frame(struct agent_reader *r);
/* Blocks until a message (other than READY) arrives: 1 or -errno. */
int agent_reader_wait(struct agent_reader *r, struct agent_msg *m);

/* Validates an EXEC payload; with the two arrays (AGENT_MAX_ARGS + 1 and
 * AGENT_MAX_ENVS + 1 entries) fills req with pointers into the payload,
 * NULL-terminating both arrays.  0 or -EPROTO. */
int agent_exec_parse(const uint8_t *p, size_t len, struct agent_exec_req *req,
                     const char **argv_buf, const char **env_buf);

/* ---- blocking helpers over a connected stream socket ---- */

/* Writes all of buf (retrying short writes and EINTR): 0 or -errno.  Both
 * the agent and the host use it. */
int agent_write_all(int fd, const void *buf, size_t len);
/* The same over a socket, with MSG_NOSIGNAL: 0 or -errno (-EPIPE). */
int agent_send_all(int fd, const void *buf, size_t len);

/* One recv into buf (retrying EINTR): the byte count, -ECONNRESET at EOF,
 * or -errno.  Both ends' message readers refill with it. */
ssize_t agent_recv_some(int fd, void *buf, size_t cap);

struct agent_exec_result {
    int started;          /* STARTED arrived */
    uint32_t pid;         /* the command's pid in the guest */
    int signaled;         /* killed by signal `value` (else exited `value`) */
    int value;
    int timed_out;        /* the agent killed it on timeout */
    int host_timeout;     /* the agent did not end it in time: the host gave up (also timed_out) */
    int output_stalled;   /* with host_timeout: the timeout passed while out_fd or err_fd
                           * took nothing (its reader stopped reading) */
    int output_closed;    /* out_fd or err_fd lost its reader (EPIPE): the host stopped
                           * there, the command may still run (the caller stops the VM) */
    int error;            /* errno from an ERROR reply (never started), or 0 */
    uint32_t error_op;    /* AGENT_OP_* of that ERROR */
    uint32_t agent_version; /* from READY, when it was seen */
    uint64_t out_bytes, err_bytes; /* what the command wrote */
    uint64_t dropped;     /* of those, bytes past max_output: not copied */
    /* A command that ran with AGENT_EXEC_F_KEEP, taken up again by
     * agent_exec_attach: */
    uint64_t received;    /* output payload bytes taken off the connections */
    uint64_t lost;        /* output the agent no longer had when attached */
    uint64_t stdin_got;   /* ATTACHED's count of stdin bytes the agent took */
    unsigned attaches;    /* ATTACHED answers so far */
    int attach_wait;      /* ATTACH sent, ATTACHED not yet seen */
    int attach_error;     /* errno of an ERROR instead of ATTACHED (ESRCH:
                           * no such command waits), or 0 */
};

/* The output cap: stdout and stderr together may copy `max` bytes. */
struct agent_output_cap {
    uint64_t max, used, dropped;
};

/* How many of the `len` bytes of the next chunk may still be copied; the
 * rest is counted as dropped.  A chunk that crosses the cap is cut there,
 * so exactly `max` bytes are copied. */
size_t agent_output_take(struct agent_output_cap *cap, size_t len);

/* Sends `req` (stdin attached when in_fd >= 0, which is then read to EOF
 * and forwarded), copies STDOUT to out_fd and STDERR to err_fd (at most
 * max_output bytes of the two together; the rest is read and dropped, the
 * command keeps running, res->dropped counts it), and waits for EXIT or
 * ERROR.  A READY at the start of the stream is accepted.  With a
 * timeout, it waits at most timeout_ms + host_grace_ms: then the outcome
 * is res->timed_out and res->host_timeout (the caller stops the VM).
 * out_fd and err_fd may be non-blocking (vmm/util/nbfd.h): output they do not
 * take waits in the poll loop, never in a write, so the timeout still
 * holds when their reader stops reading; then the agent's EXIT is stuck
 * behind that output, so the wait ends at timeout_ms already, with
 * res->output_stalled too.
 * When out_fd or err_fd says EPIPE (e.g. `airlock run ... | head`), the
 * outcome is res->output_closed, at once, as a writer's SIGPIPE would be.
 * 0 with *res filled once the outcome is known; -errno on transport
 * failure, -EPROTO when the agent broke the protocol. */
int agent_exec(int fd, const struct agent_exec_req *req, int out_fd, int err_fd, int in_fd,
               uint64_t max_output, struct agent_exec_result *res);

/* agent_exec, and sig_fd (a pipe; -1: none) carries what the host sends
 * the command once it started: a byte 1..64 is a signal number (SIGNAL,
 * to the command's process group), the same ORed with AGENT_SIGQ_PROCESS
 * one for the command's process alone (AGENT_SIGNAL_F_PROCESS), the byte
 * AGENT_SIGQ_WINSIZE and 4 more (agent_sigq_winsize) a terminal size
 * (WINSIZE); anything else is dropped. */
int agent_exec_signals(int fd, const struct agent_exec_req *req, int out_fd, int err_fd,
                       int in_fd, int sig_fd, uint64_t max_output, struct agent_exec_result *res);

/* Takes up a command that ran with AGENT_EXEC_F_KEEP after its
 * conversation ended (the VM paused and resumed) on a new connection fd:
 * ATTACH with res->pid and res->received (res as the earlier call left
 * it), then as agent_exec_signals from where the output stopped; res's
 * counts go on (lost: output gone meanwhile).  0 with the outcome, or
 * with res->attach_error when the agent has no such command; -errno when
 * the transport failed (again: call it again on another connection). */
int agent_exec_attach(int fd, const struct agent_exec_req *req, int out_fd, int err_fd,
                      int in_fd, int sig_fd, uint64_t max_output, struct agent_exec_result *res);

/* The record that asks agent_exec_signals for a WINSIZE: 5 bytes, written
 * whole (one write below PIPE_BUF arrives whole: a SIGWINCH handler can
 * write it, async-signal-safe). */
#define AGENT_SIGQ_WINSIZE 0
#define AGENT_SIGQ_PROCESS 0x80
#define AGENT_SIGQ_WINSIZE_LEN 5
void agent_sigq_winsize(uint8_t rec[AGENT_SIGQ_WINSIZE_LEN], uint16_t rows, uint16_t cols);

/* Sends RESEED (proto.h): the host's wall time and AGENT_RESEED_SEED bytes
 * of randomness, for the guest's clock and CRNG, and waits at most
 * wait_ms for the agent's answer (a READY at the start of the stream is
 * accepted).  0 once the agent answered: *err is 0 for RESEEDED, else the
 * guest's errno from an ERROR and *op its step (AGENT_OP_RESEED or
 * AGENT_OP_CLOCK).  -ETIMEDOUT without an answer in time, -EPROTO when
 * the agent broke the protocol, -errno on transport failure.  The reader
 * stops at the answer's end, so the same fd carries the next request. */
int agent_reseed(int fd, uint64_t realtime_ns, const uint8_t *seed, unsigned wait_ms, int *err,
                 uint32_t *op);
/* How long airlock waits for RESEEDED: the agent answers after two
 * ioctls and a clock_settime, so this only bounds a guest that never
 * answers; generous for the nested lab's emulated CPUs. */
#define AGENT_RESEED_WAIT_MS 30000
/* The one line (no prefix) saying why agent_reseed's outcome (rc, err,
 * op, the wait_ms it had) means the guest was not reseeded, written to
 * buf; NULL when it was. */
const char *agent_reseed_failure(int rc, int err, uint32_t op, unsigned wait_ms, char *buf,
                                size_t cap);

/* RESEED with the host's wall clock now and `seed`, waiting at most
 * AGENT_RESEED_WAIT_MS: NULL once the guest took it, else the one line
 * (in buf) saying why it did not (agent_reseed_failure). */
const char *agent_reseed_now(int fd, const uint8_t *seed, char *buf, size_t cap);

/* Sends CREDENTIALS (proto.h): env[0, envc) for every later command and
 * pem[0, pem_len) (NULL/0: none) as the CA the guest trusts; envc 0 with
 * no PEM clears what an earlier one installed.  Waits at most
 * AGENT_CREDENTIALS_WAIT_MS for the answer (a READY at the start of the
 * stream is accepted).  0 once the agent answered DONE; else -errno with
 * one line (no prefix) in why (when why is not NULL) saying what failed:
 * -EINVAL / -EMSGSIZE for entries or a PEM the protocol refuses (nothing
 * sent), the guest's -errno from its ERROR, -ETIMEDOUT without an answer
 * in time, -EPROTO when the agent broke the protocol, or the transport's.
 * The reader stops at the answer's end, so the fd carries the next
 * request. */
int agent_credentials(int fd, const char *const *env, unsigned envc, const char *pem,
                      size_t pem_len, char *why, size_t whylen);
/* The same with its own bound. */
int agent_credentials_wait(int fd, const char *const *env, unsigned envc, const char *pem,
                           size_t pem_len, unsigned wait_ms, char *why, size_t whylen);
/* The agent answers after writing a few small files. */
#define AGENT_CREDENTIALS_WAIT_MS 30000

/* Sends MOUNT (proto.h): disk `device` at guest folder `path`, read-only
 * with AGENT_MOUNT_F_RO, and waits at most wait_ms for the answer (a
 * READY at the start of the stream is accepted).  0 once the agent
 * answered DONE; else -errno with one line (no prefix) in why (when why is
 * not NULL): -EINVAL for a request the protocol refuses (nothing sent),
 * the guest's -errno from its ERROR, -ETIMEDOUT, -EPROTO, or the
 * transport's.  The reader stops at the answer's end. */
int agent_mount(int fd, uint32_t device, uint32_t flags, const char *path, unsigned wait_ms,
                char *why, size_t whylen);
/* The agent answers after making a folder and mount(2), which replays no
 * journal on a disk just made. */
#define AGENT_MOUNT_WAIT_MS 30000

/* Sends CONTAINER_END (proto.h) for the pod's container `name` and waits
 * at most wait_ms for the answer (a READY at the start of the stream is
 * accepted).  0 once the agent answered DONE (its processes are gone and
 * its root unmounted: the host may take its disk away); else -errno with
 * one line in why as agent_mount: -EINVAL for a name the protocol refuses
 * (nothing sent), the guest's -errno (-ESRCH: no such container),
 * -ETIMEDOUT, -EPROTO, or the transport's. */
int agent_container_end(int fd, const char *name, unsigned wait_ms, char *why, size_t whylen);
/* The agent waits AGENT_CTR_END_WAIT_MS at most for the processes. */
#define AGENT_CONTAINER_END_WAIT_MS 30000

/* Sends SYNC (proto.h) and waits at most wait_ms for the agent's DONE:
 * once it came, what the guest wrote is on its disks (a named volume's
 * file on the host).  0, or -errno with one line in why as agent_mount. */
int agent_sync(int fd, unsigned wait_ms, char *why, size_t whylen);
/* A guest with a lot of dirty pages may take this long to write them. */
#define AGENT_SYNC_WAIT_MS 20000

/* Sends WATCH (proto.h) for guest `path` with AGENT_WATCH_F_* flags and
 * waits at most wait_ms for the agent's verdict (a READY at the start of
 * the stream is accepted).  0 once it watches, with *out the
 * connection's reader for agent_watch_next (ac_free releases it, not the
 * fd); else -errno: -EINVAL for a request the protocol refuses (nothing
 * sent), the guest's errno from its ERROR (-ENOENT: no such path),
 * -ETIMEDOUT, -EPROTO, or the transport's. */
struct agent_conn;
int agent_watch_begin(int fd, const char *path, uint32_t flags, unsigned wait_ms,
                      struct agent_conn **out);
/* The next message already received on a watch of `root`: 1 with *ev
 * (its strings valid until the next call), 2 at the watch's end (DONE:
 * the path went away), 0 when more bytes are needed (agent_reader_fill
 * once the fd is readable), or -errno for a broken stream: -EPROTO for any
 * other message or an event outside root. */
int agent_watch_next(struct agent_conn *c, const char *root, struct agent_event *ev);

/* Copies in_fd (size bytes exactly) to guest `path` with `mode`.  0, or
 * -errno (the guest's errno for a refused put, e.g. -EACCES). */
int agent_file_put(int fd, const char *path, uint32_t mode, int in_fd, uint64_t size);
/* Copies guest `path` into out_fd, at most max_bytes (-EFBIG beyond). */
int agent_file_get(int fd, const char *path, int out_fd, uint64_t max_bytes);

/* The same with the bytes from or to a callback (a tar being read or
 * written): a reader gives up to len bytes (0 or less: no more, and the
 * put fails with -EIO), a writer takes all of them (0, or -errno to stop). */
typedef ssize_t agent_read_fn(void *opaque, void *buf, size_t len);
typedef int agent_write_fn(void *opaque, const void *buf, size_t len);
/* root_len as for agent_encode_file_put. */
int agent_file_put_from(int fd, const char *path, uint32_t root_len, uint32_t mode,
                        uint64_t size, agent_read_fn *read_fn, void *opaque);
int agent_file_get_to(int fd, const char *path, uint64_t max_bytes, agent_write_fn *write_fn,
                      void *opaque);

/* ---- folders (agent_dir.c); each 0 or -errno (the guest's errno for a
 * refused request, -EPROTO for a broken answer) ---- */

/* lstat of a guest path: *e (name ""; its target points into target_buf,
 * AGENT_MAX_PATH bytes). */
int agent_stat(int fd, const char *path, struct agent_entry *e, char *target_buf);
/* Each entry of a guest folder to `each` (valid during the call); a
 * nonzero return from it stops the listing and is returned (the stream is
 * then mid-answer: close the connection).  An entry with the name "" is
 * -EPROTO. */
typedef int agent_entry_fn(void *opaque, const struct agent_entry *e);
int agent_list(int fd, const char *path, agent_entry_fn *each, void *opaque);
int agent_mkdir(int fd, const char *path, uint32_t root_len, uint32_t mode);
int agent_symlink(int fd, const char *path, uint32_t root_len, const char *target);
/* RENAME, REMOVE, CHOWN (proto.h); -EINVAL for arguments the protocol
 * refuses (nothing sent). */
int agent_rename(int fd, const char *from, const char *to, uint32_t flags);
int agent_remove(int fd, const char *path, uint32_t flags);
int agent_chown(int fd, const char *path, uint32_t uid, uint32_t gid);

/* The exit status airlock reports for a result: the command's code,
 * 128+signal, 124 on timeout, 127 not found, 126 cannot run, 141
 * (128+SIGPIPE) when our output lost its reader. */
int agent_result_status(const struct agent_exec_result *res);

#endif
