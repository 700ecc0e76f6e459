/* The exec protocol between airlock (host) and the guest agent (PID 1).
 * Included by both sides: guest/agent/ (static, in the guest) and
 * vmm/agent_client/agent_client.c (in the monitor).  The agent runs where untrusted code
 * runs, so the host treats every byte of a reply as hostile; the agent
 * validates requests just as strictly, so one decoder serves both.
 *
 * Framing: a stream of messages, each a fixed 12-byte header followed by
 * `length` payload bytes.  All integers are little-endian, no padding.
 *
 *   off size field
 *   0   4    magic    AGENT_MAGIC
 *   4   2    version  AGENT_VERSION (a mismatch is a protocol error, not
 *                     negotiated: both ends are built from this header)
 *   6   2    type     one of enum agent_type, valid for its direction
 *   8   4    length   payload bytes; <= the per-type maximum
 *                     (agent_type_max()), never above AGENT_MAX_PAYLOAD
 *
 * A conversation (one connection, requests strictly one after another):
 *   agent: READY                                   once, on connect
 *   host:  EXEC [STDIN...] [STDIN_EOF] [SIGNAL...] [WINSIZE...] [KILL]
 *                                                  (in any order)
 *   agent: STARTED (STDOUT|STDERR)* EXIT           or  ERROR (never started)
 *   host:  FILE_PUT FILE_DATA* FILE_END
 *   agent: FILE_END (written)                      or  ERROR
 *   host:  FILE_GET
 *   agent: FILE_DATA* FILE_END                     or  ERROR
 *   host:  RESEED
 *   agent: RESEEDED                                or  ERROR (op RESEED/CLOCK)
 *   host:  STAT
 *   agent: ENTRY (the path itself, name "")        or  ERROR (op FILE)
 *   host:  LIST
 *   agent: ENTRY* DONE                             or  ERROR (op FILE)
 *   host:  MKDIR | SYMLINK | RENAME | REMOVE | CHOWN
 *   agent: DONE                                    or  ERROR (op FILE)
 *   host:  CREDENTIALS                             once per VM (after boot or
 *                                                  restore and RESEED, before
 *                                                  commands; again to change
 *                                                  or clear them)
 *   agent: DONE                                    or  ERROR (op FILE; op
 *                                                  PROTO: a malformed payload)
 *   host:  MOUNT                                   after boot and RESEED, before
 *                                                  commands, once per --mount
 *   agent: DONE                                    or  ERROR (op MOUNT)
 *   host:  ATTACH                                  a command that ran with
 *                                                  AGENT_EXEC_F_KEEP and lost
 *                                                  its conversation
 *   agent: ATTACHED, then as after STARTED         or  ERROR (op EXEC: ESRCH,
 *                                                  no such command waits)
 *   host:  CONTAINER_END                           a pod's container is over
 *   agent: DONE                                    or  ERROR (op CONTAINER:
 *                                                  ESRCH, no such container)
 *   host:  WATCH                                   then nothing: the host ends
 *                                                  the watch by closing
 *   agent: DONE (watching) EVENT* [DONE]           or  ERROR (op FILE); the
 *                                                  second DONE: the path went
 *                                                  away, the watch is over
 * Any frame that breaks these rules ends the connection on either side.
 */
#ifndef AIRLOCK_GUEST_AGENT_PROTO_H
#define AIRLOCK_GUEST_AGENT_PROTO_H

#define AGENT_MAGIC   0x4b4c5241u /* "ARLK" as bytes on the wire */
/* 2: RESEED is answered (RESEEDED or ERROR); a version-1 agent answered
 * nothing, so a host could not tell whether the guest's CRNG was
 * reseeded.  A READY or frame of another version is refused: an image or
 * snapshot whose agent came from another build does not run commands. */
/* 3: SIGNAL (a background command in the sandbox API is signalled
 * through its own conversation; a version-2 agent would end it). */
/* 4: CREDENTIALS (placeholder env for every command and the host proxy's
 * per-VM CA in the guest's trust store; a version-3 agent would end the
 * conversation, and its commands would run without them). */
/* 5: MOUNT (a host folder's disk mounted at a guest path before the
 * first command; a version-4 agent would end the conversation, and the
 * command would run without its folder). */
/* 6: EXEC grows a section (a terminal and its size, supplementary
 * groups, rlimits by number, no_new_privs; an OCI process's fields) and
 * WINSIZE; a version-5 agent would read that section as the cwd, and
 * would end the conversation at a WINSIZE. */
/* 7: EXEC's process section grows five capability sets
 * (AGENT_EXEC_F_CAPS); a version-6 agent would read them as the groups
 * and rlimits, and its command would keep every capability. */
/* 8: EXEC's argv may run to AGENT_MAX_ARGV_BYTES = 1 MiB + 4 KiB (was
 * 128 KiB) and gains AGENT_EXEC_F_SCRIPT; a version-7 agent would refuse
 * both, so every `cmd` of the sandbox API would fail. */
/* 9: the agent also serves inbound forwards on AGENT_FORWARD_VSOCK_PORT
 * (below); the conversation on AGENT_VSOCK_PORT is unchanged, but a
 * version-8 agent refuses every published port. */
/* 10: WATCH and EVENT (a path's changes, from inotify, streamed until the
 * host closes or the path goes); a version-9 agent would end the
 * conversation at the WATCH. */
/* 11: RENAME, REMOVE and CHOWN (the sandbox API's move and remove, and
 * the owner of what an upload made for a user), and ENTRY carries the
 * owner's uid and gid; a version-10 agent would end the conversation at
 * the new requests, and its ENTRY would be 8 bytes short. */
/* 12: EXEC's AGENT_EXEC_F_KEEP, ATTACH and ATTACHED (a command that
 * outlives its conversation, taken up again on a new one: a sandbox's
 * background commands across a pause); a version-11 agent would refuse
 * the flag and end the conversation at an ATTACH. */
/* 13: SYNC (the guest's writes flushed to its disks before the host
 * stops the VM: a named volume's must outlive it); a version-12 agent
 * would end the conversation at the SYNC. */
/* 14: SIGNAL's AGENT_SIGNAL_F_PROCESS (a container's `kill` reaches its
 * process alone, as runc's does; the group stays the default for
 * everyone else); a version-13 agent would refuse the bit and end the
 * conversation. */
/* 15: EXEC's container section (AGENT_EXEC_F_CONTAINER: a pod's
 * containers in one VM, each named, in mount and PID namespaces of its
 * own, its root a disk found by serial, with bind mounts) and
 * CONTAINER_END; a version-14 agent would refuse the flag and end the
 * conversation at a CONTAINER_END.  Without the flag EXEC is as in 14. */
