/* The threads and hooks that drive a VM for `airlock run` (connect to
 * the agent, reseed it, run the command, copy files) and for `airlock
 * snapshot` (wait for the agent's ready mark, save the VM). */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "devices/virtio/vsock.h"
#include "vmm/util/exit_codes.h"
#include "vmm/agent_client/command_audit.h"
#include "vmm/audit/limits.h"
#include "vmm/cli/run_ctx.h"
#include "vmm/cli/run_control.h"
#include "vmm/cli/run_copy_tree.h"
#include "vmm/cli/run_report.h"
#include "vmm/jail/seccomp.h"
#include "vmm/sandbox/guest_put.h"
#include "vmm/sandbox/guest_tree.h"
#include "vmm/snapshot/snapshot_dir.h"
#include "vmm/util/printable.h"
#include "vmm/util/timings.h"

/* One attempt: a socketpair whose far end the device connects to guest
 * vsock port `port`.  Returns our end once the device said "OK", or -errno
 * (-EAGAIN: not listening yet, try again). */
static int vsock_dial(struct run_ctx *r, uint32_t port)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -errno;
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    pthread_mutex_lock(&r->vdev->transport.lock);
    int rc = virtio_vsock_connect_guest(r->vsock, &r->vdev->transport, sv[0], port);
    pthread_mutex_unlock(&r->vdev->transport.lock);
    if (rc) {
        close(sv[0]);
        close(sv[1]);
        return -EAGAIN; /* the guest's driver is not up yet */
    }
    /* "OK <port>\n" when the agent accepted; EOF when the guest reset us. */
    char line[32];
    size_t len = 0;
    while (len < sizeof(line)) {
        struct pollfd p = {.fd = sv[1], .events = POLLIN};
        if (poll(&p, 1, 5000) <= 0 || read(sv[1], line + len, 1) != 1)
            break;
        if (line[len++] == '\n')
            return strncmp(line, "OK ", 3) == 0 ? sv[1] : (close(sv[1]), -EPROTO);
    }
    close(sv[1]);
    return -EAGAIN;
}

/* A connection to the agent, waiting for it to listen (it starts as PID 1
 * while we are already running).  A try is not free for the guest: once
 * its vsock driver is up, each one is a packet the booting kernel takes an
 * interrupt for and answers with a reset.  So between tries we wait for
 * the agent's boot-timer mark, which says it listens now, and try again
 * on our own only every RUN_AGENT_RETRY_MS: that is for a guest that gives
 * no mark (a kernel without ioperm, an agent that is not PID 1).  The
 * first try is at once, and once the mark came (or the VM was restored,
 * run_started) tries are 20 ms apart.  fd or -errno. */
static int agent_connect(struct run_ctx *r)
{
    int fd = -EAGAIN;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (vm_stopping(r->vm))
            return -ECANCELED;
        fd = vsock_dial(r, AGENT_VSOCK_PORT);
        clock_gettime(CLOCK_MONOTONIC, &now);
        long waited = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
        if (fd != -EAGAIN || waited >= RUN_AGENT_WAIT_MS)
            break;
        /* Once seen, the mark stays readable: later waits skip it (poll
         * ignores a negative fd) instead of spinning.  A VM that stops
         * meanwhile ends the wait too. */
        struct pollfd p[2] = {{.fd = r->ready_seen ? -1 : r->ready_efd, .events = POLLIN},
                              {.fd = r->vm->stop_efd, .events = POLLIN}};
        if (poll(p, 2, r->ready_seen ? 20 : RUN_AGENT_RETRY_MS) > 0 && (p[0].revents & POLLIN))
            r->ready_seen = true;
    }
    if (fd < 0 && fd != -ECANCELED)
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "the guest agent did not answer on vsock port %d",
                AGENT_VSOCK_PORT);
    return fd;
}

/* A host folder's tar (packed at parse time) into the guest, with
 * `docker cp`'s rules: into GUEST under the folder's own name when GUEST
 * is a folder (or a link), as GUEST itself when it does not exist, its
 * contents into GUEST (made when missing) for HOST/.; a folder onto a
 * file fails.  0, or -errno with why. */
