/* A container process's host stand-in; see standin.h. */
#include "vmm/runtime/standin.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "vmm/runtime/container_linux.h"
#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/command_defaults.h"
#include "vmm/jail/fdpass.h"
#include "vmm/sandbox/vm_proc.h"
#include "vmm/util/exit_codes.h"

static int sig_pipe[2] = {-1, -1};

int standin_console(const char *socket_path, const struct oci_process *p, char *err, size_t cap)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0) {
        snprintf(err, cap, "a terminal: %s", strerror(errno));
        if (master >= 0)
            close(master);
        return -1;
    }
    char name[64];
    if (ptsname_r(master, name, sizeof(name))) {
        snprintf(err, cap, "a terminal: %s", strerror(errno));
        close(master);
        return -1;
    }
    int slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave >= 0 && (p->rows || p->cols)) {
        struct winsize ws = {.ws_row = (unsigned short)p->rows, .ws_col = (unsigned short)p->cols};
        ioctl(slave, TIOCSWINSZ, &ws);
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc = slave < 0 || s < 0 || strlen(socket_path) >= sizeof(a.sun_path) ? -1 : 0;
    if (!rc) {
        strcpy(a.sun_path, socket_path);
        rc = connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 ||
                     fdpass_send(s, name, strlen(name), master)
                 ? -1
                 : 0;
    }
    if (rc) {
        snprintf(err, cap, "--console-socket %.300s: %s", socket_path, strerror(errno));
        if (slave >= 0)
            close(slave);
        slave = -1;
    }
    if (s >= 0)
        close(s);
    close(master);
    return slave;
}

int standin_take_console(int slave, char *err, size_t cap)
{
    /* The host terminal only carries bytes: the guest's pty does the
     * terminal's work (echo, line editing, \n to \r\n), once. */
    struct termios t;
    if (ioctl(slave, TIOCSCTTY, 0) < 0 || tcgetattr(slave, &t) < 0) {
        snprintf(err, cap, "the console: %s", strerror(errno));
        return -1;
    }
    cfmakeraw(&t);
    if (tcsetattr(slave, TCSANOW, &t) < 0 || dup2(slave, 0) < 0 || dup2(slave, 1) < 0 ||
        dup2(slave, 2) < 0) {
        snprintf(err, cap, "the console: %s", strerror(errno));
        return -1;
    }
    if (slave > 2)
        close(slave);
    return 0;
}

/* SIGWINCH: the terminal's new size as a WINSIZE record (agent_client.h). */
static void on_winch(int sig)
{
    (void)sig;
    int saved = errno;
    struct winsize ws;
    if (ioctl(0, TIOCGWINSZ, &ws) == 0) {
        uint8_t rec[AGENT_SIGQ_WINSIZE_LEN];
        agent_sigq_winsize(rec, ws.ws_row, ws.ws_col);
        ssize_t w = write(sig_pipe[1], rec, sizeof(rec));
        (void)w;
    }
    errno = saved;
}

/* Each caught signal's number, one byte, to the relay loop: for the
 * guest process alone, or its group when `kill --all` queued it. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved = errno;
    bool all = si && si->si_code == SI_QUEUE && si->si_value.sival_int == STANDIN_SIG_ALL;
    uint8_t b = (uint8_t)(sig | (all ? 0 : AGENT_SIGQ_PROCESS));
    ssize_t w = write(sig_pipe[1], &b, 1);
    (void)w;
    errno = saved;
}

/* Every catchable signal but the ones that are about the stand-in
 * itself: SIGCHLD (its VM), SIGPIPE (its own output's reader went; the
 * relay sees EPIPE), SIGWINCH (the terminal's size, not a signal for the
 * process), and the job-control stops of a terminal it may sit on. */
static int forward_signals(bool tty)
{
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return -errno;
    struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_RESTART | SA_SIGINFO};
    sigfillset(&sa.sa_mask);
    for (int s = 1; s < 32; s++) {
        if (s == SIGKILL || s == SIGSTOP || s == SIGCHLD || s == SIGPIPE || s == SIGWINCH ||
            s == SIGTTIN || s == SIGTTOU || s == SIGTSTP)
            continue;
        sigaction(s, &sa, NULL);
    }
    signal(SIGPIPE, SIG_IGN);
    if (tty) {
        struct sigaction wa = {.sa_handler = on_winch, .sa_flags = SA_RESTART};
        sigfillset(&wa.sa_mask);
        sigaction(SIGWINCH, &wa, NULL);
    }
    return 0;
}

/* The process's groups, rlimits, capabilities, terminal and no_new_privs
 * as EXEC's process section (guest/agent/proto.h). */
