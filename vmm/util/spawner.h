/* The spawner: a small process `airlock serve` forks before it locks
 * itself down (seccomp allowlist, capabilities dropped: vmm/jail/
 * daemon_lock.h), which forks and execs the daemon's children on its
 * request.  Filters and a dropped bounding set are inherited across fork
 * and exec, so children forked by the daemon itself would run under the
 * daemon's list: the VM processes (which need root's capabilities to jail
 * themselves, and their own lists), `airlock snapshot` for the pool, and
 * e2fsck / mkfs.ext4 for volumes.  The spawner is forked before any of
 * that and keeps the daemon's starting privileges.
 *
 * The children are made with CLONE_PARENT: they are the daemon's own
 * children, not the spawner's, so the daemon reaps them with waitpid as
 * before, and their PR_SET_PDEATHSIG follows the daemon's main thread
 * (which forked the spawner and lives as long as the daemon): `kill -9`
 * of the daemon still ends every VM.  The spawner itself dies with the
 * daemon too (PR_SET_PDEATHSIG, and EOF on its socket).
 *
 * What the spawner runs is narrowed to what the daemon spawns (the
 * `sandbox-vm` and `snapshot` verbs of /proc/self/exe, and e2fsprogs'
 * tools), so a subverted daemon cannot ask it for an arbitrary program;
 * it can still ask for a VM of its choosing, as it always could.
 *
 * Protocol: a SOCK_SEQPACKET socketpair, one request per message, the
 * child's fds along with it (SCM_RIGHTS); one reply per request. */
#ifndef AIRLOCK_UTIL_SPAWNER_H
#define AIRLOCK_UTIL_SPAWNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum spawn_prog {
    SPAWN_SELF = 1, /* /proc/self/exe, argv[1] "sandbox-vm" or "snapshot" */
    SPAWN_TOOL = 2, /* argv[0] (an e2fsprogs tool) from PATH, else /usr/sbin, /sbin */
};

#define SPAWN_NEW_PGRP 1u /* the child gets a process group of its own */

#define SPAWN_MAGIC 0x41535031u /* "ASP1" */
#define SPAWN_MAX_FDS 16        /* fds a child is handed */
#define SPAWN_MAX_TARGET 32     /* the numbers they land at: 0 .. 31 */
#define SPAWN_MAX_ARGS 512
#define SPAWN_MAX_MSG 65536 /* a request, head and arguments */

/* A request's head; its arguments follow it in the same message:
 * argc strings, each ended by a NUL, arglen bytes in all. */
struct spawn_head {
    uint32_t magic;
    uint16_t prog;  /* enum spawn_prog */
    uint16_t flags; /* SPAWN_NEW_PGRP */
    uint16_t argc;
    uint16_t nfds;  /* fds in the message's SCM_RIGHTS, in order */
    uint32_t arglen;
    uint8_t target[SPAWN_MAX_FDS]; /* the child's fd number for each */
};

/* The reply: the child's pid (or -errno when none was made), and the
 * exec's errno when it failed (the child then exits 127; reap it). */
struct spawn_reply {
    int32_t pid;
    int32_t exec_errno;
};

/* A request read back, its argv pointing into the message. */
struct spawn_parsed {
    enum spawn_prog prog;
    unsigned flags;
    unsigned nfds;
    uint8_t target[SPAWN_MAX_FDS];
    unsigned argc;
    char *argv[SPAWN_MAX_ARGS + 1]; /* NULL-ended */
};

/* Checks a request of len bytes that came with nfds fds: its head, that
 * the fds are the ones it names, distinct targets, argc strings exactly
 * filling arglen, and a program this spawner runs.  0, or -EINVAL (-E2BIG
 * for too many of something), with *why saying what was wrong.  msg is
 * not changed; out->argv points into it. */
int spawn_parse(char *msg, size_t len, unsigned nfds, struct spawn_parsed *out,
                const char **why);

/* Builds a request into buf (cap bytes): its length, or -E2BIG / -EINVAL. */
ssize_t spawn_build(char *buf, size_t cap, enum spawn_prog prog, unsigned flags,
                    char *const argv[], const uint8_t *target, unsigned nfds);

/* Forks the spawner (from the thread whose life the children's should
 * follow: the daemon's main thread), before any other thread exists.
 * 0 or -errno. */
int spawner_start(void);

/* Whether spawner_start() succeeded: spawns then go through it. */
bool spawner_running(void);

/* Has the spawner fork and exec a child with fds[i] at target[i] (every
 * other fd closed: ours are close-on-exec), with PR_SET_PDEATHSIG SIGKILL
 * and an empty signal mask.  The child's pid (our child: reap it), or
 * -errno; *exec_errno (when not NULL) is the exec's errno, or 0. */
pid_t spawner_spawn(enum spawn_prog prog, unsigned flags, char *const argv[], const int *fds,
                    const uint8_t *target, unsigned nfds, int *exec_errno);

#endif