static ssize_t read_tar(void *opaque, void *buf, size_t len)
{
    ssize_t n;
    while ((n = read(*(const int *)opaque, buf, len)) < 0 && errno == EINTR)
        ;
    return n;
}

static int tree_in(int agent, const struct run_copy *c, char *why, size_t whylen)
{
    char dir[AGENT_MAX_PATH], top[AGENT_MAX_PATH], target[AGENT_MAX_PATH], failed[AGENT_MAX_PATH];
    const char *new_top = NULL;
    struct agent_entry e;
    if ((size_t)snprintf(dir, sizeof(dir), "%s", c->guest) >= sizeof(dir))
        return -ENAMETOOLONG;
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dir[--dl] = '\0';
    if (!c->contents) {
        int rc = agent_stat(agent, dir, &e, target);
        if (rc == -ENOENT) { /* GUEST is made: the tar's top takes its name */
            char *slash = strrchr(dir, '/');
            snprintf(top, sizeof(top), "%s", slash + 1);
            new_top = top;
            if (slash == dir)
                dir[1] = '\0'; /* "/NAME": into "/" */
            else
                *slash = '\0';
        } else if (rc) {
            return rc;
        } else if (e.kind != AGENT_ENTRY_DIR && e.kind != AGENT_ENTRY_SYMLINK) {
            snprintf(why, whylen, "cannot copy a folder onto a file");
            return -ENOTDIR;
        }
    }
    int rc = guest_put_dest(agent, dir, failed);
    if (rc) {
        char shown[600];
        snprintf(why, whylen, "%s: %s", printable(failed[0] ? failed : dir, shown, sizeof(shown)),
                 rc == -ENOTDIR ? "not a folder" : strerror(-rc));
        return rc;
    }
    struct tar_in_result res;
    if (guest_put_tar(agent, dir, new_top, read_tar, (void *)&c->fd, NULL, &res)) {
        snprintf(why, whylen, "%s%s%s", res.entry, res.entry[0] ? ": " : "",
                 res.sink_errno ? strerror(res.sink_errno) : res.why);
        return -EINVAL;
    }
    return 0;
}

/* A host file to GUEST, or into GUEST under its own name when GUEST is
 * a folder (or a link to one: "GUEST/." is a folder then). */
static int file_in(int agent, const struct run_copy *c)
{
    char path[AGENT_MAX_PATH], target[AGENT_MAX_PATH];
    struct agent_entry e;
    const char *base = strrchr(c->host, '/');
    base = base ? base + 1 : c->host;
    size_t gl = strlen(c->guest);
    while (gl > 1 && c->guest[gl - 1] == '/')
        gl--;
    if ((size_t)snprintf(path, sizeof(path), "%.*s/.", (int)gl, c->guest) >= sizeof(path))
        return -ENAMETOOLONG;
    int rc = agent_stat(agent, gl == 1 ? "/" : path, &e, target);
    if (rc == 0 && e.kind == AGENT_ENTRY_DIR && *base) {
        if ((size_t)snprintf(path, sizeof(path), "%.*s/%s", gl == 1 ? 0 : (int)gl, c->guest,
                             base) >= sizeof(path))
            return -ENAMETOOLONG;
    } else if (rc && rc != -ENOENT && rc != -ENOTDIR) {
        return rc;
    } else {
        snprintf(path, sizeof(path), "%s", c->guest);
    }
    return agent_file_put(agent, path, c->st.st_mode & 0777, c->fd, (uint64_t)c->st.st_size);
}

/* --mount: each folder's disk mounted in the guest, on a connection of
 * their own before anything else (a --copy-in to GUESTDIR lands in the
 * mounted folder, not beneath it). */
static int mount_all(struct run_ctx *r)
{
    if (!r->mounts.n)
        return 0;
    int fd = agent_connect(r);
    if (fd < 0)
        return -1;
    char why[AGENT_MOUNT_MAX_PATH + 256];
    for (unsigned i = 0; i < r->mounts.n; i++) {
        const struct mount_spec *m = &r->mounts.m[i];
        if (agent_mount(fd, m->device, m->rw ? 0 : AGENT_MOUNT_F_RO, m->guest, AGENT_MOUNT_WAIT_MS,
                        why, sizeof(why))) {
            close(fd);
            vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "%s %s: %s", m->flag, m->arg, why);
            return -1;
        }
    }
    close(fd);
    return 0;
}

