#include "vmm/sandbox/daemon_state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "vmm/util/user_dirs.h"

int daemon_state_open(const char *dir, char *err, size_t cap)
{
    static const char *const subs[] = {DAEMON_STATE_SANDBOXES, DAEMON_STATE_VOLUMES};
    char p[PATH_MAX + 32];
    int e = make_dirs(dir, 0700);
    for (size_t i = 0; !e && i < sizeof(subs) / sizeof(subs[0]); i++) {
        snprintf(p, sizeof(p), "%.4000s/%s", dir, subs[i]);
        e = make_dirs(p, 0700);
    }
    if (e) {
        snprintf(err, cap, "--state %.300s: cannot make it: %s", dir, strerror(-e));
        return -1;
    }
    snprintf(p, sizeof(p), "%.4000s/%s", dir, DAEMON_STATE_LOCK);
    int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        snprintf(err, cap, "--state %.300s: cannot open its lock: %s", dir, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        if (errno == EWOULDBLOCK)
            snprintf(err, cap, "--state %.300s: another airlock serve uses it (pid %.20s)", dir,
                     pid[0] ? pid : "unknown");
        else
            snprintf(err, cap, "--state %.300s: cannot lock it: %s", dir, strerror(errno));
        close(fd);
        return -1;
    }
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        snprintf(err, cap, "--state %.300s: cannot write its lock: %s", dir, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}
