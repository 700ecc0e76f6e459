/* The jail; see jail.h for what it is, docs/security.md "The jail" for why. */
#include "vmm/jail/jail.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vmm/util/parse.h"
#include "vmm/jail/fdpass.h"
#include "vmm/util/vsock_uds.h"

#define INHERITED_MAX 1024 /* fds above this that we were started with stay */
/* Room for the fds the VM process makes once jailed: the event loop's
 * epoll and signalfd, vsock connections (VSOCK_MAX_CONNS, one fd each, two
 * for an egress relay with its broker socket), pending host clients. */
#define JAIL_FD_MARGIN 1024

static unsigned char inherited[INHERITED_MAX / 8];

int jail_parse_flag(struct jail_options *j, int which, const char *val, char *err, size_t errlen)
{
    uint64_t v;
    switch (which) {
    case 0: j->mode = JAIL_ON; return 0;
    case 1: j->mode = JAIL_OFF; return 0;
    case 2:
    case 3:
        /* 0 would keep root; 4294967295 is (uid_t)-1, "no change". */
        if (parse_uint(val, 0xfffffffe, &v) || v == 0) {
            snprintf(err, errlen, "%s '%.64s': want a whole number from 1 to 4294967294",
                     which == 2 ? "--uid" : "--gid", val);
            return -EINVAL;
        }
        if (which == 2)
            j->has_uid = true, j->uid = (uint32_t)v;
        else
            j->has_gid = true, j->gid = (uint32_t)v;
        return 0;
    case 5:
    case 6:
        if (strncmp(val, CGROUP_ROOT "/", sizeof(CGROUP_ROOT)) || strstr(val, "/..") ||
            strlen(val) + 24 > sizeof(((struct cgroup *)0)->dir)) {
            snprintf(err, errlen, "%s '%.200s': want a folder under %s",
                     which == 5 ? "--cgroup-parent" : "--cgroup", val, CGROUP_ROOT);
            return -EINVAL;
        }
        *(which == 5 ? &j->cgroup_parent : &j->cgroup_join) = val;
        return 0;
    default:
        if (parse_uint(val, 100000, &v) || v == 0) {
            snprintf(err, errlen, "--cpu-quota '%.64s': want percent of one CPU, 1 to 100000", val);
            return -EINVAL;
        }
        j->cpu_quota_pct = (unsigned)v;
        return 0;
    }
}

void jail_note_inherited_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    int self = dirfd(d);
    for (struct dirent *e; (e = readdir(d));) {
        int fd = atoi(e->d_name);
        if (fd > 2 && fd != self && fd < INHERITED_MAX)
            inherited[fd / 8] |= (unsigned char)(1u << (fd % 8));
    }
    closedir(d);
}

void jail_keep_fd(int fd)
{
    if (fd > 2 && fd < INHERITED_MAX)
        inherited[fd / 8] &= (unsigned char)~(1u << (fd % 8));
}

/* ---- the parent's side ------------------------------------------------ */

/* The child asks with a port (4 bytes); we dial PATH_<port> as ourselves
 * (outside the jail, where PATH lives) and answer 0 or -errno with the
 * socket.  A port is all it can choose: the same reach it had unjailed. */
static int parent_serve(void *opaque, int sock)
{
    struct jail *j = opaque;
    uint32_t port;
    int stray;
    ssize_t n = fdpass_recv(sock, &port, sizeof(port), &stray);
    if (stray >= 0)
        close(stray);
    if (n <= 0 && n != -EMSGSIZE)
        return -1; /* the child is gone */
    int fd = n == (ssize_t)sizeof(port) ? vsock_uds_dial(j->vsock_path, port) : -EINVAL;
    int32_t rc = fd < 0 ? fd : 0;
    fdpass_send(sock, &rc, sizeof(rc), fd);
    if (fd >= 0)
        close(fd);
    return 0;
}

static void parent_done(void *opaque, bool child_gone)
{
    struct jail *j = opaque;
    if (j->remove_vsock_path)
        unlink(j->vsock_path);
    /* Back in our own PID namespace, so the cgroup helper we fork is not
     * a member of the VM's (it would die with its PID 1). */
    if (j->host_pidns >= 0)
        setns(j->host_pidns, CLONE_NEWPID);
    cgroup_remove(&j->cg, child_gone);
}

