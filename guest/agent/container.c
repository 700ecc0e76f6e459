/* A pod's containers in one VM (proto.h, AGENT_EXEC_F_CONTAINER and
 * CONTAINER_END): each named, with mount and PID namespaces of its own,
 * all sharing the VM's network and UTS namespaces.  As pidns.c does for
 * the VM's single container, the connection's process enters the PID
 * namespace before it forks the command, and the child makes its mount
 * namespace; a NEW's root disk is mounted before that, in the agent's own
 * mount namespace, so the host's file requests reach the container's
 * root at AGENT_CTR_DIR/NAME/root.  Each container's state is a folder of
 * files (the agent keeps none in memory across connections):
 *   AGENT_CTR_DIR/NAME/       made by NEW (mkdir: two NEWs of one name
 *                             cannot both win), removed by CONTAINER_END
 *   AGENT_CTR_DIR/NAME/root   the root disk's mount point
 *   AGENT_CTR_DIR/NAME/pid    "PID INO": PID 1 and its PID namespace's
 *                             inode, so a JOIN never enters the namespace
 *                             of another process that got the pid later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/openat2.h>

#include "guest/agent/agent.h"
#include "guest/agent/beneath.h"

/* What this process did for the request it serves: a NEW that fails is
 * undone (agent_ctr_record with pid 0), and only by the process that made
 * it, never one that found the name taken. */
static struct {
    int made;    /* NAME's folder is ours */
    int mounted; /* and the root disk mounted on its root */
    long joined; /* JOIN: the PID 1 whose mount namespace the child enters */
} ctr;

/* AGENT_CTR_DIR/NAME[/what]; the name was checked by the decoder. */
static void ctr_path(char *buf, size_t cap, const char *name, const char *what)
{
    snprintf(buf, cap, "%s/%s%s%s", AGENT_CTR_DIR, name, what ? "/" : "", what ? what : "");
}

static void sleep_ms(long ms)
{
    nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000}, NULL);
}

/* The first line of a small sysfs file, trailing whitespace cut: its
 * length, or -1. */
static int read_line(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n < 0)
        return -1;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\0'))
        n--;
    buf[n] = '\0';
    return (int)n;
}

/* /dev/X for the block device whose serial is `serial` and whose size is
 * not 0: 1 found, 0 not (yet). */
static int find_disk(const char *serial, char *dev, size_t cap)
{
    DIR *d = opendir("/sys/block");
    struct dirent *e;
    int found = 0;
    if (!d)
        return 0;
    while (!found && (e = readdir(d))) {
        char path[300], val[64];
        /* kernel names only ([a-z0-9]): nothing to steer a path */
        if (e->d_name[0] == '.' || strspn(e->d_name, "abcdefghijklmnopqrstuvwxyz0123456789") !=
                                       strlen(e->d_name))
            continue;
        snprintf(path, sizeof(path), "/sys/block/%s/serial", e->d_name);
        if (read_line(path, val, sizeof(val)) < 0 || strcmp(val, serial))
            continue;
        snprintf(path, sizeof(path), "/sys/block/%s/size", e->d_name);
        if (read_line(path, val, sizeof(val)) <= 0 || !strcmp(val, "0"))
            continue;
        snprintf(dev, cap, "/dev/%s", e->d_name);
        found = 1;
    }
    closedir(d);
    return found;
}

/* The root disk at AGENT_CTR_DIR/NAME/root, mounted as an imported
 * image's root is (switch_root.c).  The host fills a spare slot and the
 * guest's virtio_blk sees the new capacity a moment later: the request
 * may come first, so the disk gets AGENT_CTR_DISK_WAIT_MS to show up.
 * 0 or an errno (ENODEV: no such disk in time). */
static int mount_root(const char *name, const char *serial)
{
    char root[sizeof(AGENT_CTR_DIR) + AGENT_CTR_MAX_NAME + 8], dev[300];
    struct stat st;
    ctr_path(root, sizeof(root), name, "root");
    if (mkdir(root, 0755))
        return errno;
    for (int waited = 0; !find_disk(serial, dev, sizeof(dev)); waited += 20) {
        if (waited >= AGENT_CTR_DISK_WAIT_MS)
            return ENODEV;
        sleep_ms(20);
    }
    if (stat(dev, &st))
        return errno;
    if (!S_ISBLK(st.st_mode))
        return ENOTBLK;
    if (mount(dev, root, "ext4", 0, "noinit_itable"))
        return errno;
    ctr.mounted = 1;
    return 0;
}

/* "PID INO" of NAME's record, and the PID namespace fd of that PID 1 when
 * it is still the one recorded: the fd, or -1 (no record, or gone). */
static int open_record(const char *name, long *pid)
{
    char path[sizeof(AGENT_CTR_DIR) + AGENT_CTR_MAX_NAME + 8], buf[64];
    unsigned long long ino;
    struct stat st;
    ctr_path(path, sizeof(path), name, "pid");
    if (read_line(path, buf, sizeof(buf)) <= 0 || sscanf(buf, "%ld %llu", pid, &ino) != 2 ||
        *pid <= 1)
        return -1;
    snprintf(path, sizeof(path), "/proc/%ld/ns/pid", *pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && (fstat(fd, &st) || st.st_ino != ino)) {
        close(fd); /* the pid is another process's now */
        fd = -1;
    }
    return fd;
}

