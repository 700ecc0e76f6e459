#include "vmm/sandbox/background.h"
#include "vmm/sandbox/background_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/sandbox/exec_output.h"
#include "vmm/sandbox/registry.h"
#include "vmm/sandbox/sandbox_audit.h"
#include "vmm/sandbox/vm_proc.h"
#include "vmm/util/mono_deadline.h"


struct bg_table *bg_table_of(struct registry *reg, struct sandbox *sb, bool make)
{
    pthread_mutex_lock(&reg->lock);
    if (!sb->bg && make) {
        struct bg_table *t = calloc(1, sizeof(*t));
        pthread_condattr_t ca;
        if (t && !pthread_condattr_init(&ca)) {
            pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
            pthread_mutex_init(&t->lock, NULL);
            pthread_cond_init(&t->more, &ca);
            pthread_condattr_destroy(&ca);
            sb->bg = t;
        } else {
            free(t);
        }
    }
    struct bg_table *t = sb->bg;
    pthread_mutex_unlock(&reg->lock);
    return t;
}

/* Under t->lock. */
static void cmd_free(struct bg_cmd *cmd)
{
    struct bg_table *t = cmd->t;
    for (struct bg_chunk *k = cmd->head, *n; k; k = n) {
        n = k->next;
        free(k);
    }
    for (size_t i = 0; i < cmd->nstrs; i++)
        free(cmd->strs[i]);
    free(cmd->strs);
    free((void *)cmd->req.argv);
    free((void *)cmd->req.envp);
    if (cmd->stdin_w >= 0)
        close(cmd->stdin_w);
    if (cmd->sig_w >= 0)
        close(cmd->sig_w);
    pthread_mutex_destroy(&cmd->stdin_lock);
    json_decref(cmd->info);
    json_decref(cmd->exit);
    t->buffered -= cmd->cap;
    free(cmd);
}

/* Under t->lock. */
static void cmd_unref(struct bg_cmd *cmd)
{
    if (--cmd->refs == 0)
        cmd_free(cmd);
}

void bg_put(struct bg_cmd *cmd)
{
    struct bg_table *t = cmd->t;
    pthread_mutex_lock(&t->lock);
    cmd_unref(cmd);
    pthread_mutex_unlock(&t->lock);
}

