#include "vmm/jail/detach.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/util/exit_codes.h"
#include "vmm/jail/seccomp.h"

static int status_fd = -1; /* child's end of the status pipe */
static int null_fd = -1;   /* /dev/null, opened early: the jail forbids open() later */

static void parent_exit_from_child(pid_t child, const struct detach_helper *h)
{
    int ws;
    while (waitpid(child, &ws, 0) < 0 && errno == EINTR)
        ;
    int status = WIFEXITED(ws) ? WEXITSTATUS(ws) : EXIT_AIRLOCK_ERROR;
    if (h && h->finish)
        status = h->finish(h->finish_opaque, status);
    if (h && h->done)
        h->done(h->opaque, true);
    if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSYS) {
        static const char msg[] = "airlock: the monitor made a syscall off its seccomp allowlist and "
                                  "was killed (a bug; --seccomp trap names the syscall)\n";
        (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
    }
    _exit(status);
}

/* The signals the parent takes from its signalfd (blocked before the
 * fork, so the child starts with them blocked too). */
static void parent_signals(sigset_t *set, const struct detach_helper *h)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    if (h && h->winch)
        sigaddset(set, SIGWINCH);
}

static void parent_wait(pid_t child, int rfd, const struct detach_helper *h)
{
    sigset_t set;
    parent_signals(&set, h);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    if (h && h->start)
        h->start(h->finish_opaque);
    /* Outside the jail and as the caller, this process could do much: from
     * here it may only wait, forward signals, dial --vsock-uds sockets,
     * name complete --copy-out files and clean up (vmm/jail/seccomp.c, the
     * "detach" list), and with a --copy-out unpack a folder's tar beside
     * its HOST (the "copyout" list). */
    int e = seccomp_apply(h && h->finish_unpacks ? SECCOMP_COPYOUT : SECCOMP_DETACH);
    if (e) {
        fprintf(stderr, "airlock: cannot install the seccomp filter of the waiting parent: %s\n",
                strerror(-e));
        kill(child, SIGKILL);
        parent_exit_from_child(child, h);
    }
    /* A negative fd is skipped by poll: no signalfd, no helper socket. */
    struct pollfd fds[3] = {{.fd = rfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN},
                            {.fd = h ? h->sock[0] : -1, .events = POLLIN}};
    for (;;) {
        if (poll(fds, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            parent_exit_from_child(child, h);
        }
        if (fds[2].revents && h->serve(h->opaque, fds[2].fd) < 0)
            fds[2].fd = -1;
        if (fds[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof(si)) != sizeof(si))
                continue;
            if (si.ssi_signo == SIGWINCH)
                h->winch(h->finish_opaque); /* only in the set with a winch */
            else
                kill(child, (int)si.ssi_signo);
        }
        if (fds[0].revents) {
            uint8_t status;
            if (read(rfd, &status, 1) == 1) {
                int st = h && h->finish ? h->finish(h->finish_opaque, status) : status;
                if (h && h->done)
                    h->done(h->opaque, false);
                _exit(st); /* the child tears down on its own */
            }
            parent_exit_from_child(child, h); /* ended before reporting */
        }
    }
}

void detach_watch_parent(void)
{
    if (status_fd < 0)
        return;
    /* If the parent dies (even by SIGKILL), the VM must not outlive it.
     * Had it died before the prctl, the pipe has no reader left: asked
     * through the pipe, not getppid(), which is 0 in a new PID namespace. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    struct pollfd alive = {.fd = status_fd};
    if (poll(&alive, 1, 0) < 0 || (alive.revents & POLLERR))
        _exit(EXIT_AIRLOCK_ERROR);
}

int detach_start(const struct detach_helper *h)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    /* Blocked before the fork: the parent reads them from a signalfd, the
     * child from its own (cmd_boot sets it up). */
    sigset_t set, old;
    parent_signals(&set, h);
    pthread_sigmask(SIG_BLOCK, &set, &old);
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
        if (h && h->sock[1] >= 0)
            close(h->sock[1]);
        parent_wait(pid, p[0], h);
    }
    close(p[0]);
    if (h && h->sock[0] >= 0)
        close(h->sock[0]);
    status_fd = p[1];
    detach_watch_parent();
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
