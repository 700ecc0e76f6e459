/* EXEC's pidns (proto.h): an OCI container's first process as PID 1 of a
 * PID namespace of its own, and the container's later commands in that
 * namespace too, as runc runs them.  The namespace is entered by the
 * connection's process just before it forks the command (unshare and
 * setns take effect for children only), and the new PID 1 is recorded in
 * a file, as the agent keeps all state across connections (trust.c).
 * The command also gets a mount namespace whose /proc shows its own PID
 * namespace (a /proc of the agent's would show the agent as PID 1), and
 * later commands join that one too.  In it /dev and /sys are what an OCI
 * runtime gives a container (runtime-spec's default filesystems and
 * devices, in runc's order): a tmpfs /dev with null, zero, full, random,
 * urandom and tty and the usual links, the agent's devpts (so a terminal
 * the agent opened is the container's /dev/pts/N), a tmpfs /dev/shm, an
 * mqueue /dev/mqueue, and /sys read-only; the VM's disks are not in it. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "guest/agent/agent.h"

static long joined; /* the recorded PID 1 a JOIN entered, for its child */

int agent_pidns_enter(const struct agent_exec_req *r, uint32_t *op)
{
    uint32_t pidns = r->pidns;
    if (r->ctr_name) {
        *op = AGENT_OP_CONTAINER;
        return agent_ctr_enter(r);
    }
    if (!pidns)
        return 0;
    if (pidns == AGENT_PIDNS_NEW)
        return unshare(CLONE_NEWPID) ? errno : 0;
    char buf[32], path[64];
    int fd = open(AGENT_PIDNS_FILE, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ESRCH; /* no container namespace was made */
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    long pid = n > 0 ? (buf[n] = '\0', strtol(buf, NULL, 10)) : 0;
    if (pid <= 1)
        return ESRCH;
    snprintf(path, sizeof(path), "/proc/%ld/ns/pid", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return ESRCH; /* its PID 1 is gone, and the namespace with it */
    int rc = setns(fd, CLONE_NEWPID) ? errno : 0;
    close(fd);
    joined = pid;
    return rc;
}

/* The agent's mount `tree` (an open_tree clone, taken while the agent's
 * mounts were still reachable by path: a pod's container has its root
 * pivoted away from them) put at `where`: 0 or an errno. */
static int graft(int tree, const char *where)
{
    return move_mount(tree, "", AT_FDCWD, where, MOVE_MOUNT_F_EMPTY_PATH) ? errno : 0;
}

int agent_pidns_trees(int *pts, int *sys)
{
    *pts = open_tree(AT_FDCWD, "/dev/pts", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    *sys = open_tree(AT_FDCWD, "/sys", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    return *pts < 0 || *sys < 0 ? errno : 0;
}

int agent_pidns_dev(int pts, int sys)
{
    static const struct {
        const char *name;
        unsigned major, minor;
    } nodes[] = {
        {"/dev/null", 1, 3},    {"/dev/zero", 1, 5},    {"/dev/full", 1, 7},
        {"/dev/random", 1, 8},  {"/dev/urandom", 1, 9}, {"/dev/tty", 5, 0},
    };
    int rc;
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) ||
        mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_STRICTATIME, "mode=755,size=65536k"))
        return errno;
    for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
        if (mknod(nodes[i].name, S_IFCHR | 0666, makedev(nodes[i].major, nodes[i].minor)) ||
            chmod(nodes[i].name, 0666)) /* past the umask */
            return errno;
    /* The agent's devpts: a terminal it opened is the container's /dev/pts/N. */
    if (mkdir("/dev/pts", 0755))
        return errno;
    if ((rc = graft(pts, "/dev/pts")) || (rc = agent_dev_links()))
        return rc;
    if (mkdir("/dev/shm", 01777) ||
        mount("shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=65536k") ||
        mkdir("/dev/mqueue", 0755))
        return errno;
    /* A guest kernel without POSIX message queues gives no /dev/mqueue. */
    if (mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) &&
        (errno != ENODEV || rmdir("/dev/mqueue")))
        return errno;
    /* sysfs has one superblock, mounted and writable for the agent: a new
     * mount of it on /sys is refused (EBUSY), so the container gets a bind
     * of it (a clone of the agent's), made read-only (the mount, not the
     * superblock). */
    if ((rc = graft(sys, "/sys")))
        return rc;
    return mount(NULL, "/sys", NULL,
                 MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)
               ? errno
               : 0;
}

int agent_pidns_child(const struct agent_exec_req *r)
{
    if (r->ctr_name)
        return agent_ctr_child(r);
    if (r->pidns == AGENT_PIDNS_NEW) {
        int pts, sys;
        if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
            return errno;
        int rc = agent_pidns_trees(&pts, &sys);
        return rc ? rc : agent_pidns_dev(pts, sys); /* the fds go at exec (CLOEXEC) */
    }
    if (r->pidns != AGENT_PIDNS_JOIN)
        return 0;
    return agent_pidns_join_mnt(joined);
}

int agent_pidns_join_mnt(long pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/ns/mnt", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ESRCH;
    int rc = setns(fd, CLONE_NEWNS) ? errno : 0;
    close(fd);
    return rc;
}

void agent_pidns_record(const struct agent_exec_req *r, pid_t pid)
{
    if (r->ctr_name) {
        agent_ctr_record(r, pid);
        return;
    }
    if (r->pidns != AGENT_PIDNS_NEW || pid <= 0)
        return;
    mkdir("/run", 0755);
    mkdir(AGENT_TRUST_DIR, 0755);
    FILE *f = fopen(AGENT_PIDNS_FILE, "we");
    if (f) {
        fprintf(f, "%d\n", (int)pid);
        fclose(f);
    }
}