static void process_section(const struct oci_process *p, struct agent_exec_req *req)
{
    for (unsigned i = 0; i < p->ngroups && i < AGENT_MAX_GROUPS; i++)
        req->groups[req->ngroups++] = p->groups[i];
    for (unsigned i = 0; i < p->nrlimits && req->nrlimits < AGENT_MAX_RLIMITS; i++)
        if (p->rlimits[i].resource >= 0 && p->rlimits[i].resource < AGENT_RLIMIT_NUM)
            req->rlimits[req->nrlimits++] = (struct agent_rlimit){
                (uint32_t)p->rlimits[i].resource, p->rlimits[i].soft, p->rlimits[i].hard};
    if (p->no_new_privs)
        req->flags |= AGENT_EXEC_F_NO_NEW_PRIVS;
    if (p->has_caps) {
        req->flags |= AGENT_EXEC_F_CAPS;
        req->cap_bounding = p->caps[OCI_CAP_BOUNDING];
        req->cap_effective = p->caps[OCI_CAP_EFFECTIVE];
        req->cap_permitted = p->caps[OCI_CAP_PERMITTED];
        req->cap_inheritable = p->caps[OCI_CAP_INHERITABLE];
        req->cap_ambient = p->caps[OCI_CAP_AMBIENT];
    }
    if (p->terminal) {
        struct winsize ws;
        req->flags |= AGENT_EXEC_F_TTY;
        if (ioctl(0, TIOCGWINSZ, &ws) == 0 && (ws.ws_row || ws.ws_col)) {
            req->tty_rows = ws.ws_row;
            req->tty_cols = ws.ws_col;
        } else {
            req->tty_rows = (uint16_t)p->rows;
            req->tty_cols = (uint16_t)p->cols;
        }
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

/* p's env, then the proxy's defaults whose names it does not have. */
static const char **with_proxy_env(const struct oci_process *p, uint32_t *n)
{
    const char **env = calloc(p->nenv + COMMAND_DEFAULT_ENVS + 1, sizeof(*env));
    if (!env)
        return NULL;
    memcpy(env, p->env, p->nenv * sizeof(*env));
    *n = p->nenv;
    for (unsigned i = 0; i < COMMAND_DEFAULT_ENVS; i++) {
        const char *d = command_default_env[i];
        size_t nl = strcspn(d, "=");
        if (!strstr(d, "proxy=") && !strstr(d, "PROXY="))
            continue; /* PATH and HOME are the image's business */
        bool have = false;
        for (unsigned k = 0; k < p->nenv && !have; k++)
            have = !strncmp(env[k], d, nl + 1);
        if (!have)
            env[(*n)++] = d;
    }
    return env;
}

struct started_word {
    int *fd;       /* start's, or -1 */
    uint32_t *pid; /* where the guest pid goes, or NULL */
};

/* agent_exec_signals' word that the process runs: on to `start`. */
static void say_running(void *arg, uint32_t pid)
{
    struct started_word *word = arg;
    int *fd = word->fd;
    if (word->pid)
        *word->pid = pid;
    if (*fd < 0)
        return;
    char b = STANDIN_RUNNING;
    ssize_t w = write(*fd, &b, 1);
    (void)w;
    close(*fd);
    *fd = -1;
}

static int standin_exec(const struct standin_target *t, const struct oci_process *p, bool init,
                        int *started_fd)
{
    if (forward_signals(p->terminal)) {
        say("airlock-runtime: %s: %s\n", "signals", errno);
        return EXIT_AIRLOCK_ERROR;
    }
    int fd = vm_proc_dial(t->sock);
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
    const char **env = t->egress ? with_proxy_env(p, &req.envc) : NULL;
    if (env)
        req.envp = env;
    req.cwd = p->cwd;
    req.uid = p->uid;
    req.gid = p->gid;
    req.flags = AGENT_EXEC_F_STDIN;
    process_section(p, &req);
    req.pidns = init ? AGENT_PIDNS_NEW : AGENT_PIDNS_JOIN;
    if (t->container) { /* a pod's member (vmm/runtime/pod.h) */
        req.flags |= AGENT_EXEC_F_CONTAINER;
        req.ctr_name = t->container;
        if (init) {
            req.ctr_serial = t->root_serial;
            req.nbinds = t->nbinds;
            memcpy(req.binds, t->binds, t->nbinds * sizeof(*t->binds));
        }
    }
    if (init && t->config)
        container_linux_section(t->config, &req);
    struct started_word word = {.fd = started_fd, .pid = t->guest_pid};
    req.on_started = say_running;
    req.on_started_arg = &word;
    struct agent_exec_result res;
    int rc = agent_exec_signals(fd, &req, 1, 2, 0, sig_pipe[0], UINT64_MAX, &res);
    close(fd);
    free(env);
    if (rc < 0) {
        say("airlock-runtime: %s: %s\n", "the container's VM", -rc);
        return EXIT_AIRLOCK_ERROR;
    }
    if (res.error && res.error_op == AGENT_OP_LINUX) {
        say("airlock-runtime: the container's %s: %s\n",
            "linux settings (devices, sysctl, readonlyPaths, maskedPaths, root.readonly, "
            "oomScoreAdj)", res.error);
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

int standin_run(const struct standin_target *t, const struct oci_process *p, bool init,
                int started_fd)
{
    int rc = standin_exec(t, p, init, &started_fd);
    if (started_fd >= 0)
        close(started_fd); /* it never ran: `start` waits no longer */
    return rc;
}
