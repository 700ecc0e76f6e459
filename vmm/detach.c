#include "vmm/detach.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/exit_codes.h"

static int status_fd = -1; /* child's end of the status pipe */
static int null_fd = -1;   /* /dev/null, opened early: the jail forbids open() later */

static void parent_exit_from_child(pid_t child)
{
    int ws;
    while (waitpid(child, &ws, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSYS) {
        static const char msg[] = "airlock: the monitor made a syscall off its seccomp allowlist and "
                                  "was killed (a bug; --seccomp trap names the syscall)\n";
        (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
    }
    _exit(WIFEXITED(ws) ? WEXITSTATUS(ws) : EXIT_AIRLOCK_ERROR);
}

static void parent_wait(pid_t child, int rfd)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    struct pollfd fds[2] = {{.fd = rfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
    for (;;) {
        if (poll(fds, sfd >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            parent_exit_from_child(child);
        }
        if (fds[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof(si)) == sizeof(si))
                kill(child, (int)si.ssi_signo);
        }
        if (fds[0].revents) {
            uint8_t status;
            if (read(rfd, &status, 1) == 1)
                _exit(status); /* the child tears down on its own */
            parent_exit_from_child(child); /* ended before reporting */
        }
    }
}

int detach_start(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    /* Blocked before the fork: the parent reads them from a signalfd, the
     * child from its own (cmd_boot sets it up). */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        close(p[0]);
        close(p[1]);
        return -e;
    }
    if (pid > 0) {
        close(p[1]);
        parent_wait(pid, p[0]);
    }
    close(p[0]);
    status_fd = p[1];
    /* If the parent dies (even by SIGKILL), the VM must not outlive it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(EXIT_AIRLOCK_ERROR);
    null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    return 0;
}

void detach_report(int status)
{
    if (status_fd < 0)
        return;
    uint8_t b = (uint8_t)status;
    if (write(status_fd, &b, 1) < 0) {
        /* The parent is gone; PDEATHSIG ends us soon. */
    }
    close(status_fd);
    status_fd = -1;
    if (null_fd >= 0) {
        dup2(null_fd, STDIN_FILENO);
        dup2(null_fd, STDOUT_FILENO);
        dup2(null_fd, STDERR_FILENO);
        close(null_fd);
        null_fd = -1;
    }
}