void bg_table_free(struct bg_table *t)
{
    if (!t)
        return;
    for (unsigned i = 0; i < BG_MAX; i++)
        if (t->cmds[i])
            cmd_unref(t->cmds[i]);
    pthread_cond_destroy(&t->more);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* Under t->lock: takes cmd out of the listing. */
static void unlist(struct bg_cmd *cmd)
{
    struct bg_table *t = cmd->t;
    for (unsigned i = 0; i < BG_MAX; i++) {
        if (t->cmds[i] != cmd)
            continue;
        memmove(&t->cmds[i], &t->cmds[i + 1], (BG_MAX - i - 1) * sizeof(t->cmds[0]));
        t->cmds[BG_MAX - 1] = NULL;
        cmd->listed = false;
        cmd_unref(cmd);
        return;
    }
}

/* ---- the runner: agent_exec on one thread, its output into the buffer
 * on another ---- */

struct exec_job {
    struct bg_cmd *cmd;
    int out_w, err_w;
    struct agent_exec_result res;
    int rc;
};

/* agent_exec_signals' word that the command started. */
static void on_started(void *arg, uint32_t pid)
{
    struct bg_cmd *cmd = arg;
    pthread_mutex_lock(&cmd->t->lock);
    cmd->pid = pid;
    json_object_set_new(cmd->info, "pid", json_integer(pid));
    pthread_cond_broadcast(&cmd->t->more);
    pthread_mutex_unlock(&cmd->t->lock);
}

/* The command's connection ended: whether its sandbox was paused and has
 * resumed since (a new VM, *gen its number), after waiting for that;
 * false when its VM ended otherwise, or the sandbox went. */
static bool resumed(struct bg_cmd *cmd, unsigned *gen)
{
    struct registry *reg = cmd->reg;
    struct sandbox *sb = cmd->sb;
    pthread_mutex_lock(&reg->lock);
    while (sb->state == SB_PAUSED)
        pthread_cond_wait(&sb->vm_cond, &reg->lock);
    bool again = sb->state == SB_RUNNING && sb->vm_gen != *gen;
    *gen = sb->vm_gen;
    pthread_mutex_unlock(&reg->lock);
    return again;
}

/* agent_exec_attach's word that the command was taken up again. */
static void on_attached(void *arg, uint64_t lost)
{
    struct bg_cmd *cmd = arg;
    pthread_mutex_lock(&cmd->t->lock);
    json_object_set_new(cmd->info, "output_lost", json_integer((json_int_t)lost));
    pthread_mutex_unlock(&cmd->t->lock);
}

static void *exec_thread(void *arg)
{
    struct exec_job *j = arg;
    struct bg_cmd *cmd = j->cmd;
    pthread_mutex_lock(&cmd->reg->lock);
    unsigned gen = cmd->restored ? cmd->gen : cmd->sb->vm_gen;
    pthread_mutex_unlock(&cmd->reg->lock);
    if (cmd->restored) { /* a daemon before us started it: only ATTACH is left */
        j->res = cmd->res0;
        j->rc = -ECONNRESET;
    } else {
        j->rc = agent_exec_signals(cmd->agent, &cmd->req, j->out_w, j->err_w, cmd->in_fd,
                                   cmd->sig_r, cmd->max_output, &j->res);
    }
    /* Its VM was paused: the command waits in the guest (it ran with
     * AGENT_EXEC_F_KEEP), and goes on once the sandbox resumed. */
    while (j->rc < 0 && j->res.started && resumed(cmd, &gen)) {
        int fd = vm_proc_dial(cmd->sb->sock);
        if (fd < 0) {
            j->rc = fd;
            break;
        }
        close(cmd->agent);
        cmd->agent = fd;
        j->rc = agent_exec_attach(fd, &cmd->req, j->out_w, j->err_w, cmd->in_fd, cmd->sig_r,
                                  cmd->max_output, &j->res);
        if (!j->rc && j->res.attach_error)
            j->rc = -j->res.attach_error; /* the guest no longer has it */
    }
    close(j->out_w);
    close(j->err_w);
    return NULL;
}

/* A chunk of output into the buffer; the oldest go while it is over. */
static void to_buffer(void *ctx, const struct exec_output *o, const char *p, size_t len)
{
    struct bg_cmd *cmd = ctx;
    struct bg_chunk *k = malloc(sizeof(*k) + len);
    pthread_mutex_lock(&cmd->t->lock);
    if (k) {
        k->next = NULL;
        k->offset = cmd->total;
        k->len = (uint32_t)len;
        k->err = o->type[3] == 'e'; /* "stderr" */
        memcpy(k->data, p, len);
        if (cmd->tail)
            cmd->tail->next = k;
        else
            cmd->head = k;
        cmd->tail = k;
        cmd->kept += len;
    }
    cmd->total += len; /* counted even when lost, so offsets stay true */
    /* Without k the chunk is lost: all before it goes too, so what is
     * kept stays one run of bytes without a hole. */
    while (cmd->head && (cmd->kept > cmd->cap || !k)) {
        struct bg_chunk *old = cmd->head;
        cmd->head = old->next;
        if (!cmd->head)
            cmd->tail = NULL;
        cmd->kept -= old->len;
        free(old);
    }
    cmd->start = cmd->head ? cmd->head->offset : cmd->total;
    pthread_cond_broadcast(&cmd->t->more);
    pthread_mutex_unlock(&cmd->t->lock);
}

static void *runner(void *arg)
{
    struct bg_cmd *cmd = arg;
    struct exec_job j = {.cmd = cmd, .out_w = -1, .err_w = -1};
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    pthread_t exec_tid;
    int rc = pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) ? -errno : 0;
    j.out_w = out[1];
    j.err_w = err[1];
    if (!rc)
        rc = -pthread_create(&exec_tid, NULL, exec_thread, &j);
    if (!rc) {
        struct exec_output s[2] = {{.fd = out[0], .type = "stdout"},
                                   {.fd = err[0], .type = "stderr"}};
        while (s[0].fd >= 0 || s[1].fd >= 0) {
            struct pollfd p[2] = {{.fd = s[0].fd, .events = POLLIN},
                                  {.fd = s[1].fd, .events = POLLIN}};
            if (poll(p, 2, -1) < 0 && errno != EINTR)
                break;
            for (int i = 0; i < 2; i++)
                if (p[i].revents)
                    exec_output_pump(&s[i], to_buffer, cmd);
        }
        pthread_join(exec_tid, NULL);
        rc = j.rc;
    } else {
        for (int i = 0; i < 2; i++) {
            if (out[i] >= 0)
                close(out[i]);
            if (err[i] >= 0)
                close(err[i]);
        }
    }
    int64_t ms = agent_mono_ms() - cmd->t0;
    json_t *exit = exec_exit_record(rc, &j.res, ms);
    sandbox_audit_exit(cmd->sb, &cmd->req, cmd->max_output, rc, &j.res, (uint64_t)ms);
    close(cmd->agent);
    if (cmd->in_fd >= 0)
        close(cmd->in_fd); /* a stdin write now says EPIPE */
    close(cmd->sig_r);
    struct bg_table *t = cmd->t; /* cmd may be freed by the unref below */
    struct registry *reg = cmd->reg;
    struct sandbox *sb = cmd->sb;
    pthread_mutex_lock(&t->lock);
    cmd->done = true;
    cmd->exit = exit;
    pthread_cond_broadcast(&t->more);
    cmd_unref(cmd);
    pthread_mutex_unlock(&t->lock);
    registry_put(reg, sb);
    return NULL;
}

