#include "vmm/sandbox/vm_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/agent_conn.h"
#include "vmm/util/spawner.h"
#include "guest/agent/proto.h"

/* ---- the launcher thread ---- */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    bool busy, done;
    char *const *argv;
    int log_fd, control_fd;
    const int *extra;
    unsigned nextra;
    pid_t result;
} job = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false, NULL, -1, -1, NULL, 0, 0};
static pid_t daemon_pid;

/* In the child: async-signal-safe calls only (the daemon has threads). */
static void child(char *const argv[], int log_fd, int null_fd, int control_fd, const int *extra,
                  unsigned nextra)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != daemon_pid)
        _exit(125); /* the daemon is already gone */
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (dup2(null_fd, 0) < 0 || dup2(null_fd, 1) < 0 || dup2(log_fd, 2) < 0)
        _exit(125);
    /* The control socket at its fixed number, kept across the exec. */
    if (control_fd >= 0 && (control_fd == VM_PROC_CONTROL_FD
                                ? fcntl(control_fd, F_SETFD, 0)
                                : dup2(control_fd, VM_PROC_CONTROL_FD)) < 0)
        _exit(125);
    /* The extra fds at VM_PROC_EXTRA_FD on, by way of numbers above them
     * all, so no dup2 lands on one not yet moved. */
    int high[VM_PROC_MAX_EXTRA];
    for (unsigned i = 0; i < nextra; i++)
        if ((high[i] = fcntl(extra[i], F_DUPFD_CLOEXEC, VM_PROC_EXTRA_FD + VM_PROC_MAX_EXTRA)) < 0)
            _exit(125);
    for (unsigned i = 0; i < nextra; i++)
        if (dup2(high[i], VM_PROC_EXTRA_FD + (int)i) < 0)
            _exit(125);
    execv("/proc/self/exe", argv);
    _exit(125);
}

static pid_t spawn_now(char *const argv[], int log_fd, int control_fd, const int *extra,
                       unsigned nextra)
{
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0)
        return -errno;
    pid_t pid = fork();
    if (pid == 0)
        child(argv, log_fd, null_fd, control_fd, extra, nextra);
    int e = errno;
    close(null_fd);
    return pid < 0 ? -e : pid;
}

static void *launcher(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&job.lock);
    for (;;) {
        while (!job.busy || job.done)
            pthread_cond_wait(&job.cv, &job.lock);
        job.result = spawn_now(job.argv, job.log_fd, job.control_fd, job.extra, job.nextra);
        job.done = true;
        pthread_cond_broadcast(&job.cv);
    }
    return NULL;
}

int vm_proc_launcher_start(void)
{
    daemon_pid = getpid();
    pthread_t t;
    int e = pthread_create(&t, NULL, launcher, NULL);
    if (!e)
        pthread_detach(t);
    return -e;
}

/* Through the daemon's spawner (vmm/util/spawner.h): the same layout of
 * fds, made by a process outside the daemon's seccomp filter. */
static pid_t spawn_by_spawner(char *const argv[], int log_fd, int control_fd, const int *extra,
                              unsigned nextra)
{
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0)
        return -errno;
    int fds[3 + 1 + VM_PROC_MAX_EXTRA] = {null_fd, null_fd, log_fd};
    uint8_t target[3 + 1 + VM_PROC_MAX_EXTRA] = {0, 1, 2};
    unsigned n = 3;
    if (control_fd >= 0)
        fds[n] = control_fd, target[n++] = VM_PROC_CONTROL_FD;
    for (unsigned i = 0; i < nextra; i++)
        fds[n] = extra[i], target[n++] = (uint8_t)(VM_PROC_EXTRA_FD + i);
    pid_t pid = spawner_spawn(SPAWN_SELF, SPAWN_NEW_PGRP, argv, fds, target, n, NULL);
    close(null_fd);
    return pid;
}