/* --volume: what the guest wrote to a read-write volume is in its page
 * cache until the kernel writes it back; the VM is stopped, not shut
 * down, so the agent syncs first.  A guest that does not answer in time
 * (the command wedged it) is said on stderr: what it did not write is
 * lost, and the next attach's e2fsck repairs the rest. */
static void sync_volumes(struct run_ctx *r)
{
    bool any = false;
    for (unsigned i = 0; i < r->mounts.n; i++)
        any = any || (r->mounts.m[i].volume && r->mounts.m[i].rw);
    if (!any)
        return;
    char why[256];
    int fd = agent_connect(r);
    if (fd >= 0 && !agent_sync(fd, AGENT_SYNC_WAIT_MS, why, sizeof(why))) {
        close(fd);
        return;
    }
    if (fd >= 0)
        close(fd);
    dprintf(r->err_fd, "airlock: --volume: %s\n", fd >= 0 ? why : "the guest agent is gone");
}

/* Each copy on its own connection: one request, one answer. */
static int copy_in(struct run_ctx *r, const struct run_copy *c)
{
    int in = c->fd;
    char why[1300] = "";
    int fd = agent_connect(r);
    int rc = fd < 0 ? fd : c->tree ? tree_in(fd, c, why, sizeof(why)) : file_in(fd, c);
    if (fd >= 0)
        close(fd);
    close(in);
    if (rc && fd >= 0)
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "--copy-in %s: %s", c->arg, why[0] ? why : strerror(-rc));
    return rc ? -1 : 0;
}

static int to_file(void *opaque, const void *buf, size_t len)
{
    return agent_write_all(*(const int *)opaque, buf, len);
}

/* GUEST walked: a folder goes into the file as a tar (bounded as a file
 * copy is, and in entries and names), anything else as the file itself. */
static const struct guest_tree_limits copy_out_limits = {
    RUN_COPY_TREE_MAX_ENTRIES, RUN_COPY_OUT_MAX, RUN_COPY_TREE_MAX_NAMES,
};

static int copy_out_over(int agent, struct run_copy *c, int out, char *why, size_t whylen)
{
    struct guest_tree t;
    int rc = 0;
    if (guest_tree_walk(&t, agent, c->guest, &copy_out_limits)) {
        if (t.n || t.err == EINVAL || t.err == EFBIG || t.err == ENOMEM)
            snprintf(why, whylen, "%s", t.why); /* else GUEST's own errno says it */
        rc = -t.err;
    } else if (t.top.kind != AGENT_ENTRY_DIR) {
        rc = agent_file_get(agent, c->guest, out, RUN_COPY_OUT_MAX);
        if (!rc) /* the parent names it (vmm/cli/run_copy.h) */
            run_copy_completed(c, RUN_COPY_FILE);
    } else if (c->onto_file) {
        snprintf(why, whylen, "cannot copy a folder onto a file");
        rc = -EISDIR;
    } else if ((rc = guest_tree_write(&t, c->guest, RUN_COPY_TREE_TOP, to_file, &out))) {
        snprintf(why, whylen, "%s: the folder changed while it was copied, or the agent broke off",
                 c->guest);
    } else {
        run_copy_completed(c, RUN_COPY_TREE);
    }
    guest_tree_free(&t);
    return rc;
}

static int copy_out(struct run_ctx *r, struct run_copy *c)
{
    int out = c->fd;
    char why[1300] = "";
    if (ftruncate(out, 0) < 0) {
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "--copy-out %s: %s", c->arg, strerror(errno));
        close(out);
        return -1;
    }
    int fd = agent_connect(r);
    int rc = fd < 0 ? fd : copy_out_over(fd, c, out, why, sizeof(why));
    if (fd >= 0)
        close(fd);
    close(out);
    if (rc && fd >= 0)
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "--copy-out %s: %s", c->arg, why[0] ? why : strerror(-rc));
    return rc ? -1 : 0;
}