/* ---- starting one ---- */

static char *own(struct bg_cmd *cmd, const char *s)
{
    char *d = s ? strdup(s) : NULL;
    if (d)
        cmd->strs[cmd->nstrs++] = d;
    return d;
}

void bg_req_hooks(struct bg_cmd *cmd)
{
    cmd->req.on_started = on_started;
    cmd->req.on_started_arg = cmd;
    cmd->req.on_attached = on_attached;
    cmd->req.flags |= AGENT_EXEC_F_KEEP; /* it outlives a pause (resumed above) */
}

/* The request's strings and arrays, copied into cmd. */
static int copy_req(struct bg_cmd *cmd, const struct agent_exec_req *req)
{
    cmd->req = *req;
    cmd->strs = calloc((size_t)req->argc + req->envc + 1, sizeof(char *));
    const char **argv = calloc((size_t)req->argc + 1, sizeof(char *));
    const char **envp = calloc((size_t)req->envc + 1, sizeof(char *));
    cmd->req.argv = argv;
    cmd->req.envp = envp;
    if (!cmd->strs || !argv || !envp)
        return -ENOMEM;
    for (uint32_t i = 0; i < req->argc; i++)
        if (!(argv[i] = own(cmd, req->argv[i])))
            return -ENOMEM;
    for (uint32_t i = 0; i < req->envc; i++)
        if (!(envp[i] = own(cmd, req->envp[i])))
            return -ENOMEM;
    cmd->req.cwd = req->cwd ? own(cmd, req->cwd) : NULL;
    bg_req_hooks(cmd);
    return req->cwd && !cmd->req.cwd ? -ENOMEM : 0;
}

/* Under t->lock: room for one more record whose buffer is `cap` bytes,
 * made by evicting ended records, oldest first. */
static int make_room(struct bg_table *t, size_t cap)
{
    for (unsigned i = 0; i < BG_MAX && (t->cmds[BG_MAX - 1] ||
                                        t->buffered + cap > BG_BUFFER_BUDGET);) {
        if (t->cmds[i] && t->cmds[i]->done)
            unlist(t->cmds[i]); /* the next one moved to i */
        else
            i++;
    }
    if (t->cmds[BG_MAX - 1])
        return -ENOSPC;
    return t->buffered + cap > BG_BUFFER_BUDGET ? -ENOMEM : 0;
}