static bool jail_wanted(const struct jail_options *o)
{
    return o->mode == JAIL_ON || (o->mode == JAIL_AUTO && geteuid() == 0);
}

int jail_prepare(struct jail *j, const struct jail_options *o, const char *vsock_path,
                 char *err, size_t errlen)
{
    *j = (struct jail){.host_pidns = -1, .sock = {-1, -1}, .opt = o};
    j->helper = (struct detach_helper){.sock = {-1, -1}, .done = parent_done, .opaque = j};
    j->limit = o->cpu_quota_pct || o->cgroup_parent || o->cgroup_join || jail_wanted(o);
    if (o->cgroup_join)
        cgroup_join_name(&j->cg, o->cgroup_join);
    else if (j->limit)
        cgroup_name(&j->cg, o->cgroup_parent, getpid());
    if (!jail_wanted(o)) {
        if (o->has_uid || o->has_gid) {
            snprintf(err, errlen, "--uid/--gid set the jail's identity: %s",
                     o->mode == JAIL_OFF ? "not with --no-jail" : "add --jail (which needs root)");
            return -EINVAL;
        }
        return 0;
    }
    if (geteuid() != 0) {
        snprintf(err, errlen, "--jail needs root: its namespaces, pivot_root and uid change "
                              "need privileges, and airlock uses no setuid helper");
        return -EPERM;
    }
    j->host_pidns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
    if (j->host_pidns < 0 || unshare(CLONE_NEWPID) < 0) {
        int e = errno;
        if (o->mode == JAIL_AUTO) {
            /* Root without CAP_SYS_ADMIN (a container): say so, run as before. */
            fprintf(stderr, "airlock: warning: cannot jail the VM process (new PID namespace: %s); "
                            "running unjailed (--no-jail silences this)\n", strerror(e));
            return 0;
        }
        snprintf(err, errlen, "--jail: cannot make a PID namespace: %s", strerror(e));
        return -e;
    }
    j->active = true;
    j->uid = o->has_uid ? o->uid : JAIL_ID_BASE + (uint32_t)getpid();
    j->gid = o->has_gid ? o->gid : JAIL_ID_BASE + (uint32_t)getpid();
    if (vsock_path) {
        struct stat st;
        j->vsock_path = vsock_path;
        /* Already there: the child refuses it, and it is not ours to remove. */
        j->remove_vsock_path = lstat(vsock_path, &st) < 0;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, j->sock) < 0) {
            snprintf(err, errlen, "--jail: socketpair: %s", strerror(errno));
            return -errno;
        }
        j->helper.sock[0] = j->sock[0];
        j->helper.sock[1] = j->sock[1];
        j->helper.serve = parent_serve;
    }
    return 0;
}

/* ---- the child's side ------------------------------------------------- */

void jail_limit(struct jail *j, uint64_t guest_bytes, uint64_t extra_bytes, unsigned nthreads)
{
    if (!j->limit)
        return;
    struct cgroup_limits lim = {
        .memory_max = guest_bytes + extra_bytes + CGROUP_MONITOR_OVERHEAD,
        .cpu_pct = j->opt->cpu_quota_pct,
        .pids_max = nthreads,
    };
    /* Said by jail_enter: an input error found later is the one line. */
    if (!cgroup_enter(&j->cg, &lim, j->cg_warning, sizeof(j->cg_warning)))
        j->cg_warning[0] = 0;
}

/* Fds we were started with: whatever the caller leaked to us. */
static void close_inherited(void)
{
    for (int fd = 3; fd < INHERITED_MAX; fd++)
        if (inherited[fd / 8] & (1u << (fd % 8)))
            close(fd);
}

/* The highest fd open now: RLIMIT_NOFILE is this plus a margin. */
static int highest_fd(void)
{
    int top = 2;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 1024;
    for (struct dirent *e; (e = readdir(d));)
        if (atoi(e->d_name) > top)
            top = atoi(e->d_name);
    closedir(d);
    return top;
}

/* The environment can hold secrets (tokens, proxies): wipe its bytes and
 * make /proc/PID/environ empty, not just forget it in libc. */