int agent_ctr_enter(const struct agent_exec_req *r)
{
    char dir[sizeof(AGENT_CTR_DIR) + AGENT_CTR_MAX_NAME + 8];
    memset(&ctr, 0, sizeof(ctr));
    if (r->pidns == AGENT_PIDNS_JOIN) {
        int fd = open_record(r->ctr_name, &ctr.joined);
        if (fd < 0)
            return ESRCH;
        int rc = setns(fd, CLONE_NEWPID) ? errno : 0;
        close(fd);
        return rc;
    }
    mkdir("/run", 0755);
    mkdir(AGENT_TRUST_DIR, 0755);
    mkdir(AGENT_CTR_DIR, 0700);
    ctr_path(dir, sizeof(dir), r->ctr_name, NULL);
    if (mkdir(dir, 0700))
        return errno; /* EEXIST: the name is taken until CONTAINER_END */
    ctr.made = 1;
    int rc = r->ctr_serial && *r->ctr_serial ? mount_root(r->ctr_name, r->ctr_serial) : 0;
    if (!rc && unshare(CLONE_NEWPID))
        rc = errno;
    if (rc)
        agent_ctr_record(r, 0);
    return rc;
}

int agent_mkdirs(char *path)
{
    for (char *s = strchr(path + 1, '/');; s = strchr(s + 1, '/')) {
        if (s)
            *s = '\0';
        int e = mkdir(path, 0755) && errno != EEXIST ? errno : 0;
        if (s)
            *s = '/';
        if (e || !s)
            return e;
    }
}

/* A bind's source as the agent sees it (called before the root moves):
 * a clone of its mount (open_tree), read-only with AGENT_BIND_F_RO.  A
 * missing source is made as a folder for everyone (an emptyDir that the
 * pod's containers share).  No symlink on the way is followed: guest code
 * must not steer a bind to another container's root.  fd or -errno. */
static int bind_tree(const struct agent_bind *b)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    char self[32];
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, b->source, &how, sizeof(how));
    if (fd < 0 && errno == ENOENT && (fd = agent_mkdirs_beneath(b->source)) >= 0) {
        snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
        chmod(self, 0777); /* past the umask, as a pod's emptyDir is */
    }
    if (fd < 0)
        return fd == -1 ? -errno : fd;
    int tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
    int e = errno;
    close(fd);
    if (tree < 0)
        return -e;
    struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
    if ((b->flags & AGENT_BIND_F_RO) &&
        mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof(ro))) {
        e = errno;
        close(tree);
        return -e;
    }
    return tree;
}

/* Puts the clone `tree` at its target in the container, made when missing
 * (a folder, or an empty file for a file).  The target is opened first and
 * the mount goes onto that very fd; one that resolves into a /proc or
 * /sys (an image's link) is refused.  0 or an errno. */
static int bind_put(int tree, const char *target)
{
    char path[AGENT_CTR_MAX_PATH];
    struct stat st;
    struct statfs fs;
    snprintf(path, sizeof(path), "%s", target);
    if (fstat(tree, &st))
        return errno;
    int e = 0;
    char *slash = strrchr(path, '/');
    if (slash != path) {
        *slash = '\0';
        e = agent_mkdirs(path);
        *slash = '/';
    }
    if (!e && S_ISDIR(st.st_mode) && mkdir(path, 0755) && errno != EEXIST)
        e = errno;
    int fd;
    if (!e && !S_ISDIR(st.st_mode) &&
        (fd = open(path, O_WRONLY | O_CREAT | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0644)) >= 0)
        close(fd); /* an existing file is left as it is (no O_TRUNC) */
    if (e)
        return e;
    struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS};
    fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
    if (fd < 0)
        return errno;
    if (fstatfs(fd, &fs))
        e = errno;
    else if (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC)
        e = EPERM;
    else if (move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH))
        e = errno;
    close(fd);
    return e;
}

/* The container's root as the root: the old one detached, so nothing of
 * the VM's (its disks, the agent's /run, the other containers) is left
 * in reach.  0 or an errno. */
static int pivot(const char *name)
{
    char root[sizeof(AGENT_CTR_DIR) + AGENT_CTR_MAX_NAME + 8];
    ctr_path(root, sizeof(root), name, "root");
    /* pivot_root(".", "."): the old root is stacked on the new one and
     * then detached, with no folder of the image's needed for it. */
    if (chdir(root) || syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) ||
        chdir("/"))
        return errno;
    /* What an image may lack; a folder already there is fine. */
    static const char *const dirs[] = {"/proc", "/dev", "/sys", "/tmp"};
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
        if (mkdir(dirs[i], 0755) && errno != EEXIST)
            return errno;
    /* A /tmp of its own, as the agent's tmpfs /tmp is the single
     * container's (main.c): an image's /tmp is hidden as it is there. */
    return mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") ? errno : 0;
}

