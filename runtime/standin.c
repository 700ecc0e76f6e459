/* A container process's host stand-in; see standin.h. */
#include "runtime/standin.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent_client/agent_client.h"
#include "sandbox/vm_proc.h"
#include "util/exit_codes.h"

static int sig_pipe[2] = {-1, -1};

/* Each caught signal's number, one byte, to the relay loop. */
static void on_signal(int sig)
{
    int saved = errno;
    uint8_t b = (uint8_t)sig;
    ssize_t w = write(sig_pipe[1], &b, 1);
    (void)w;
    errno = saved;
}

/* Every catchable signal but the ones that are about the stand-in
 * itself: SIGCHLD (its VM), SIGPIPE (its own output's reader went; the
 * relay sees EPIPE), SIGWINCH (the terminal's size, not a signal for the
 * process), and the job-control stops of a terminal it may sit on. */
static int forward_signals(void)
{
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return -errno;
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigfillset(&sa.sa_mask);
    for (int s = 1; s < 32; s++) {
        if (s == SIGKILL || s == SIGSTOP || s == SIGCHLD || s == SIGPIPE || s == SIGWINCH ||
            s == SIGTTIN || s == SIGTTOU || s == SIGTSTP)
            continue;
        sigaction(s, &sa, NULL);
    }
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* The three rlimits EXEC carries itself; the others are not sent yet. */
static void set_rlimits(const struct oci_process *p, struct agent_exec_req *req)
{
    for (unsigned i = 0; i < p->nrlimits; i++) {
        const struct oci_rlimit *l = &p->rlimits[i];
        uint64_t v = l->soft; /* EXEC sets soft = hard: the soft one binds */
        if (l->resource == RLIMIT_NPROC)
            req->rlim_nproc = v;
        else if (l->resource == RLIMIT_FSIZE)
            req->rlim_fsize = v;
        else if (l->resource == RLIMIT_NOFILE)
            req->rlim_nofile = v;
    }
}

static void say(const char *fmt, const char *what, int e)
{
    char line[512];
    int n = snprintf(line, sizeof(line), fmt, what, strerror(e));
    if (n > 0) {
        ssize_t w = write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
        (void)w;
    }
}

int standin_run(const char *sock, const struct oci_process *p)
{
    if (forward_signals()) {
        say("airlock-runtime: %s: %s\n", "signals", errno);
        return EXIT_AIRLOCK_ERROR;
    }
    int fd = vm_proc_dial(sock);
    if (fd < 0) {
        say("airlock-runtime: the container's VM: %s: %s\n", "its agent does not answer", -fd);
        return EXIT_AIRLOCK_ERROR;
    }
    struct agent_exec_req req;
    agent_exec_req_init(&req);
    req.argv = p->args;
    req.argc = p->nargs;
    req.envp = p->env;
    req.envc = p->nenv;
    req.cwd = p->cwd;
    req.uid = p->uid;
    req.gid = p->gid;
    req.flags = AGENT_EXEC_F_STDIN;
    set_rlimits(p, &req);
    struct agent_exec_result res;
    int rc = agent_exec_signals(fd, &req, 1, 2, 0, sig_pipe[0], UINT64_MAX, &res);
    close(fd);
    if (rc < 0) {
        say("airlock-runtime: %s: %s\n", "the container's VM", -rc);
        return EXIT_AIRLOCK_ERROR;
    }
    if (res.error) {
        say("airlock-runtime: %s: %s\n", p->args[0], res.error);
        return res.error_op != AGENT_OP_EXEC ? EXIT_AIRLOCK_ERROR
               : res.error == ENOENT          ? EXIT_NOT_FOUND
                                              : EXIT_CANNOT_EXECUTE;
    }
    if (res.output_closed)
        return 128 + SIGPIPE;
    return res.signaled ? 128 + res.value : res.value;
}