/* 16: EXEC's linux section (AGENT_EXEC_F_LINUX: an OCI config's
 * linux.devices, rootfsPropagation, sysctl, readonlyPaths, maskedPaths,
 * root.readonly and process.oomScoreAdj applied in the new container); a
 * version-15 agent would refuse the flag.  Without it EXEC is as in 15. */
#define AGENT_VERSION 16
#define AGENT_HDR_SIZE 12

/* The agent listens on this vsock port (VMADDR_CID_ANY). */
#define AGENT_VSOCK_PORT 1024

/* Egress (guest/agent/proxy.c): programs in the guest use an HTTP proxy
 * at 127.0.0.1:AGENT_PROXY_PORT (3128 is the customary proxy port); the
 * agent relays each TCP connection there, unchanged, to a vsock
 * connection to the host (VMADDR_CID_HOST) port AGENT_EGRESS_VSOCK_PORT,
 * where the monitor expects the raw bytes of an HTTP proxy client
 * (CONNECT or absolute-URI requests).  No host listener: the guest's
 * client gets "HTTP/1.1 502 Bad Gateway". */
#define AGENT_PROXY_PORT        3128
#define AGENT_EGRESS_VSOCK_PORT 3128

/* Inbound forwards (guest/agent/forward.c): the host reaches a guest TCP
 * port by connecting to this vsock port and sending a hello of
 * AGENT_FWD_HELLO_SIZE bytes:
 *   0  u32 magic  AGENT_FWD_MAGIC ("AFWD" on the wire)
 *   4  u16 port   the guest TCP port on 127.0.0.1, 1..65535
 *   6  u16 flags  0 (anything else is refused)
 * The agent connects to 127.0.0.1:port and answers AGENT_FWD_REPLY_SIZE
 * bytes, a u32: 0, after which the connection carries the TCP stream both
 * ways, unchanged; or the errno of the failed connect (ECONNREFUSED when
 * nobody listens), after which it closes.  A hello that is not exactly
 * this, or not complete within AGENT_FWD_HELLO_MS, is closed unanswered.
 * Only 127.0.0.1 is reachable this way: never another address, and never
 * the agent's own vsock port (no TCP listener of the agent's is on lo
 * but the egress proxy's, which only leads back out to the host). */
#define AGENT_FORWARD_VSOCK_PORT 1025
#define AGENT_FWD_MAGIC      0x44574641u /* "AFWD" as bytes on the wire */
#define AGENT_FWD_HELLO_SIZE 8
#define AGENT_FWD_REPLY_SIZE 4
#define AGENT_FWD_HELLO_MS   5000

/* ---- limits (both sides enforce them; the encoder refuses what the
 * decoder would reject, so a request that encodes also decodes) ---- */
#define AGENT_MAX_ARGS     4096          /* argv entries (>= 1) */
#define AGENT_MAX_ENVS     4096          /* env entries */
/* argv strings incl. NULs: room for a command as long as the sandbox
 * API's 1 MiB request body (its `cmd` or its `argv`, at most 256
 * entries, plus "/bin/sh" "-c"); a heredoc or a script an agent sends
 * runs to hundreds of KiB.  (Linux's execve takes at most 128 KiB per
 * string: AGENT_EXEC_F_SCRIPT is how a longer shell script gets in.) */
#define AGENT_MAX_ARGV_BYTES ((1024 + 4) * 1024)
#define AGENT_MAX_ENV_BYTES  (128 * 1024) /* env strings incl. NULs */
#define AGENT_MAX_PATH     4096          /* cwd / file path incl. NUL */
#define AGENT_MAX_CHUNK    (128 * 1024)  /* STDIN/STDOUT/STDERR/FILE_DATA */
#define AGENT_MAX_GROUPS   32            /* EXEC's supplementary groups */
#define AGENT_MAX_RLIMITS  16            /* EXEC's (resource, soft, hard) */
#define AGENT_RLIMIT_NUM   16            /* resources 0..15 (RLIM_NLIMITS) */
/* An EXEC is the largest message: fixed part, argv, env, process section
 * at its largest, cwd. */
#define AGENT_EXEC_FIXED   56
#define AGENT_EXEC_PROC_FIXED 56
#define AGENT_EXEC_RLIMIT_SIZE 20
/* EXEC's pidns (below): an OCI container's process is PID 1 of its own
 * PID namespace, and the container's exec'd processes join it. */
#define AGENT_PIDNS_NEW  0xffffffffu
#define AGENT_PIDNS_JOIN 0xfffffffeu
#define AGENT_PIDNS_FILE "/run/airlock/pidns" /* the PID 1's pid, as the agent sees it */
#define AGENT_EXEC_PROC_MAX (AGENT_EXEC_PROC_FIXED + 4 * AGENT_MAX_GROUPS + \
                             AGENT_EXEC_RLIMIT_SIZE * AGENT_MAX_RLIMITS)
/* EXEC's container section (AGENT_EXEC_F_CONTAINER, below). */
#define AGENT_EXEC_CTR_FIXED   8
#define AGENT_CTR_MAX_NAME     64   /* a name's bytes, its NUL aside */
#define AGENT_CTR_MAX_SERIAL   20   /* virtio-blk's ID field is 20 bytes */
#define AGENT_CTR_MAX_BINDS    64
#define AGENT_CTR_MAX_PATH     1024 /* a bind's source or target, its NUL included */
#define AGENT_CTR_BIND_FIXED   4
#define AGENT_CTR_MAX_BYTES    (AGENT_CTR_MAX_NAME + 1 + AGENT_CTR_MAX_SERIAL + 1 + \
                                AGENT_CTR_MAX_BINDS * (AGENT_CTR_BIND_FIXED + 2 * AGENT_CTR_MAX_PATH))
#define AGENT_EXEC_CTR_MAX     (AGENT_EXEC_CTR_FIXED + AGENT_CTR_MAX_BYTES)
/* EXEC's linux section (AGENT_EXEC_F_LINUX, below). */
#define AGENT_EXEC_LNX_FIXED   28
#define AGENT_LNX_MAX_LIST     64   /* of each list: masked, read-only, sysctl, devices, tmpfs */
#define AGENT_LNX_MAX_PATH     1024 /* a path, its NUL included */
#define AGENT_LNX_MAX_KEY      256  /* a sysctl's key, its NUL included */
#define AGENT_LNX_MAX_VALUE    1024 /* a sysctl's value, its NUL included */
#define AGENT_LNX_DEV_FIXED    20
#define AGENT_LNX_MAJOR_LIMIT  4096u    /* dev_t: 12 bits of major, */
#define AGENT_LNX_MINOR_LIMIT  1048576u /* 20 of minor */
#define AGENT_LNX_TMPFS_FIXED  8
#define AGENT_LNX_MAX_DATA     256  /* a tmpfs's options, its NUL included */
#define AGENT_LNX_MAX_BYTES    (256 * 1024)
#define AGENT_EXEC_LNX_MAX     (AGENT_EXEC_LNX_FIXED + AGENT_LNX_MAX_BYTES)
#define AGENT_MAX_PAYLOAD  (AGENT_EXEC_FIXED + AGENT_MAX_ARGV_BYTES + AGENT_MAX_ENV_BYTES + \
                            AGENT_EXEC_PROC_MAX + AGENT_EXEC_CTR_MAX + AGENT_EXEC_LNX_MAX + \
                            AGENT_MAX_PATH)
