/* The guest agent's internal interface: one connection's state and the
 * request handlers (guest/agent/{main,conn,exec,pty,files,dirs,reseed,trust,watch}.c). */
#ifndef AIRLOCK_GUEST_AGENT_AGENT_H
#define AIRLOCK_GUEST_AGENT_AGENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vmm/agent_client/agent_client.h"

/* One connection to the host: the shared reader (vmm/agent_client/agent_client.h)
 * and its buffer. */
struct aconn {
    struct agent_reader rd;
    uint8_t rbuf[64 * 1024];
};

/* Serves one connection until the host closes it or breaks the protocol;
 * runs in its own process (forked per connection). */
void agent_serve(int fd);

/* 0 or -errno; the frame is sent whole (blocking). */
int aconn_send(struct aconn *c, uint16_t type, const void *payload, size_t len);
int aconn_send_error(struct aconn *c, int code, uint32_t op);

/* Handlers: 0 when the connection can go on, -errno to drop it. */
int agent_do_exec(struct aconn *c, const struct agent_msg *m);
/* ATTACH: hands this connection to the kept command it names (exec.c,
 * keep.h); the process then serves no more. */
int agent_do_attach(struct aconn *c, const struct agent_msg *m);
int agent_do_file_put(struct aconn *c, const struct agent_msg *m);
int agent_do_file_get(struct aconn *c, const struct agent_msg *m);
/* STAT, LIST, MKDIR, SYMLINK (dirs.c). */
int agent_do_stat(struct aconn *c, const struct agent_msg *m);
int agent_do_list(struct aconn *c, const struct agent_msg *m);
int agent_do_mkdir(struct aconn *c, const struct agent_msg *m);
int agent_do_symlink(struct aconn *c, const struct agent_msg *m);
/* RENAME, REMOVE, CHOWN (moves.c). */
int agent_do_rename(struct aconn *c, const struct agent_msg *m);
int agent_do_remove(struct aconn *c, const struct agent_msg *m);
int agent_do_chown(struct aconn *c, const struct agent_msg *m);
/* RESEED: entropy and wall time from the host (reseed.c). */
int agent_do_reseed(struct aconn *c, const struct agent_msg *m);
/* CREDENTIALS: env entries and a CA for every later command (trust.c). */
int agent_do_credentials(struct aconn *c, const struct agent_msg *m);
/* MOUNT: a host folder's disk at a guest folder (mount.c). */
int agent_do_mount(struct aconn *c, const struct agent_msg *m);
/* WATCH: a path's changes as EVENTs until the host closes or the path
 * goes (watch.c). */
int agent_do_watch(struct aconn *c, const struct agent_msg *m);
/* Adds what CREDENTIALS stored to an EXEC's env: envp[0, *envc) is the
 * request's own (AGENT_MAX_ENVS + 1 entries of room); the stored entries
 * whose NAME it does not have go after it, and envp stays NULL-terminated.
 * Call it as root, before the command's fork.  0 (nothing stored is fine),
 * -E2BIG past AGENT_MAX_ENVS or AGENT_MAX_ENV_BYTES, or -errno when the
 * stored file cannot be read or is not the agent's. */
int agent_trust_env(const char **envp, uint32_t *envc);

/* The terminal of an EXEC with AGENT_EXEC_F_TTY (pty.c).  A fresh
 * master/slave pair (CLOEXEC) of the size asked: 0 or an errno. */
int agent_pty_open(uint16_t rows, uint16_t cols, int *master, int *slave);

/* dev_links.c: /dev/fd, stdin, stdout, stderr and ptmx (-> pts/ptmx,
 * where /dev/pts has a devpts) as links; ones already there stay.  0 or
 * an errno. */
int agent_dev_links(void);

/* caps.c: EXEC's capability sets (AGENT_EXEC_F_CAPS; nothing without
 * it), in the child: the bounding set before the uid change, the others
 * after it.  0 or an errno. */
int agent_caps_bound(const struct agent_exec_req *r);
int agent_caps_set(const struct agent_exec_req *r);

/* sig_hold.c: SIGNAL with AGENT_SIGNAL_F_PROCESS for a PID namespace's
 * init (a container's process): sent now if it can take it, else held
 * until it catches it (retry each sig_hold_wait_ms while one is held;
 * -1: none). */