int bg_stdin_pipe(struct bg_cmd *cmd)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    cmd->in_fd = p[0];
    cmd->stdin_w = p[1];
    if (fcntl(p[1], F_SETFL, O_NONBLOCK) < 0)
        return -errno;
    return 0;
}

/* Its stdin: a pipe we keep writing to, or the given bytes, or none. */
static int open_stdin(struct bg_cmd *cmd, const struct bg_spec *spec)
{
    if (!spec->stdin_open) { /* the given bytes, then EOF (with stdin_open the caller
                              * writes them through bg_write_stdin) */
        int fd = exec_input_fd(spec->in);
        cmd->in_fd = fd < 0 ? -1 : fd;
        return fd < -1 ? fd : 0;
    }
    return bg_stdin_pipe(cmd);
}

struct bg_cmd *bg_cmd_new(struct bg_table *t, struct registry *reg, struct sandbox *sb,
                          size_t buffer, uint64_t max_output)
{
    struct bg_cmd *cmd = calloc(1, sizeof(*cmd));
    if (!cmd)
        return NULL;
    cmd->t = t;
    cmd->agent = cmd->in_fd = cmd->sig_r = cmd->sig_w = cmd->stdin_w = -1;
    cmd->cap = buffer;
    cmd->max_output = max_output;
    cmd->reg = reg;
    cmd->sb = sb;
    pthread_mutex_init(&cmd->stdin_lock, NULL);
    return cmd;
}

void bg_cmd_discard(struct bg_cmd *cmd)
{
    if (cmd->agent >= 0)
        close(cmd->agent);
    if (cmd->in_fd >= 0)
        close(cmd->in_fd);
    if (cmd->sig_r >= 0)
        close(cmd->sig_r);
    cmd_free(cmd);
}

bool bg_launch(struct bg_cmd *cmd, bool run)
{
    struct bg_table *t = cmd->t;
    unsigned slot = 0;
    while (t->cmds[slot])
        slot++;
    t->cmds[slot] = cmd;
    cmd->listed = true;
    cmd->refs = run ? 2 : 1; /* the listing, and the runner */
    if (!run)
        return true;
    registry_ref(cmd->reg, cmd->sb);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_t th;
    int rc = -pthread_create(&th, &at, runner, cmd);
    pthread_attr_destroy(&at);
    if (rc) { /* no runner: the record ends here, as if the agent was lost */
        cmd->done = true;
        cmd->exit = exec_exit_record(rc, &(struct agent_exec_result){0}, 0);
        if (cmd->agent >= 0)
            close(cmd->agent);
        if (cmd->in_fd >= 0)
            close(cmd->in_fd);
        close(cmd->sig_r);
        cmd->refs--;
    }
    return !rc;
}

int bg_start(struct registry *reg, struct sandbox *sb, const struct bg_spec *spec,
             char id[BG_ID_MAX])
{
    struct bg_table *t = bg_table_of(reg, sb, true);
    struct bg_cmd *cmd = t ? bg_cmd_new(t, reg, sb, spec->buffer, spec->max_output) : NULL;
    if (!cmd)
        return -ENOMEM;
    int sig[2] = {-1, -1};
    int rc = copy_req(cmd, spec->req);
    if (!rc)
        rc = open_stdin(cmd, spec);
    if (!rc && pipe2(sig, O_CLOEXEC | O_NONBLOCK) < 0)
        rc = -errno;
    cmd->sig_r = sig[0];
    cmd->sig_w = sig[1];
    if (!rc && (cmd->agent = vm_proc_dial(sb->sock)) < 0)
        rc = cmd->agent;
    pthread_mutex_lock(&t->lock);
    t->buffered += cmd->cap; /* cmd_free takes it off */
    if (!rc)
        rc = make_room(t, 0);
    if (rc) {
        bg_cmd_discard(cmd);
        pthread_mutex_unlock(&t->lock);
        return rc;
    }
    snprintf(cmd->id, sizeof(cmd->id), "%u", ++t->seq);
    cmd->info = json_deep_copy(spec->describe);
    json_object_set_new(cmd->info, "id", json_string(cmd->id));
    json_object_set_new(cmd->info, "started_ms", json_integer((json_int_t)agent_wall_ms()));
    cmd->t0 = agent_mono_ms();
    sandbox_audit_exec(sb, &cmd->req);
    bool runs = bg_launch(cmd, true);
    snprintf(id, BG_ID_MAX, "%s", cmd->id);
    pthread_mutex_unlock(&t->lock);
    if (!runs)
        registry_put(reg, sb); /* the runner's reference */
    return 0;
}