/* The agent refuses a FILE_PUT larger than this (a guest tmpfs lives in
 * guest RAM; the host also bounds what it accepts from FILE_GET). */
#define AGENT_MAX_FILE     (1ull << 32)

/* uid/gid value meaning "the default": 65534 (nobody), never root. */
#define AGENT_ID_DEFAULT   0xffffffffu
#define AGENT_NOBODY       65534u
/* rlimit value meaning "leave the agent's limit as it is". */
#define AGENT_RLIM_KEEP    0xffffffffffffffffull

enum agent_type {
    /* host -> agent */
    AGENT_EXEC      = 0x01,
    AGENT_STDIN     = 0x02, /* payload: 1..AGENT_MAX_CHUNK bytes for stdin */
    AGENT_STDIN_EOF = 0x03, /* empty: close the command's stdin */
    AGENT_KILL      = 0x04, /* empty: SIGKILL the command's process group */
    AGENT_FILE_PUT  = 0x05,
    AGENT_FILE_GET  = 0x06, /* payload: path, NUL-terminated (the only NUL) */
    AGENT_RESEED    = 0x09, /* fresh entropy and wall time (below) */
    AGENT_SIGNAL    = 0x0a, /* u32 signal 1..64 for the command's process
                             * group, or the process (since version 3;
                             * below) */
    AGENT_STAT      = 0x0b, /* payload: path, NUL-terminated: lstat it */
    AGENT_LIST      = 0x0c, /* payload: path, NUL-terminated: a folder's entries */
    AGENT_MKDIR     = 0x0d, /* below */
    AGENT_SYMLINK   = 0x0e, /* below */
    AGENT_CREDENTIALS = 0x0f, /* env entries and a CA for every later command
                               * (below; since version 4) */
    AGENT_MOUNT     = 0x10, /* a disk mounted at a guest folder (below; since
                             * version 5) */
    AGENT_WINSIZE   = 0x11, /* the command's terminal's new size (below;
                             * since version 6) */
    AGENT_WATCH     = 0x12, /* a path's changes as EVENTs (below; since
                             * version 10) */
    AGENT_RENAME    = 0x13, /* a path moved (below; since version 11) */
    AGENT_REMOVE    = 0x14, /* a path removed, a folder with what it holds
                             * (below; since version 11) */
    AGENT_CHOWN     = 0x15, /* a path's owner (below; since version 11) */
    AGENT_ATTACH    = 0x16, /* a kept command's conversation again (below;
                             * since version 12) */
    AGENT_SYNC      = 0x17, /* empty: sync(2), then DONE: what the guest
                             * wrote reaches its disks, a named volume's
                             * before its VM is stopped (since version 13) */
    AGENT_CONTAINER_END = 0x18, /* a pod's container ended (below; since
                                 * version 15) */
    /* both directions */
    AGENT_FILE_DATA = 0x07, /* payload: 1..AGENT_MAX_CHUNK file bytes */
    AGENT_FILE_END  = 0x08, /* empty: end of file (from the agent after a
                             * PUT: the file is written and closed) */
    /* agent -> host */
    AGENT_READY     = 0x81,
    AGENT_STARTED   = 0x82,
    AGENT_STDOUT    = 0x83, /* payload: 1..AGENT_MAX_CHUNK bytes */
    AGENT_STDERR    = 0x84, /* payload: 1..AGENT_MAX_CHUNK bytes */
    AGENT_EXIT      = 0x85,
    AGENT_ERROR     = 0x86,
    AGENT_RESEEDED  = 0x87, /* empty: the RESEED took effect (since version 2) */
    AGENT_ENTRY     = 0x88, /* one folder entry, or STAT's answer (below) */
    AGENT_DONE      = 0x89, /* empty: MKDIR/SYMLINK/CREDENTIALS/MOUNT took
                             * effect, or LIST's end; a WATCH began or ended */
    AGENT_EVENT     = 0x8a, /* one change a WATCH saw (below) */
    AGENT_ATTACHED  = 0x8b, /* ATTACH's answer (below; since version 12) */
};