/* -p: the forwarder's way to the guest's forward service. */
static int forward_dial(void *opaque)
{
    return vsock_dial(opaque, AGENT_FORWARD_VSOCK_PORT);
}

/* -p's clients go to the device itself (forward_dial.attach): the
 * device reads and writes the client's TCP socket, with the forward's
 * hello sent first and the agent's answer taken off the stream. */
static int run_fwd_answer(void *opaque, const uint8_t *reply)
{
    const struct forward_attach *a = opaque;
    return a->answer(a->conn, reply);
}

static void run_fwd_ended(void *opaque, enum vsock_end how, uint64_t in, uint64_t out)
{
    struct forward_attach *a = opaque;
    enum forward_end f = how == VSOCK_END_CLOSED    ? FORWARD_END_CLOSED
                         : how == VSOCK_END_REFUSED ? FORWARD_END_REFUSED
                         : how == VSOCK_END_NO_ANSWER ? FORWARD_END_NO_ANSWER
                                                      : FORWARD_END_RESET;
    struct forward_attach copy = *a;
    free(a);
    copy.ended(copy.conn, f, in, out);
}

static int forward_attach(void *opaque, int cfd, const struct forward_attach *fa)
{
    struct run_ctx *r = opaque;
    /* The device keeps its own copy of the callbacks' opaque: ours,
     * freed when the connection ends. */
    struct forward_attach *a = malloc(sizeof(*a));
    if (!a)
        return -ENOMEM;
    *a = *fa;
    struct vsock_attach va = {
        .pre_len = fa->pre_len, .reply_len = fa->reply_len, .tag = fa->tag,
        .answer = run_fwd_answer, .ended = run_fwd_ended, .opaque = a, .moved = fa->moved,
    };
    memcpy(va.pre, fa->pre, fa->pre_len <= sizeof(va.pre) ? fa->pre_len : sizeof(va.pre));
    pthread_mutex_lock(&r->vdev->transport.lock);
    int rc = virtio_vsock_attach_guest(r->vsock, &r->vdev->transport, cfd,
                                       AGENT_FORWARD_VSOCK_PORT, &va);
    pthread_mutex_unlock(&r->vdev->transport.lock);
    if (rc)
        free(a);
    if (rc == -EBUSY)
        limit_report("vsock_conns", VSOCK_MAX_CONNS, 0,
                     "vsock connections at their cap (%u, VSOCK_MAX_CONNS): more are refused "
                     "(the guest gets RST, a host client is closed)",
                     VSOCK_MAX_CONNS);
    return rc;
}

static int forward_detach(void *opaque, uint64_t tag)
{
    struct run_ctx *r = opaque;
    pthread_mutex_lock(&r->vdev->transport.lock);
    int rc = virtio_vsock_end_attached(r->vsock, &r->vdev->transport, tag);
    pthread_mutex_unlock(&r->vdev->transport.lock);
    return rc;
}

/* -p's listeners, bound before the jail, start forwarding once the agent
 * answered (a connection before would find no forward service).  A
 * failure stops the VM: the user asked for the port. */
static int publish_ports(struct run_ctx *r)
{
    if (!r->npublish)
        return 0;
    struct forward_dial d = {.dial = forward_dial, .attach = forward_attach,
                             .detach = forward_detach, .opaque = r, .audit = &r->audit};
    int rc = forwarder_new(&d, &r->forwarder);
    for (unsigned i = 0; i < r->npublish; i++) {
        char why[200];
        struct run_publish *p = &r->publish[i];
        if (!rc)
            rc = forwarder_adopt(r->forwarder, &p->spec, p->fd, p->address, why, sizeof(why));
        else
            snprintf(why, sizeof(why), "%s", strerror(-rc));
        p->fd = -1;
        if (rc) {
            vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "-p %s: %s", p->address, why);
            return -1;
        }
    }
    return 0;
}