/* ---- using one ---- */

int bg_write_stdin(struct bg_cmd *cmd, const void *data, size_t len, bool eof, size_t *written)
{
    int rc = 0;
    *written = 0;
    pthread_mutex_lock(&cmd->stdin_lock);
    int64_t until = agent_mono_ms() + BG_STDIN_WAIT_MS;
    if (cmd->stdin_w < 0)
        rc = -EBADF;
    while (!rc && *written < len) {
        ssize_t n = write(cmd->stdin_w, (const char *)data + *written, len - *written);
        if (n > 0) {
            *written += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN) {
            rc = -errno;
            break;
        }
        int64_t left = until - agent_mono_ms();
        struct pollfd p = {.fd = cmd->stdin_w, .events = POLLOUT};
        if (left <= 0 || poll(&p, 1, (int)left) == 0)
            rc = -ETIMEDOUT;
    }
    if ((eof || rc == -EPIPE) && cmd->stdin_w >= 0) {
        close(cmd->stdin_w);
        cmd->stdin_w = -1;
    }
    pthread_mutex_unlock(&cmd->stdin_lock);
    return rc;
}

/* Under t->lock: one record (agent_exec_signals' queue) for the runner.
 * A record is under PIPE_BUF, so it goes whole or not at all. */
static int sigq_send(struct bg_cmd *cmd, const void *rec, size_t len)
{
    if (cmd->done)
        return -ESRCH;
    if (write(cmd->sig_w, rec, len) == (ssize_t)len)
        return 0;
    return errno == EPIPE ? -ESRCH : -errno; /* EPIPE: the runner is past its end */
}

int bg_signal(struct bg_cmd *cmd, int signo)
{
    uint8_t b = (uint8_t)signo;
    pthread_mutex_lock(&cmd->t->lock);
    int rc = sigq_send(cmd, &b, 1);
    pthread_mutex_unlock(&cmd->t->lock);
    /* 64 KiB of pipe: a full one means a signal storm the runner has not
     * passed on yet; one more of them may go. */
    return rc == -EAGAIN ? 0 : rc;
}

int bg_resize(struct bg_cmd *cmd, uint16_t rows, uint16_t cols)
{
    if (!(cmd->req.flags & AGENT_EXEC_F_TTY))
        return -ENOTTY;
    uint8_t rec[AGENT_SIGQ_WINSIZE_LEN];
    agent_sigq_winsize(rec, rows, cols);
    pthread_mutex_lock(&cmd->t->lock);
    int rc = sigq_send(cmd, rec, sizeof(rec));
    if (!rc) /* the record shows the size the terminal is getting */
        json_object_set_new(cmd->info, "pty", json_pack("{s:i,s:i}", "cols", cols, "rows", rows));
    pthread_mutex_unlock(&cmd->t->lock);
    return rc;
}

void bg_remove(struct bg_cmd *cmd)
{
    bg_signal(cmd, 9); /* SIGKILL; -ESRCH when it ended: fine */
    pthread_mutex_lock(&cmd->t->lock);
    if (cmd->listed)
        unlist(cmd);
    pthread_mutex_unlock(&cmd->t->lock);
}