/* EXEC payload (fixed part, AGENT_EXEC_FIXED bytes, then the sections):
 *   0  u32 uid          AGENT_ID_DEFAULT = 65534
 *   4  u32 gid          AGENT_ID_DEFAULT = 65534
 *   8  u32 timeout_ms   0 = none; on expiry the process group is killed
 *   12 u32 flags        AGENT_EXEC_F_*; unknown bits are an error
 *   16 u64 rlim_nproc   RLIMIT_NPROC soft=hard, AGENT_RLIM_KEEP = unchanged
 *   24 u64 rlim_fsize   RLIMIT_FSIZE, bytes
 *   32 u64 rlim_nofile  RLIMIT_NOFILE
 *   40 u32 argc         1..AGENT_MAX_ARGS
 *   44 u32 envc         0..AGENT_MAX_ENVS
 *   48 u32 argv_bytes   bytes of the argv strings, NULs included
 *   52 u32 env_bytes    bytes of the env strings, NULs included
 *   56 argv: argc NUL-terminated strings, exactly argv_bytes bytes
 *      env:  envc NUL-terminated "K=V" strings, exactly env_bytes bytes
 *      process (since version 6): AGENT_EXEC_PROC_FIXED bytes, then arrays
 *      whose sizes those give:
 *        +0  u16 rows       the terminal's size with AGENT_EXEC_F_TTY
 *        +2  u16 cols       (0 0 is allowed: unknown); both 0 without it
 *        +4  u32 ngroups    0..AGENT_MAX_GROUPS
 *        +8  u32 nrlimits   0..AGENT_MAX_RLIMITS
 *        +12 u32 pidns      0: the agent's PID namespace; AGENT_PIDNS_NEW: a
 *                           new one, the command its PID 1, with a mount
 *                           namespace whose /proc shows it, recorded as
 *                           the VM's container namespace (AGENT_PIDNS_FILE);
 *                           AGENT_PIDNS_JOIN: the recorded PID and mount
 *                           namespaces (ESRCH once its PID 1 is gone);
 *                           nothing else.  With AGENT_EXEC_F_CONTAINER
 *                           the namespaces are a named container's
 *                           (below), recorded per name
 *        +16 u64 bounding     capability sets (bit n = capability n), with
 *        +24 u64 effective    AGENT_EXEC_F_CAPS; all 0 without it (one
 *        +32 u64 permitted    form per request)
 *        +40 u64 inheritable
 *        +48 u64 ambient
 *        +56 ngroups x u32 gid: supplementary groups, none 0xffffffff
 *            nrlimits x AGENT_EXEC_RLIMIT_SIZE bytes:
 *              u32 resource  0..AGENT_RLIMIT_NUM-1 (Linux's RLIMIT_*),
 *                            each at most once in the list
 *              u64 soft      soft <= hard; 0xffffffffffffffff is
 *              u64 hard      RLIM_INFINITY here (not "keep")
 *      container (since version 15; only with AGENT_EXEC_F_CONTAINER,
 *      absent without it): AGENT_EXEC_CTR_FIXED bytes, then `bytes` more:
 *        +0  u32 nbinds     0..AGENT_CTR_MAX_BINDS; 0 with JOIN
 *        +4  u32 bytes      what follows, exactly: <= AGENT_CTR_MAX_BYTES
 *        +8  name,   NUL-terminated: 1..AGENT_CTR_MAX_NAME bytes of
 *                    [A-Za-z0-9_.-], not starting with '.' (an OCI
 *                    container id fits)
 *            serial, NUL-terminated: the root disk's virtio-blk serial,
 *                    1..AGENT_CTR_MAX_SERIAL bytes of the same set, or
 *                    "": the VM's own root (always "" with JOIN)
 *            nbinds x { u32 flags  AGENT_BIND_F_*; unknown bits: an error
 *                       source, NUL-terminated: a guest folder or file as
 *                              the agent sees it: absolute, no empty, "."
 *                              or ".." component, no '/' at its end, not
 *                              "/", not in /proc, /sys, /dev or
 *                              AGENT_CTR_DIR (another container's root)
 *                       target, NUL-terminated: where it goes in the
 *                              container: absolute and clean as source,
 *                              not "/", not in /proc or /sys
 *                       each string 2..AGENT_CTR_MAX_PATH bytes with its
 *                       NUL }
 *        The strings must end inside `bytes`, and fill it exactly.
 *        The section needs pidns NEW or JOIN (see pidns, AGENT_CTR_DIR).
 *      linux (since version 16; only with AGENT_EXEC_F_LINUX, absent
 *      without it; after the container section when both are there):
 *      AGENT_EXEC_LNX_FIXED bytes, then `bytes` more:
 *        +0  u32 flags      AGENT_LNX_F_*; unknown bits are an error
 *        +4  u32 oom        oom_score_adj as an s32, -1000..1000, with
 *                           AGENT_LNX_F_OOM; 0 without it
 *        +8  u32 propagation of the container's root: 0 (rprivate, as
 *                           without the section) or one AGENT_LNX_PROP_*
 *        +12 u16 nmasked    each list 0..AGENT_LNX_MAX_LIST
 *        +14 u16 nreadonly
 *        +16 u16 nsysctl
 *        +18 u16 ndevices
 *        +20 u16 ntmpfs
 *        +22 u16 zero
 *        +24 u32 bytes      what follows, exactly: <= AGENT_LNX_MAX_BYTES
 *        +28 ntmpfs x { u32 flags  AGENT_LNX_TMPFS_FLAGS bits (Linux's MS_*)
 *                       u32 propagation  0 or one AGENT_LNX_PROP_*
 *                       target, NUL-terminated, a clean absolute path as
 *                              below, not in /proc or /sys
 *                       options, NUL-terminated: 1..AGENT_LNX_MAX_DATA
 *                              bytes with the NUL of printable ASCII, no
 *                              space ("mode=755,size=1k", or "") };
 *            nmasked paths, then nreadonly paths, each NUL-terminated,
 *                    absolute and clean (no empty, "." or ".." component,
 *                    no '/' at the end, not "/"), 2..AGENT_LNX_MAX_PATH
 *                    bytes with the NUL;
 *            nsysctl x { key, NUL-terminated: 2..AGENT_LNX_MAX_KEY bytes
 *                        with the NUL, of [A-Za-z0-9_-] components
 *                        joined by '.' (no empty one: net.ipv4.ip_forward),
 *                        value, NUL-terminated: 1..AGENT_LNX_MAX_VALUE
 *                        bytes with the NUL, no '\n' };
 *            ndevices x { u32 mode   S_IFCHR, S_IFBLK or S_IFIFO | 07777
 *                                    permissions, nothing else
 *                         u32 major  < AGENT_LNX_MAJOR_LIMIT (0 for a FIFO)
 *                         u32 minor  < AGENT_LNX_MINOR_LIMIT (0 for a FIFO)
 *                         u32 uid, u32 gid
 *                         path, NUL-terminated, a clean absolute path as
 *                               above, not in /proc or /sys }
 *        The strings must end inside `bytes`, and fill it exactly.  The
 *        section needs pidns NEW: it is the container's making.
 *      cwd:  one NUL-terminated string (empty = "/"), the rest of the
 *            payload, <= AGENT_MAX_PATH bytes
 * The byte counts make every section's end known before it is walked: a
 * string must end (NUL) inside its own section, the process section's
 * size follows from its two bounded counts, and the sections must hold
 * exactly their counts — anything else is rejected.
 * In the child, before exec: the three fixed rlimits, then the list (a
 * resource in both ends up as the list says); with AGENT_EXEC_F_CAPS the
 * bounding set is cut to the request's (PR_CAPBSET_DROP) and the
 * permitted set kept across the uid change (PR_SET_KEEPCAPS); setgroups
 * (the list: none when empty), setgid, setuid; with AGENT_EXEC_F_CAPS
 * capset(effective, permitted, inheritable) and the ambient set raised,
 * as runc applies an OCI process's capabilities; no_new_privs with
 * AGENT_EXEC_F_NO_NEW_PRIVS.
 * An agent not running as root refuses groups as it refuses another uid
 * (EPERM, op CRED). */
#define AGENT_EXEC_F_STDIN 0x1u /* stdin comes as STDIN/STDIN_EOF; without
                                 * it the command reads /dev/null (with a
                                 * terminal: the terminal, which nobody
                                 * writes, as docker run -t without -i) */
/* A fresh pseudo-terminal (devpts) for the command: the slave is its
 * stdin, stdout, stderr and controlling terminal (its own session), the
 * master's output comes as STDOUT only (no STDERR: one stream, as docker
 * does), STDIN goes to the master, and STDIN_EOF writes the terminal's
 * VEOF character (^D: a reader in canonical mode sees end of file; the
 * terminal stays open for output, as runc's and docker's do). */
#define AGENT_EXEC_F_TTY   0x2u
/* prctl(PR_SET_NO_NEW_PRIVS) in the child: setuid bits and file
 * capabilities grant nothing to the command or what it runs. */