static void *run_thread(void *arg)
{
    struct run_ctx *r = arg;
    int e = seccomp_apply(SECCOMP_WORKER);
    if (e) {
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "cannot install the seccomp filter: %s", strerror(-e));
        return NULL;
    }
    if (mount_all(r))
        return NULL;
    for (unsigned i = 0; i < r->ncopy_in; i++)
        if (copy_in(r, &r->copy_in[i]))
            return NULL;
    int fd = agent_connect(r);
    if (fd < 0)
        return NULL;
    timings_mark(TM_CONNECTED);
    /* Entropy and wall time before the command: a restored VM shares its
     * snapshot's CRNG state and clock (proto.h, RESEED). */
    char why[256];
    if (agent_reseed_now(fd, r->seed, why, sizeof(why))) {
        /* No command in a guest whose CRNG may be its snapshot's. */
        close(fd);
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "%s", why);
        return NULL;
    }
    /* --secret: the placeholders and the VM's CA, before any command. */
    unsigned nsecrets = r->egress_cfg.secrets.n;
    if (nsecrets && agent_credentials(fd, r->secret_envp, nsecrets, r->ca_pem, r->ca_pem_len, why,
                                      sizeof(why))) {
        close(fd);
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "the guest did not take the secrets' placeholders: %s",
                why);
        return NULL;
    }
    if (publish_ports(r)) {
        close(fd);
        return NULL;
    }
    struct agent_exec_result res = {0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_report_exec(&r->audit, &r->req);
    /* With -t, the waiting parent's size records come on the signals' fd. */
    int rc = agent_exec_signals(fd, &r->req, r->out_fd, r->err_fd,
                                r->with_stdin ? STDIN_FILENO : -1, r->tty.win_r, r->max_output,
                                &res);
    close(fd);
    /* The ports go with the command, as a container's go with its
     * process: nothing is served by a VM about to stop. */
    forwarder_free(r->forwarder);
    r->forwarder = NULL;
    timings_mark(TM_COMMAND_DONE);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    run_report_exit(&r->audit, &r->req, r->max_output, rc, &res,
                    (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
    if (rc) {
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "lost the guest agent: %s", strerror(-rc));
        return NULL;
    }
    /* An agent that did not end the command in time would not answer a
     * copy either; with our output gone (EPIPE) the command may still run,
     * so its files are not copied half-written: the VM goes, as a pipeline's
     * writer goes on SIGPIPE.  A command that never started (127, 126)
     * made nothing to copy: its status stays, and no host file appears. */
    bool copy = !res.host_timeout && !res.output_closed && !res.error;
    for (unsigned i = 0; i < r->ncopy_out && copy; i++)
        if (copy_out(r, &r->copy_out[i]))
            return NULL;
    sync_volumes(r);
    egress_stop(&r->egress); /* their end records are written before we report */
    char why_not[AGENT_MAX_PATH + 128] = "";
    command_start_error(&r->req, &res, "-w", why_not, sizeof(why_not));
    vm_stop(r->vm, agent_result_status(&res), "%s", why_not);
    return NULL;
}

static int run_serve_port(void *opaque, uint32_t port)
{
    struct run_ctx *r = opaque;
    return port == AGENT_EGRESS_VSOCK_PORT ? egress_accept(&r->egress) : -ENOENT;
}

static void run_agent_ready(void *opaque)
{
    struct run_ctx *r = opaque;
    uint64_t one = 1;
    if (write(r->ready_efd, &one, sizeof(one)) < 0) {
        /* the counter cannot overflow from one write; nothing to do */
    }
}

/* airlock snapshot: once the agent listens (its boot-timer mark; the
 * guest has run only its kernel and the agent), pause and save the VM,
 * then stop it.  The files were opened before the jail (run_before_jail). */
static void *snapshot_thread(void *arg)
{
    struct run_ctx *r = arg;
    int e = seccomp_apply(SECCOMP_SNAPSHOT);
    if (e) {
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "cannot install the seccomp filter: %s", strerror(-e));
        return NULL;
    }
    struct pollfd p = {.fd = r->ready_efd, .events = POLLIN};
    int n;
    while ((n = poll(&p, 1, RUN_AGENT_WAIT_MS)) < 0 && errno == EINTR)
        ;
    if (n != 1) {
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR,
                "the guest agent never said it listens (no boot-timer mark in %d s): no snapshot",
                RUN_AGENT_WAIT_MS / 1000);
        return NULL;
    }
    char err[384];
    e = session_snapshot_save(r->session, &r->snap_out, err, sizeof(err));
    if (e) {
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "snapshot %s: %s (the directory holds an unfinished "
                "snapshot; remove it)", r->snap_dir, err);
        return NULL;
    }
    timings_mark(TM_COMMAND_DONE);
    /* write(), not stdio: glibc's first printf to a terminal or /dev/null
     * asks isatty() through an ioctl this thread's filter refuses. */
    char line[PATH_MAX + 80];
    int len = snprintf(line, sizeof(line), "airlock: snapshot of a %llu MiB, %u-vCPU VM in %s\n",
                     (unsigned long long)r->session->opt.mem_mib, r->session->opt.cpus,
                     r->snap_dir);
    size_t out = len < 0 ? 0 : (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1;
    if (out && write(STDOUT_FILENO, line, out) < 0) {
        /* nobody to tell: the snapshot itself is complete */
    }
    vm_stop(r->vm, 0, "%s", "");
    return NULL;
}

