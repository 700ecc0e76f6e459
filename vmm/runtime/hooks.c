/* OCI hooks; see hooks.h. */
#include "vmm/runtime/hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const kind_names[OCI_HOOK_KINDS] = {
    "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop",
};

static int64_t mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Waits for pid, at most timeout_s (0: for ever), then kills it. */
static int wait_hook(pid_t pid, int timeout_s, int *status, bool *timed_out)
{
    int64_t deadline = timeout_s ? mono_ms() + (int64_t)timeout_s * 1000 : 0;
    *timed_out = false;
    for (;;) {
        pid_t r = waitpid(pid, status, deadline ? WNOHANG : 0);
        if (r == pid)
            return 0;
        if (r < 0 && errno != EINTR)
            return -errno;
        if (deadline && mono_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, status, 0);
            *timed_out = true;
            return 0;
        }
        if (deadline)
            usleep(10000);
    }
}

static int run_one(const struct oci_hook *h, const char *state, char *err, size_t cap)
{
    int in[2];
    if (pipe2(in, O_CLOEXEC) < 0)
        return snprintf(err, cap, "%s: pipe: %s", h->path, strerror(errno)), -1;
    static const char *const none[] = {NULL};
    const char *const *args = h->args && h->args[0] ? h->args : NULL;
    const char *argv0[] = {h->path, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(in[0], 0) < 0)
            _exit(127);
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        execve(h->path, (char *const *)(args ? args : argv0),
               (char *const *)(h->env ? h->env : none));
        _exit(127);
    }
    close(in[0]);
    if (pid < 0) {
        close(in[1]);
        return snprintf(err, cap, "%s: fork: %s", h->path, strerror(errno)), -1;
    }
    /* The hook may not read its stdin at all: a closed pipe is no error. */
    signal(SIGPIPE, SIG_IGN);
    size_t len = strlen(state), off = 0;
    while (off < len) {
        ssize_t w = write(in[1], state + off, len - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(in[1]);
    int status = 0;
    bool timed_out;
    int e = wait_hook(pid, h->timeout_s, &status, &timed_out);
    if (e)
        return snprintf(err, cap, "%s: %s", h->path, strerror(-e)), -1;
    if (timed_out)
        return snprintf(err, cap, "%s: timed out after %d s", h->path, h->timeout_s), -1;
    if (WIFSIGNALED(status))
        return snprintf(err, cap, "%s: killed by signal %d", h->path, WTERMSIG(status)), -1;
    if (WEXITSTATUS(status))
        return snprintf(err, cap, "%s: exit status %d", h->path, WEXITSTATUS(status)), -1;
    return 0;
}

int hooks_run(const struct oci_config *c, enum oci_hook_kind kind, const json_t *state, char *err,
              size_t cap)
{
    if (!c->nhooks[kind])
        return 0;
    char *text = json_dumps(state, JSON_COMPACT);
    if (!text)
        return snprintf(err, cap, "%s hook: out of memory", kind_names[kind]), -1;
    /* A failing poststart or poststop hook is a warning: the ones after
     * it still run (the runtime spec). */
    bool keep_going = kind == OCI_HOOK_POSTSTART || kind == OCI_HOOK_POSTSTOP;
    int rc = 0;
    for (unsigned i = 0; i < c->nhooks[kind] && (!rc || keep_going); i++) {
        char why[1024];
        if (run_one(&c->hooks[kind][i], text, why, sizeof(why)) && !rc) {
            snprintf(err, cap, "%s hook %s", kind_names[kind], why);
            rc = -1;
        }
    }
    free(text);
    return rc;
}