#define AGENT_EXEC_F_NO_NEW_PRIVS 0x4u
/* The process section's capability sets apply (since version 7); without
 * it a command as root has every capability and another user none. */
#define AGENT_EXEC_F_CAPS  0x8u
/* argv is exactly SHELL "-c" SCRIPT (since version 8).  A SCRIPT of
 * AGENT_SCRIPT_INLINE_MAX bytes or more, which execve would refuse past
 * 128 KiB (MAX_ARG_STRLEN), goes to the shell through a memfd instead:
 * the child runs SHELL -c ". /proc/self/fd/3", fd 3 a memfd holding
 * "exec 3<&- ; " and SCRIPT (the script's first act closes it, so its
 * commands do not inherit it).  A shorter one runs as given. */
#define AGENT_EXEC_F_SCRIPT 0x10u
#define AGENT_SCRIPT_INLINE_MAX (64 * 1024)
/* The command outlives its conversation (since version 12): when the
 * connection ends without an EXIT (a sandbox's VM paused, and its vsock
 * connections reset as it resumes), the agent keeps the command running
 * and waits for an ATTACH naming its pid.  Meanwhile nothing reads its
 * output: it waits in the pipes (a writer blocks when they are full), so
 * none is lost.  The agent keeps the last AGENT_KEEP_REPLAY bytes of
 * output it sent, since what was in flight when the connection ended is
 * gone: ATTACH says how much arrived and the agent sends the rest again. */
#define AGENT_EXEC_F_KEEP  0x20u
#define AGENT_KEEP_REPLAY  (512 * 1024)
/* A kept command nobody attaches to in this long (the guest's running
 * time: a paused VM's clock stands still) goes, as any command whose
 * conversation ended: its host forgot it. */
#define AGENT_KEEP_WAIT_MS (10 * 60 * 1000)
/* The command is in a named container of a pod (since version 15): the
 * container section follows the process section.  A pod's containers
 * share the VM's network (its localhost) and UTS namespaces; each has
 * mount and PID namespaces of its own.  Under AGENT_CTR_DIR/NAME/:
 *   root  with pidns NEW and a serial: the agent finds the disk whose
 *         /sys/block/X/serial is that serial and whose size is not 0 (it
 *         waits AGENT_CTR_DISK_WAIT_MS for it: the host's filling of a
 *         spare slot and the guest's capacity change race the request;
 *         ENODEV, op CONTAINER, after that), and mounts it there as ext4
 *         with the options of an imported image's root, in the agent's
 *         own mount namespace (FILE_PUT, MKDIR... of
 *         AGENT_CTR_DIR/NAME/root/PATH write into the container's root);
 *         the command then gets a new mount namespace (nothing
 *         propagates either way), its root pivoted there (the old one
 *         detached), the mounts of the single container's (pidns, above:
 *         its /proc, a tmpfs /dev with the default devices and links, the
 *         agent's devpts, /dev/shm, /dev/mqueue, /sys read-only) and a
 *         tmpfs /tmp (/proc, /dev, /sys and /tmp made in the root when
 *         the image lacks them), then the binds, in order: each source (a
 *         missing one is made as a folder, 0777, as a pod's emptyDir; no
 *         symlink on its way is followed: ELOOP) bind-mounted at its
 *         target, which is made in the container's root (a folder, or an
 *         empty file for a file) when missing, and refused (EPERM) when
 *         an image's link leads it into a /proc or /sys; read-only with
 *         AGENT_BIND_F_RO;
 *         with pidns NEW and serial "": the VM's own root, as the single
 *         container (a pod's sandbox container), plus the binds;
 *   pid   the container's PID 1 (as the agent sees it) and its PID
 *         namespace's inode, recorded by NEW (EEXIST when NAME has a
 *         record already: CONTAINER_END it first), read by JOIN, which
 *         enters its PID and mount namespaces (ESRCH when there is no
 *         record or its PID 1 is gone).
 * A failure of these steps is an ERROR with op AGENT_OP_CONTAINER; a NEW
 * that failed leaves no record and no mount behind.  AGENT_PIDNS_FILE is
 * neither read nor written for a named container. */
#define AGENT_EXEC_F_CONTAINER 0x40u
#define AGENT_CTR_DIR          "/run/airlock/containers"
#define AGENT_CTR_DISK_WAIT_MS 5000
#define AGENT_BIND_F_RO        0x1u
#define AGENT_BIND_F_ALL       AGENT_BIND_F_RO
/* EXEC's linux section (since version 16; layout above): what an OCI
 * config's tmpfs mounts, linux object and process.oomScoreAdj ask of a
 * new container, applied in its mount namespace after its /dev is made,
 * in runc's order: the tmpfs mounts made (their folders too), each with
 * its propagation; the devices made (mknod, owner, mode; one already there is
 * kept, as runc keeps it), the root's propagation, the sysctls written
 * (/proc/sys/KEY with '.' as '/'), the read-only paths bound read-only
 * onto themselves, the masked paths covered (a folder by an empty
 * read-only tmpfs, anything else by /dev/null), the root made read-only
 * with AGENT_LNX_F_ROOT_RO, and the process's oom_score_adj (the agent
 * gives every other command 0).  A path that is not there is skipped, as
 * runc skips it; any other failure is an ERROR with op AGENT_OP_LINUX
 * and the command never runs.  The VM is the
 * boundary: a sysctl or device node changes the guest, never the host. */
#define AGENT_EXEC_F_LINUX     0x80u
#define AGENT_LNX_F_ROOT_RO    0x1u
#define AGENT_LNX_F_OOM        0x2u
#define AGENT_LNX_F_ALL        (AGENT_LNX_F_ROOT_RO | AGENT_LNX_F_OOM)
/* A tmpfs mount's flags: MS_RDONLY, NOSUID, NODEV, NOEXEC, SYNCHRONOUS,
 * DIRSYNC, NOATIME, NODIRATIME, RELATIME, STRICTATIME, as <sys/mount.h>
 * numbers them. */
#define AGENT_LNX_TMPFS_FLAGS  (0x1u | 0x2u | 0x4u | 0x8u | 0x10u | 0x80u | 0x400u | 0x800u | \
                                0x200000u | 0x1000000u)
enum {
    AGENT_LNX_PROP_SHARED = 1, AGENT_LNX_PROP_SLAVE, AGENT_LNX_PROP_PRIVATE,
    AGENT_LNX_PROP_UNBINDABLE, AGENT_LNX_PROP_RSHARED, AGENT_LNX_PROP_RSLAVE,
    AGENT_LNX_PROP_RPRIVATE, AGENT_LNX_PROP_RUNBINDABLE, AGENT_LNX_PROP_LAST = AGENT_LNX_PROP_RUNBINDABLE
};
#define AGENT_EXEC_F_ALL   (AGENT_EXEC_F_STDIN | AGENT_EXEC_F_TTY | AGENT_EXEC_F_NO_NEW_PRIVS | \
                            AGENT_EXEC_F_CAPS | AGENT_EXEC_F_SCRIPT | AGENT_EXEC_F_KEEP | \
                            AGENT_EXEC_F_CONTAINER | AGENT_EXEC_F_LINUX)