static int run_started(void *opaque, struct boot_session *s, struct vm *vm,
                       struct virtio_vsock *vsock, struct vdev *vdev)
{
    struct run_ctx *r = opaque;
    r->session = s;
    r->vm = vm;
    r->vsock = vsock;
    r->vdev = vdev;
    /* A restored agent listened before the snapshot was taken and gives
     * no mark again: dial it at the 20 ms pace from the start (its first
     * try usually meets the transport reset the restore announces). */
    if (s->opt.restore)
        r->ready_seen = true;
    if (r->mode == RUN_SNAPSHOT)
        return pthread_create(&r->thread, NULL, snapshot_thread, r);
    int e = egress_start(&r->egress);
    if (!e && r->mode == RUN_HOLD && r->control_fd >= 0)
        e = run_control_start(r);
    if (e || r->mode == RUN_HOLD) /* held: the agent's commands come through --vsock-uds */
        return e;
    return pthread_create(&r->thread, NULL, run_thread, r);
}

static int run_before_jail(void *opaque, struct boot_session *s, char *err, size_t errlen)
{
    struct run_ctx *r = opaque;
    for (unsigned i = 0; i < r->npublish; i++) {
        /* In our own network namespace, before the jail leaves it. */
        struct run_publish *p = &r->publish[i];
        p->fd = forward_listen(&p->spec, p->address, sizeof(p->address), err, errlen);
        if (p->fd < 0)
            return p->fd;
        if (!p->spec.host_port) /* the port the kernel picked: the user needs it */
            fprintf(stderr, "airlock: guest port %u published on %s\n", p->spec.guest_port,
                    p->address);
    }
    if (r->mode != RUN_SNAPSHOT)
        return 0;
    return snap_dir_create(r->snap_dir, s->disks, s->opt.ndisks, r->snap_zlib, &r->snap_out, err, errlen);
}

/* The waiting parent, outside the jail: -t's terminal gets its mode back;
 * each complete --copy-out gets its name; a copy that could not be named
 * makes the run airlock's error. */
static int run_parent_finish(void *opaque, int status)
{
    struct run_ctx *r = opaque;
    run_tty_restore(&r->tty); /* first: the copies below may take a while */
    for (unsigned i = 0; i < r->ncopy_out; i++)
        if (run_copy_finish(&r->copy_out[i]) < 0)
            status = EXIT_AIRLOCK_ERROR;
    return status;
}

static void run_parent_start(void *opaque)
{
    run_tty_start(&((struct run_ctx *)opaque)->tty);
}

static void run_parent_winch(void *opaque)
{
    run_tty_winch(&((struct run_ctx *)opaque)->tty);
}

const struct session_hook run_hook_template = {
    .started = run_started, .serve_port = run_serve_port, .before_jail = run_before_jail,
    .agent_ready = run_agent_ready, .parent_finish = run_parent_finish,
    .parent_start = run_parent_start, .parent_winch = run_parent_winch,
};