int agent_ctr_child(const struct agent_exec_req *r)
{
    if (r->pidns == AGENT_PIDNS_JOIN)
        return agent_pidns_join_mnt(ctr.joined);
    int trees[AGENT_CTR_MAX_BINDS], pts, sys, rc;
    /* Private: the container's mounts stay its own, and the agent's later
     * ones (another container's root) never show up in it. */
    if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
        return errno;
    /* Everything that comes from the agent's mounts is taken now, while
     * its paths still lead there; the fds are CLOEXEC. */
    if ((rc = agent_pidns_trees(&pts, &sys)))
        return rc;
    for (uint32_t i = 0; i < r->nbinds; i++)
        if ((trees[i] = bind_tree(&r->binds[i])) < 0)
            return -trees[i];
    if (r->ctr_serial && *r->ctr_serial && (rc = pivot(r->ctr_name)))
        return rc;
    if ((rc = agent_pidns_dev(pts, sys)))
        return rc;
    for (uint32_t i = 0; i < r->nbinds; i++)
        if ((rc = bind_put(trees[i], r->binds[i].target)))
            return rc;
    return 0;
}

void agent_ctr_record(const struct agent_exec_req *r, pid_t pid)
{
    char path[sizeof(AGENT_CTR_DIR) + AGENT_CTR_MAX_NAME + 8];
    struct stat st;
    if (r->pidns != AGENT_PIDNS_NEW || !ctr.made)
        return;
    if (pid > 0) {
        snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
        if (stat(path, &st) == 0) {
            ctr_path(path, sizeof(path), r->ctr_name, "pid");
            FILE *f = fopen(path, "we");
            if (f) {
                fprintf(f, "%d %llu\n", (int)pid, (unsigned long long)st.st_ino);
                fclose(f);
            }
        }
        ctr.made = 0;
        return;
    }
    /* The command never started: nothing of the NEW stays behind. */
    if (ctr.mounted) {
        ctr_path(path, sizeof(path), r->ctr_name, "root");
        umount2(path, MNT_DETACH);
    }
    ctr_path(path, sizeof(path), r->ctr_name, "root");
    rmdir(path);
    ctr_path(path, sizeof(path), r->ctr_name, NULL);
    rmdir(path);
    memset(&ctr, 0, sizeof(ctr));
}

/* SIGKILL to the recorded PID 1 (the kernel kills the rest of its PID
 * namespace and reaps them before PID 1 counts as exited) and the wait
 * for it, through a pidfd: 0 or an errno. */
static int kill_pid1(const char *name)
{
    long pid;
    int ns = open_record(name, &pid);
    if (ns < 0)
        return 0; /* nothing runs (or it never started) */
    int pfd = pidfd_open((pid_t)pid, 0);
    close(ns);
    if (pfd < 0)
        return errno == ESRCH ? 0 : errno;
    int rc = 0;
    if (pidfd_send_signal(pfd, SIGKILL, NULL, 0) && errno != ESRCH)
        rc = errno;
    struct pollfd p = {.fd = pfd, .events = POLLIN};
    if (!rc && poll(&p, 1, AGENT_CTR_END_WAIT_MS) == 0)
        rc = ETIMEDOUT;
    close(pfd);
    return rc;
}

/* Unmounts NAME's root: a busy one (a mount of another namespace still
 * going away) gets a moment, then is detached.  0 or an errno. */
static int unmount_root(const char *path)
{
    for (int i = 0; i < 50; i++) {
        if (!umount2(path, UMOUNT_NOFOLLOW) || errno == EINVAL || errno == ENOENT)
            return 0; /* EINVAL: not a mount (no disk, or gone) */
        if (errno != EBUSY)
            return errno;
        sleep_ms(20);
    }
    return umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) ? errno : 0;
}

static int ctr_end(const char *name)
{
    char path[sizeof(AGENT_CTR_DIR) + AGENT_CTR_MAX_NAME + 8];
    struct stat st;
    ctr_path(path, sizeof(path), name, NULL);
    if (lstat(path, &st) || !S_ISDIR(st.st_mode))
        return ESRCH;
    int rc = kill_pid1(name);
    if (rc)
        return rc;
    ctr_path(path, sizeof(path), name, "root");
    if ((rc = unmount_root(path)))
        return rc;
    if (rmdir(path) && errno != ENOENT)
        return errno;
    ctr_path(path, sizeof(path), name, "pid");
    if (unlink(path) && errno != ENOENT)
        return errno;
    ctr_path(path, sizeof(path), name, NULL);
    return rmdir(path) ? errno : 0;
}

int agent_do_ctr_end(struct aconn *c, const struct agent_msg *m)
{
    int e = ctr_end(m->u.ctr_end.name);
    return e ? aconn_send_error(c, e, AGENT_OP_CONTAINER) : aconn_send(c, AGENT_DONE, NULL, 0);
}