/* CONTAINER_END payload (host -> agent; since version 15): the name,
 * NUL-terminated, the whole payload (the rules of EXEC's container
 * section).  The agent SIGKILLs the container's PID 1 (the kernel then
 * kills the rest of its PID namespace) and waits for it to be gone (at
 * most AGENT_CTR_END_WAIT_MS), unmounts its root (a busy one is
 * detached), and removes its record: DONE, after which the host may take
 * the root's disk away; or ERROR (op CONTAINER): ESRCH when NAME has no
 * record, ETIMEDOUT when its PID 1 outlived the wait (the record stays;
 * send it again). */
#define AGENT_CTR_END_WAIT_MS  5000

/* ATTACH payload (16 bytes):
 *   0 u32 pid      the kept command's, as STARTED gave it
 *   4 u32 zero
 *   8 u64 have     output bytes (STDOUT and STDERR payloads together)
 *                  the host received of it so far
 * ATTACHED payload (24 bytes):
 *   0  u32 pid
 *   4  u32 zero
 *   8  u64 from    the output offset the stream goes on at: have, or
 *                  more when what is missing is no longer kept (the
 *                  difference is lost), never less
 *   16 u64 stdin   STDIN payload bytes the agent took from the host in
 *                  all (what the host sent past it never arrived)
 * After ATTACHED the conversation goes on as after STARTED: the output
 * from `from` on, EXIT. */
#define AGENT_ATTACH_SIZE   16
#define AGENT_ATTACHED_SIZE 24

/* WINSIZE payload (4 bytes; host -> agent while a command runs):
 *   0 u16 rows
 *   2 u16 cols
 * With a terminal (AGENT_EXEC_F_TTY) the agent sets it on the master
 * (TIOCSWINSZ), and the kernel sends SIGWINCH to the terminal's
 * foreground process group; without one, or before STARTED or after
 * EXIT, it is ignored, as SIGNAL is. */
#define AGENT_WINSIZE_SIZE 4

/* FILE_PUT payload:
 *   0  u32 mode     permission bits (& 07777 applied; file created as root)
 *   4  u32 root_len 0, or the path is a root folder and a name beneath it
 *                   (AGENT_ROOT_LEN below)
 *   8  u64 size     exact byte count the FILE_DATA chunks will carry
 *                   (<= AGENT_MAX_FILE); FILE_END with a different total
 *                   fails the put and removes the file
 *   16 path, NUL-terminated, the rest of the payload (<= AGENT_MAX_PATH) */
#define AGENT_FILE_PUT_FIXED 16

/* root_len (FILE_PUT, MKDIR, SYMLINK): a folder of many entries (a tar the
 * host extracts) is written one entry at a time, and guest code may have
 * planted symlinks in it.  With root_len n > 0, path[0, n) is the root
 * folder (resolved as usual; path[n - 1] is '/') and path[n, ...) a
 * relative name the agent resolves beneath it with no symlink and no ".."
 * at all (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS; ELOOP/EXDEV
 * otherwise); an existing non-folder at the last name is replaced, not
 * written through.  With 0 the path is used as it is (a symlink is
 * followed, an existing file is truncated in place). */

/* MKDIR payload:
 *   0  u32 mode     permission bits (& 07777); a folder that exists already
 *                   is fine and keeps its mode
 *   4  u32 root_len as for FILE_PUT
 *   8  path, NUL-terminated, the rest of the payload */
#define AGENT_MKDIR_FIXED 8

/* SYMLINK payload:
 *   0  u32 root_len as for FILE_PUT
 *   4  path, NUL-terminated: the link to make (an existing non-folder
 *      there is replaced)
 *      target, NUL-terminated, 1..AGENT_MAX_PATH bytes: what it points at,
 *      stored as given (never resolved by the agent) */
#define AGENT_SYMLINK_FIXED 4

/* RENAME payload (since version 11):
 *   0  u32 flags    AGENT_RENAME_F_*; unknown bits are an error
 *   4  from, NUL-terminated: absolute, 2..AGENT_MAX_PATH bytes with its NUL
 *      to,   NUL-terminated: the same rules
 * rename(2) of from to to, as the kernel does it: a file or link at `to`
 * is replaced (with AGENT_RENAME_F_NOREPLACE: EEXIST instead), an empty
 * folder at `to` is replaced by a folder, links are moved, not followed.
 * Neither may be "/" (EBUSY). */
#define AGENT_RENAME_FIXED      4
#define AGENT_RENAME_F_NOREPLACE 0x1u
#define AGENT_RENAME_F_ALL      AGENT_RENAME_F_NOREPLACE

/* REMOVE payload (since version 11):
 *   0  u32 flags    AGENT_REMOVE_F_*; unknown bits are an error
 *   4  path, NUL-terminated: absolute, 2..AGENT_MAX_PATH bytes with its NUL
 * A file, link (never followed) or empty folder goes; with
 * AGENT_REMOVE_F_RECURSIVE a folder goes with everything it holds, each
 * folder opened beneath its parent's fd with no symlink followed, at most
 * AGENT_REMOVE_MAX_DEPTH folders deep (ELOOP past it: what was removed
 * stays removed).  "/" is refused (EBUSY); ENOENT when nothing is there. */
#define AGENT_REMOVE_FIXED       4
#define AGENT_REMOVE_F_RECURSIVE 0x1u
#define AGENT_REMOVE_F_ALL       AGENT_REMOVE_F_RECURSIVE
#define AGENT_REMOVE_MAX_DEPTH   256

/* CHOWN payload (since version 11):
 *   0  u32 uid      the new owner; 0xffffffff leaves it (as chown(2))
 *   4  u32 gid      the new group; 0xffffffff leaves it
 *   8  path, NUL-terminated: absolute, 2..AGENT_MAX_PATH bytes with its NUL
 * lchown: a link itself is changed, never what it points at. */
#define AGENT_CHOWN_FIXED 8
#define AGENT_CHOWN_KEEP  0xffffffffu

/* ENTRY payload (agent -> host):
 *   0  u32 kind     AGENT_ENTRY_FILE/DIR/SYMLINK/OTHER (lstat's)
 *   4  u32 mode     permission bits (st_mode & 07777)
 *   8  u64 size     st_size
 *   16 i64 mtime    seconds since the epoch
 *   24 u32 uid      st_uid (since version 11)
 *   28 u32 gid      st_gid (since version 11)
 *   32 name,   NUL-terminated: one path component (1..AGENT_MAX_NAME
 *              bytes, no '/', not "." or ".."), or "" for STAT's answer
 *      target, NUL-terminated: a symlink's target (1.. bytes), "" for any
 *              other kind
 * The two strings fill the rest of the payload exactly.  LIST sends its
 * entries in readdir order, "." and ".." left out. */
