/* e2fsprogs' tools; see e2fs_tool.h. */
#include "vmm/image/e2fs_tool.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/image/image_stop.h"
#include "vmm/util/spawner.h"

/* The child's side of e2fs_tool_run(): dies with its parent (an import killed
 * mid-way leaves no mke2fs writing for minutes), then execs argv[0] from
 * PATH, else /usr/sbin, /sbin (a user's PATH on Debian has no sbin); an
 * exec's errno goes back through `report`. */
static void child_exec(char *const argv[], const char *in, int log, pid_t parent, int report)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* it died before the line above */
        _exit(127);
    int fd = open(in ? in : "/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || dup2(fd, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0) {
        int e = errno;
        (void)!write(report, &e, sizeof(e));
        _exit(127);
    }
    execvp(argv[0], argv);
    static const char *const sbin[] = {"/usr/sbin/", "/sbin/"};
    int e = errno;
    for (size_t i = 0; e == ENOENT && i < sizeof(sbin) / sizeof(sbin[0]); i++) {
        char path[64];
        snprintf(path, sizeof(path), "%s%s", sbin[i], argv[0]);
        execv(path, argv);
        e = errno;
    }
    (void)!write(report, &e, sizeof(e));
    _exit(127);
}

/* Runs argv with stdin from `in` (or /dev/null) and stdout/stderr into
 * `log` (a file kept for the error); its exit status or -errno.  A signal
 * that stops the import kills it (image_stop.h). */
/* In the daemon, through its spawner (vmm/util/spawner.h): the tool is
 * still our child, reaped here, but not under the daemon's seccomp
 * filter. */
static int run_by_spawner(char *const argv[], const char *in, int log)
{
    int fd = open(in ? in : "/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int fds[3] = {fd, log, log}, e = 0;
    static const uint8_t target[3] = {0, 1, 2};
    pid_t pid = spawner_spawn(SPAWN_TOOL, 0, argv, fds, target, 3, &e);
    close(fd);
    if (pid < 0)
        return pid;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -errno;
    if (e)
        return -e;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int e2fs_tool_run(char *const argv[], const char *in, int log)
{
    if (image_stopped())
        return -EINTR;
    if (spawner_running())
        return run_by_spawner(argv, in, log);
    int report[2];
    if (pipe2(report, O_CLOEXEC) < 0)
        return -errno;
    pid_t parent = getpid(), pid = fork();
    if (pid == 0)
        child_exec(argv, in, log, parent, report[1]);
    int e = pid < 0 ? errno : 0;
    close(report[1]);
    if (pid > 0) {
        image_stop_child(pid);
        if (image_stopped())
            kill(pid, SIGKILL);
    }
    /* The exec's errno, or nothing once the exec closed the pipe. */
    ssize_t n;
    while (pid > 0 && (n = read(report[0], &e, sizeof(e))) < 0 && errno == EINTR)
        ;
    close(report[0]);
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            e = errno;
            break;
        }
    image_stop_child(0);
    if (e)
        return -e;
    if (image_stopped())
        return -EINTR;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The last line the tool printed, for the error. */
void e2fs_tool_last_line(int log, char *out, size_t cap)
{
    char buf[4096];
    off_t end = lseek(log, 0, SEEK_END);
    off_t from = end > (off_t)sizeof(buf) - 1 ? end - (off_t)sizeof(buf) + 1 : 0;
    ssize_t n = pread(log, buf, sizeof(buf) - 1, from);
    buf[n < 0 ? 0 : n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    char *nl = strrchr(buf, '\n');
    snprintf(out, cap, "%.*s", (int)(cap > 0 ? cap - 1 : 0), nl ? nl + 1 : buf);
}
