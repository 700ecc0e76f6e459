/* EXEC's pidns (proto.h): an OCI container's first process as PID 1 of a
 * PID namespace of its own, and the container's later commands in that
 * namespace too, as runc runs them.  The namespace is entered by the
 * connection's process just before it forks the command (unshare and
 * setns take effect for children only), and the new PID 1 is recorded in
 * a file, as the agent keeps all state across connections (trust.c). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/agent.h"

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