#define AGENT_ENTRY_FIXED 32
#define AGENT_MAX_NAME    255
#define AGENT_ENTRY_FILE    0u
#define AGENT_ENTRY_DIR     1u
#define AGENT_ENTRY_SYMLINK 2u
#define AGENT_ENTRY_OTHER   3u /* a device, fifo or socket */

/* RESEED payload (AGENT_RESEED_SIZE bytes), sent before an EXEC:
 *   0  u64 realtime_ns  the host's CLOCK_REALTIME
 *   8  32 bytes         from the host's getrandom()
 * The agent credits the bytes to the guest's entropy pool, reseeds its
 * CRNG and sets the guest's wall clock: VMs restored from one snapshot
 * must not share random state or think it is still snapshot time.  The
 * agent answers RESEEDED once both are done, or ERROR with the errno of
 * the step that failed (op AGENT_OP_RESEED: the CRNG, the clock is then
 * left alone; AGENT_OP_CLOCK: the clock).  The host sends its EXEC only
 * after RESEEDED, and gives up (no command) on an ERROR or on no answer
 * within its bound. */
#define AGENT_RESEED_SIZE 40
#define AGENT_RESEED_SEED 32

/* CREDENTIALS payload (host -> agent; the host's credential broker keeps
 * the secrets, the guest sees only placeholders and must trust the CA of
 * the host proxy that swaps them in):
 *   0  u32 envc       0..AGENT_CRED_MAX_ENVS
 *   4  u32 env_bytes  bytes of the env strings, NULs included
 *                     (<= AGENT_CRED_MAX_ENV_BYTES)
 *   8  env: envc NUL-terminated "NAME=VALUE" strings, exactly env_bytes
 *      bytes; NAME is [A-Za-z_][A-Za-z0-9_]*, 1..AGENT_CRED_MAX_NAME
 *      bytes, each NAME once; VALUE is printable ASCII without space
 *      (0x21..0x7e), 1..AGENT_CRED_MAX_VALUE bytes
 *      pem: the CA certificate as PEM text, the rest of the payload,
 *      0..AGENT_CRED_MAX_PEM bytes: printable ASCII (0x20..0x7e), '\n'
 *      and '\r' only, starting with AGENT_CRED_PEM_BEGIN when not empty
 * As for EXEC, every section's end is known before it is walked, and
 * anything else is rejected.  Each CREDENTIALS replaces what the previous
 * one installed; envc 0 with no PEM clears it all.  The agent (trust.c)
 * keeps its state in files, not in its memory (one process per
 * connection):
 *   AGENT_TRUST_CA      the PEM (0644)
 *   AGENT_TRUST_BUNDLE  the image's own CA bundle, then the PEM (0644)
 *   AGENT_TRUST_ENV     the env entries, and with a PEM the AGENT_TRUST_VARS
 *                       below (root, 0600)
 * and appends the PEM to the image's /etc/ssl/certs/ca-certificates.crt
 * when there is one (its pristine copy under AGENT_TRUST_DIR, so a second
 * CREDENTIALS or a clear starts from the original).  Every later EXEC gets
 * the entries of AGENT_TRUST_ENV after its own env, except those whose
 * NAME its own env has: the request's own variable wins, and a command
 * sees each name once.  Answer: DONE, or ERROR (op FILE) with the errno
 * of the step that failed. */
#define AGENT_CRED_FIXED         8
#define AGENT_CRED_MAX_ENVS      64
#define AGENT_CRED_MAX_ENV_BYTES (64 * 1024)
#define AGENT_CRED_MAX_NAME      128
#define AGENT_CRED_MAX_VALUE     4096
#define AGENT_CRED_MAX_PEM       (16 * 1024)
#define AGENT_CRED_MAX_PAYLOAD   (AGENT_CRED_FIXED + AGENT_CRED_MAX_ENV_BYTES + \
                                  AGENT_CRED_MAX_PEM)
#define AGENT_CRED_PEM_BEGIN     "-----BEGIN CERTIFICATE-----"
#define AGENT_TRUST_DIR    "/run/airlock"
#define AGENT_TRUST_CA     AGENT_TRUST_DIR "/ca.crt"
#define AGENT_TRUST_BUNDLE AGENT_TRUST_DIR "/ca-bundle.crt"
#define AGENT_TRUST_ENV    AGENT_TRUST_DIR "/env"
/* With a PEM, the variables that point TLS clients at it: OpenSSL (and
 * Python's ssl), requests, curl take a whole bundle; Node adds to its own. */
#define AGENT_TRUST_VARS { "SSL_CERT_FILE=" AGENT_TRUST_BUNDLE, \
                           "REQUESTS_CA_BUNDLE=" AGENT_TRUST_BUNDLE, \
                           "CURL_CA_BUNDLE=" AGENT_TRUST_BUNDLE, \
                           "NODE_EXTRA_CA_CERTS=" AGENT_TRUST_CA }

/* MOUNT payload (host -> agent; `--mount HOSTDIR:GUESTDIR[:ro|:rw]`,
 * docs/mounts.md: the host made HOSTDIR into an ext4 disk and attached it
 * as virtio-blk disk number `device`, read-only for ro, under a
 * copy-on-write overlay for rw):
 *   0  u32 device   1..AGENT_MOUNT_MAX_DEVICE: /dev/vd[a + device] (disk 0
 *                   is the root; the host adds disks in slot order, which
 *                   is the order the guest's kernel names them)
 *   4  u32 flags    AGENT_MOUNT_F_*; unknown bits are an error
 *   8  path, NUL-terminated, the rest of the payload: the guest folder,
 *      2..AGENT_MOUNT_MAX_PATH bytes with its NUL; absolute, no empty, "."
 *      or ".." component, no '/' at its end, not "/" and not in /proc,
 *      /sys or /dev (the agent's own mounts; agent_mount_path_ok)
 * The agent makes the folder and its missing parents (0755, root's), each
 * component opened beneath the one before with no symlink (ELOOP) and no
 * "..", and mounts the disk there as ext4 with nosuid and nodev, and
 * read-only with AGENT_MOUNT_F_RO.  Answer: DONE, or ERROR (op MOUNT)
 * with the errno of the step that failed (ENOENT or ENOTBLK: no such
 * disk). */
#define AGENT_MOUNT_FIXED      8
#define AGENT_MOUNT_MAX_PATH   1024
#define AGENT_MOUNT_MAX_DEVICE 7
#define AGENT_MOUNT_F_RO       0x1u
#define AGENT_MOUNT_F_ALL      AGENT_MOUNT_F_RO