struct sig_hold {
    uint64_t pending; /* bit n-1: signal n */
    int64_t until;    /* CLOCK_MONOTONIC ms: dropped after */
};
void sig_hold_send(struct sig_hold *h, pid_t pid, int signo, int64_t now);
void sig_hold_retry(struct sig_hold *h, pid_t pid, int64_t now);
int sig_hold_wait_ms(const struct sig_hold *h);

/* exec_search.c: execvp's search over the command's own PATH (its
 * envp's, or the default); returns the errno to report.  ENOEXEC is
 * reported, not retried with /bin/sh. */
int agent_exec_search(const char *const *argv, const char *const *envp);

/* pidns.c: EXEC's pidns, entered before the fork (an errno, 0 when done;
 * *op the step to report it as), its mount namespace in the child, and a
 * new one's PID 1 recorded after the fork (pid 0: the command did not
 * start, and what entering made is undone).  A named container
 * (AGENT_EXEC_F_CONTAINER) goes to container.c. */
int agent_pidns_enter(const struct agent_exec_req *r, uint32_t *op);
int agent_pidns_child(const struct agent_exec_req *r);
void agent_pidns_record(const struct agent_exec_req *r, pid_t pid);
/* Clones (open_tree, CLOEXEC) of the agent's /dev/pts and /sys, taken in
 * the child's new mount namespace before its root may move; then, in the
 * root the command will have: its /proc, a container's /dev (the pts
 * clone in it) and the sys clone read-only at /sys.  0 or an errno. */
int agent_pidns_trees(int *pts, int *sys);
int agent_pidns_dev(int pts, int sys);
/* setns into the mount namespace of process pid: 0 or an errno (ESRCH
 * when it is gone). */
int agent_pidns_join_mnt(long pid);

/* Each of path's folders made when missing (0755), as a command's
 * mkdir -p would, in the calling process's root (symlinks in it followed
 * there: a container's child's root is the container's by then); path is
 * changed on the way and put back (container.c).  0 or an errno. */
int agent_mkdirs(char *path);
/* EXEC's linux section (linux_section.c): applied in the new
 * container's child after agent_pidns_child; 0 or an errno. */
int agent_lnx_apply(const struct agent_exec_req *r);

/* container.c: a pod's named containers (proto.h, AGENT_EXEC_F_CONTAINER):
 * as agent_pidns_enter/_child/_record for a request that names one. */
int agent_ctr_enter(const struct agent_exec_req *r);
int agent_ctr_child(const struct agent_exec_req *r);
void agent_ctr_record(const struct agent_exec_req *r, pid_t pid);
/* CONTAINER_END (container.c). */
int agent_do_ctr_end(struct aconn *c, const struct agent_msg *m);
/* Child, after setsid(): the slave becomes its controlling terminal, the
 * command's user owns it.  0 or an errno. */
int agent_pty_take(int slave, uint32_t uid, uint32_t gid);
/* TIOCSWINSZ on the master (best effort: a size is advice). */
void agent_pty_resize(int master, uint16_t rows, uint16_t cols);
/* The host's STDIN_EOF: the terminal's VEOF character into the master. */
void agent_pty_eof(int master);

/* Egress and inbound forwards (relay.c, proxy.c, forward.c), started by
 * PID 1 only.  Brings `lo` up (the kernel gives it 127.0.0.1): 0 or
 * -errno (-EAFNOSUPPORT on a kernel without INET). */
int agent_lo_up(void);
/* Forks the relay's supervisor, which keeps a relay process (uid 65534)
 * running: the egress proxy on 127.0.0.1:AGENT_PROXY_PORT and forwards
 * from vsock port AGENT_FORWARD_VSOCK_PORT.  0 or -errno.  Call it before
 * any fd the relay must not inherit is opened. */
int agent_relay_start(void);

/* PID 1 booted from airlock's agent disk: when the command line
 * has airlock.root=/dev/NAME, mounts that ext4 disk and makes it the root
 * (switch_root.c).  1 when it did, 0 when there is nothing to do, or
 * -errno. */
int agent_switch_root(void);

/* agent_write_all (vmm/agent_client/agent_client.h) writes a whole buffer to a pipe or
 * file; both ends of the protocol share it. */

#endif