pid_t vm_proc_spawn(char *const argv[], int log_fd, int control_fd, const int *extra,
                    unsigned nextra)
{
    if (nextra > VM_PROC_MAX_EXTRA)
        return -E2BIG;
    if (spawner_running())
        return spawn_by_spawner(argv, log_fd, control_fd, extra, nextra);
    pthread_mutex_lock(&job.lock);
    while (job.busy)
        pthread_cond_wait(&job.cv, &job.lock);
    job.busy = true;
    job.done = false;
    job.argv = argv;
    job.log_fd = log_fd;
    job.control_fd = control_fd;
    job.extra = extra;
    job.nextra = nextra;
    pthread_cond_broadcast(&job.cv);
    while (!job.done)
        pthread_cond_wait(&job.cv, &job.lock);
    pid_t pid = job.result;
    job.busy = false;
    pthread_cond_broadcast(&job.cv);
    pthread_mutex_unlock(&job.lock);
    return pid;
}

/* ---- reaching the agent ---- */

int vm_proc_dial(const char *sock)
{
    return vm_proc_dial_port(sock, AGENT_VSOCK_PORT);
}

int vm_proc_dial_port(const char *sock, uint32_t port)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof(a.sun_path))
        return -ENAMETOOLONG;
    strcpy(a.sun_path, sock);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    /* The handshake is two short lines; the VM answers within its own
     * 3 s bound or not at all. */
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char line[32];
    int n = snprintf(line, sizeof(line), "CONNECT %u\n", port);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        send(fd, line, (size_t)n, MSG_NOSIGNAL) != n) {
        int e = errno;
        close(fd);
        return -e;
    }
    size_t len = 0;
    while (len < sizeof(line)) {
        ssize_t r = recv(fd, line + len, 1, 0);
        if (r != 1)
            break;
        if (line[len++] == '\n') {
            if (len > 3 && !memcmp(line, "OK ", 3)) {
                struct timeval none = {0};
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
                return fd;
            }
            break;
        }
    }
    close(fd);
    return -ECONNREFUSED; /* the agent does not listen (yet) */
}

int vm_proc_ended(pid_t pid, int *status)
{
    int st;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) {
        if (status)
            *status = st;
        return 1;
    }
    return r < 0 && errno == ECHILD;
}

/* RESEED on the agent connection fd, which is closed. */
static int reseed(int fd, char *err, size_t errlen)
{
    uint8_t seed[AGENT_RESEED_SEED];
    char why[256];
    const char *bad = getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)
                          ? "getrandom failed"
                          : agent_reseed_now(fd, seed, why, sizeof(why));
    close(fd);
    if (bad) {
        snprintf(err, errlen, "%s", bad);
        return -EIO;
    }
    return 0;
}

int vm_proc_wait_ready(pid_t pid, const char *sock, unsigned timeout_ms, int *status, char *err,
                       size_t errlen)
{
    int64_t deadline = agent_mono_ms() + timeout_ms;
    int fd = -1;
    while (fd < 0) {
        if (vm_proc_ended(pid, status)) {
            snprintf(err, errlen, "the sandbox's VM ended before its agent answered");
            return -ECHILD;
        }
        if (agent_mono_ms() > deadline) {
            snprintf(err, errlen, "the sandbox's agent did not answer within %u s",
                     timeout_ms / 1000);
            return -ETIMEDOUT;
        }
        fd = vm_proc_dial(sock);
        if (fd < 0)
            usleep(20000);
    }
    return reseed(fd, err, errlen);
}

int vm_proc_reseed(const char *sock, char *err, size_t errlen)
{
    int fd = vm_proc_dial(sock);
    if (fd < 0) {
        snprintf(err, errlen, "the sandbox's agent does not answer: %s", strerror(-fd));
        return fd;
    }
    return reseed(fd, err, errlen);
}

void vm_proc_stop(pid_t pid, unsigned grace_ms)
{
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    int64_t deadline = agent_mono_ms() + grace_ms;
    while (agent_mono_ms() < deadline) {
        if (vm_proc_ended(pid, NULL))
            return;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}