static void wipe_environment(void)
{
    unsigned long start = 0, end = 0;
    FILE *f = fopen("/proc/self/stat", "re");
    char buf[1024];
    if (f && fgets(buf, sizeof(buf), f)) {
        /* Fields 50 and 51 (proc(5)); the 2nd, the name, may hold spaces. */
        char *p = strrchr(buf, ')');
        for (int field = 2; p && field < 50; field++)
            p = strchr(p + 1, ' ');
        if (p)
            sscanf(p + 1, "%lu %lu", &start, &end);
    }
    if (f)
        fclose(f);
    clearenv();
    if (start && end > start) {
        memset((void *)start, 0, end - start);
        prctl(PR_SET_MM, PR_SET_MM_ENV_END, start, 0, 0); /* needs CAP_SYS_RESOURCE: still root */
    }
}

/* An empty, read-only tmpfs as the root; the old root detached. */
static int make_root(char *err, size_t errlen)
{
    const char *at = access("/tmp", X_OK) == 0 ? "/tmp" : "/proc";
    const char *step = "mount --make-rprivate /";
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        goto fail;
    step = "mount tmpfs";
    if (mount("airlock-jail", at, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "size=16k,nr_inodes=8,mode=0555") < 0 || chdir(at) < 0)
        goto fail;
    /* pivot_root(".", "."): the old root ends up on top of the new one and
     * is detached at once (pivot_root(2), NOTES) - no directory for it. */
    step = "pivot_root";
    if (syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
        goto fail;
    step = "remount / read-only";
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
              NULL) < 0)
        goto fail;
    return 0;
fail:
    snprintf(err, errlen, "jail: %s: %s", step, strerror(errno));
    return -errno;
}

static int drop_identity(const struct jail *j, char *err, size_t errlen)
{
    if (setgroups(0, NULL) < 0 || setresgid(j->gid, j->gid, j->gid) < 0 ||
        setresuid(j->uid, j->uid, j->uid) < 0) {
        snprintf(err, errlen, "jail: cannot become uid %u gid %u: %s", j->uid, j->gid, strerror(errno));
        return -errno;
    }
    /* No core dump of guest memory, no ptrace or /proc/PID/mem by the jail
     * uid; setresuid already cleared every capability. */
    prctl(PR_SET_DUMPABLE, 0);
    detach_watch_parent(); /* the uid change cleared the parent-death signal */
    return 0;
}

static int set_limits(unsigned nthreads, int top_fd, char *err, size_t errlen)
{
    /* RLIMIT_FSIZE stays: the files the VM process writes (stdout, the
     * --console and --audit files, writable disks, cow overlays, copy-out
     * files) are all open already and bounded by their own caps; the limit
     * applies to every write offset, so it would have to be at least the
     * largest disk, or the end of an append-only audit log, and bound
     * nothing a seccomp filter without open() does not. */
    struct rlimit core = {0, 0};
    struct rlimit nproc = {nthreads, nthreads};
    rlim_t files = (rlim_t)top_fd + 1 + JAIL_FD_MARGIN;
    struct rlimit nofile = {files, files};
    const char *which = "RLIMIT_CORE";
    if (setrlimit(RLIMIT_CORE, &core) < 0)
        goto fail;
    which = "RLIMIT_NPROC";
    if (setrlimit(RLIMIT_NPROC, &nproc) < 0)
        goto fail;
    which = "RLIMIT_NOFILE";
    if (setrlimit(RLIMIT_NOFILE, &nofile) < 0)
        goto fail;
    return 0;
fail:
    snprintf(err, errlen, "jail: %s: %s", which, strerror(errno));
    return -errno;
}

int jail_enter(struct jail *j, unsigned nthreads, int *dial_sock, char *err, size_t errlen)
{
    *dial_sock = -1;
    if (j->cg_warning[0])
        fprintf(stderr, "airlock: warning: cgroup v2 not writable here (%s): no memory/cpu/pids "
                        "limits\n", j->cg_warning);
    if (!j->active)
        return 0;
    close(j->host_pidns); /* the parent's, for its way back */
    j->host_pidns = -1;
    close_inherited();
    wipe_environment();
    int top_fd = highest_fd(); /* /proc is gone once the root is */
    int e;
    if (unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET | CLONE_FS) < 0) {
        snprintf(err, errlen, "jail: new namespaces: %s", strerror(errno));
        return -errno;
    }
    sethostname("airlock", 7);
    if ((e = make_root(err, errlen)) || (e = set_limits(nthreads, top_fd, err, errlen)) ||
        (e = drop_identity(j, err, errlen)))
        return e;
    *dial_sock = j->sock[1];
    return 0;
}