/* WATCH payload (host -> agent; the sandbox API's GET .../watch):
 *   0  u32 flags    AGENT_WATCH_F_*; unknown bits are an error
 *   4  path, NUL-terminated, the rest of the payload: absolute, 2..
 *      AGENT_MAX_PATH bytes with its NUL (a symlink there is followed)
 * The agent watches the path with inotify: a folder's entries (with
 * AGENT_WATCH_F_RECURSIVE its subfolders' too, those made later
 * included: each new one is watched, then read, and what it holds by
 * then is reported as created, so a file made in a folder just made is
 * not missed, though it may be reported twice), or a file itself.  It answers
 * DONE once the watch is set up (ERROR, op FILE, with inotify's errno:
 * ENOENT when the path does not exist), then EVENT for each change, until
 * the host closes the connection (the agent drops its inotify fd) or the
 * path itself is removed, moved away or unmounted: its EVENT, then DONE;
 * the connection then takes the next request.  Any frame from the host
 * while it watches ends the connection.
 * Bounds: at most AGENT_WATCH_MAX_DIRS folders are watched (past it, one
 * OVERFLOW naming each folder left out); the frames wait for the host in
 * a queue of AGENT_WATCH_QUEUE bytes, and events that find it full are
 * dropped and reported as one OVERFLOW (no path) at the place they were
 * lost, as the kernel's own IN_Q_OVERFLOW is: a loss is never silent. */
#define AGENT_WATCH_FIXED       4
#define AGENT_WATCH_F_RECURSIVE 0x1u
#define AGENT_WATCH_F_ALL       AGENT_WATCH_F_RECURSIVE
#define AGENT_WATCH_MAX_DIRS    8192
#define AGENT_WATCH_QUEUE       (128 * 1024)

/* EVENT payload (agent -> host):
 *   0  u32 kind     AGENT_EVENT_*
 *   4  u32 flags    AGENT_EVENT_F_DIR: the entry is a folder (never with
 *                   OVERFLOW)
 *   8  path, NUL-terminated: the watched path as sent (without a trailing
 *      '/', "/" kept), then "/" and the names below it, or that path itself
 *      (its own change, or its end); "" only for an OVERFLOW
 *      to,   NUL-terminated: a RENAME's destination when it stayed inside
 *      the watch (then no CREATE follows for it), else ""; "" for every
 *      other kind
 * The two strings fill the rest of the payload exactly; each is absolute
 * (or empty as allowed) and under AGENT_MAX_PATH bytes.  inotify's events
 * map as: IN_CREATE and an IN_MOVED_TO from outside -> CREATE; IN_MODIFY
 * -> WRITE; IN_DELETE, and IN_DELETE_SELF or IN_UNMOUNT of the path ->
 * REMOVE; IN_MOVED_FROM (paired with its IN_MOVED_TO by cookie when there
 * is one) and IN_MOVE_SELF of the path -> RENAME; IN_ATTRIB (mode, owner,
 * times, link count) -> CHMOD; IN_Q_OVERFLOW -> OVERFLOW. */
#define AGENT_EVENT_FIXED    8
#define AGENT_EVENT_CREATE   0u
#define AGENT_EVENT_WRITE    1u
#define AGENT_EVENT_REMOVE   2u
#define AGENT_EVENT_RENAME   3u
#define AGENT_EVENT_CHMOD    4u
#define AGENT_EVENT_OVERFLOW 5u
#define AGENT_EVENT_F_DIR    0x1u

/* SIGNAL payload (4 bytes): 0 u32 signal number, 1..64, in the low 8
 * bits, ORed with AGENT_SIGNAL_F_* (other bits: an error).  Sent while a
 * command runs, it goes to the command's process group, as a terminal's
 * ^C goes to its foreground group; with AGENT_SIGNAL_F_PROCESS (since
 * version 14) to the command's process alone, as runc's `kill` reaches a
 * container's init and not its children; to the init of a PID
 * namespace (EXEC's AGENT_PIDNS_NEW), which the kernel shields from a
 * signal it has no handler for, one sent before its handler is set (a
 * shell's `trap` a moment after its execve) is held until it catches it,
 * for a few seconds at most (guest/agent/sig_hold.c).  Before STARTED or
 * after EXIT it is ignored (the command is not there to get it). */
#define AGENT_SIGNAL_SIZE 4
#define AGENT_SIGNAL_F_PROCESS 0x100u

/* READY payload (8 bytes):
 *   0 u32 version    the agent's AGENT_VERSION
 *   4 u32 features   0 for now */
#define AGENT_READY_SIZE 8

/* STARTED payload (4 bytes):  0 u32 pid  (in the guest; informational) */
#define AGENT_STARTED_SIZE 4

/* EXIT payload (12 bytes):
 *   0 u32 kind    AGENT_EXIT_CODE or AGENT_EXIT_SIGNAL
 *   4 u32 value   exit code 0..255, or signal number 1..64
 *   8 u32 flags   AGENT_EXIT_F_TIMED_OUT: the agent killed it on timeout */
#define AGENT_EXIT_SIZE 12
#define AGENT_EXIT_CODE   0u
#define AGENT_EXIT_SIGNAL 1u
#define AGENT_EXIT_F_TIMED_OUT 0x1u

/* ERROR payload (8 bytes):
 *   0 u32 code    a Linux errno value (1..4095): ENOENT from exec means
 *                 "not found" (host exit 127), others "cannot run" (126)
 *   4 u32 op      which step failed, AGENT_OP_* */
#define AGENT_ERROR_SIZE 8
enum agent_op {
    AGENT_OP_PROTO  = 0, /* the request itself was refused */
    AGENT_OP_SPAWN  = 1, /* pipe/fork in the agent */
    AGENT_OP_RLIMIT = 2, /* setrlimit */
    AGENT_OP_CRED   = 3, /* setgroups/setgid/setuid, capabilities, no_new_privs */
    AGENT_OP_CHDIR  = 4,
    AGENT_OP_EXEC   = 5, /* execve after the PATH search */
    AGENT_OP_FILE   = 6, /* FILE_PUT / FILE_GET / the folder requests
                          * (RENAME, REMOVE, CHOWN too) /
                          * CREDENTIALS on the guest side */
    AGENT_OP_RESEED = 7, /* RNDADDENTROPY / RNDRESEEDCRNG */
    AGENT_OP_CLOCK  = 8, /* clock_settime */
    AGENT_OP_MOUNT  = 9, /* MOUNT: the folder, the device or mount(2) */
    AGENT_OP_CONTAINER = 10, /* a named container's steps (EXEC's container
                              * section, CONTAINER_END; since version 15) */
    AGENT_OP_LINUX  = 11, /* EXEC's linux section (since version 16) */
    AGENT_OP_MAX    = 11,
};

#endif
