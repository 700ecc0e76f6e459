/* EXEC's pidns (proto.h): an OCI container's first process as PID 1 of a
 * PID namespace of its own, and the container's later commands in that
 * namespace too, as runc runs them.  The namespace is entered by the
 * connection's process just before it forks the command (unshare and
 * setns take effect for children only), and the new PID 1 is recorded in
 * a file, as the agent keeps all state across connections (trust.c).
 * The command also gets a mount namespace whose /proc shows its own PID
 * namespace (a /proc of the agent's would show the agent as PID 1), and
 * later commands join that one too. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/agent.h"

static long joined; /* the recorded PID 1 a JOIN entered, for its child */

int agent_pidns_enter(uint32_t pidns)
{
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

int agent_pidns_child(uint32_t pidns)
{
    if (pidns == AGENT_PIDNS_NEW) {
        if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
            return errno;
        return 0;
    }
    if (pidns != AGENT_PIDNS_JOIN)
        return 0;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/ns/mnt", joined);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ESRCH;
    int rc = setns(fd, CLONE_NEWNS) ? errno : 0;
    close(fd);
    return rc;
}

void agent_pidns_record(uint32_t pidns, pid_t pid)
{
    if (pidns != AGENT_PIDNS_NEW)
        return;
    mkdir("/run", 0755);
    mkdir(AGENT_TRUST_DIR, 0755);
    FILE *f = fopen(AGENT_PIDNS_FILE, "we");
    if (f) {
        fprintf(f, "%d\n", (int)pid);
        fclose(f);
    }
}
