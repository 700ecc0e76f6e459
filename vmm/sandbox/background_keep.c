#include "vmm/sandbox/background_keep.h"
#include "vmm/sandbox/background_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/sandbox/exec_output.h"
#include "vmm/sandbox/registry.h"

json_t *bg_save(struct registry *reg, struct sandbox *sb)
{
    struct bg_table *t = bg_table_of(reg, sb, false);
    if (!t)
        return json_array();
    struct bg_saved s[BG_MAX];
    size_t n = 0;
    pthread_mutex_lock(&t->lock);
    for (unsigned i = 0; i < BG_MAX && t->cmds[i]; i++, n++) {
        struct bg_cmd *c = t->cmds[i];
        /* Copies: the runner changes info under this lock, and the record
         * is written after it is released. */
        s[n] = (struct bg_saved){
            .info = json_deep_copy(c->info), .exit = c->done ? json_deep_copy(c->exit) : NULL,
            /* The offset of the next byte: the agent is asked for output
             * from here on re-attach (it keeps what it sent lately), so
             * what arrives between this record and the VM's stop comes
             * again at the same offsets. */
            .output_bytes = c->total, .pid = c->pid,
            .tty = (c->req.flags & AGENT_EXEC_F_TTY) != 0,
            /* stdin_w is stdin_lock's, which a write holds for up to 30 s:
             * read without it, as a hint (a write closing it now loses
             * nothing: the next daemon's pipe is a new one). */
            .stdin_open = c->stdin_w >= 0 && !c->done, .timeout_ms = c->req.timeout_ms,
            .max_output = c->max_output, .buffer = (uint32_t)c->cap};
        snprintf(s[n].id, sizeof(s[n].id), "%s", c->id);
    }
    pthread_mutex_unlock(&t->lock);
    json_t *a = record_commands_json(s, n);
    for (size_t i = 0; i < n; i++) {
        json_decref(s[i].info);
        json_decref(s[i].exit);
    }
    return a;
}

/* Its stdin (a new pipe, when it was open for writes) and its signals'
 * pipe: 0 or -errno. */
static int open_pipes(struct bg_cmd *cmd, bool stdin_open)
{
    int p[2], e = stdin_open ? bg_stdin_pipe(cmd) : 0;
    if (e)
        return e;
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
        return -errno;
    cmd->sig_r = p[0];
    cmd->sig_w = p[1];
    return 0;
}

/* Under t->lock: one saved record listed in t.  0 or -errno. */
static int restore_one(struct bg_table *t, struct registry *reg, struct sandbox *sb,
                       const struct bg_saved *s, unsigned gen)
{
    struct bg_cmd *cmd = bg_cmd_new(t, reg, sb, s->buffer, s->max_output);
    if (!cmd)
        return -ENOMEM;
    t->buffered += cmd->cap; /* cmd_free takes it off */
    agent_exec_req_init(&cmd->req);
    cmd->req.timeout_ms = s->timeout_ms;
    cmd->req.flags = s->tty ? AGENT_EXEC_F_TTY : 0;
    bg_req_hooks(cmd);
    bool runs = !s->exit && s->pid;
    int rc = runs ? open_pipes(cmd, s->stdin_open) : 0;
    cmd->info = json_deep_copy(s->info);
    if (rc || !cmd->info) {
        bg_cmd_discard(cmd);
        return rc ? rc : -ENOMEM;
    }
    snprintf(cmd->id, sizeof(cmd->id), "%s", s->id);
    unsigned long seq = strtoul(s->id, NULL, 10);
    if (seq > t->seq)
        t->seq = (unsigned)seq; /* new commands are numbered after it */
    cmd->total = cmd->start = s->output_bytes;
    cmd->pid = s->pid;
    /* Its duration counts from when it started, by the wall clock. */
    int64_t age = agent_wall_ms() - json_integer_value(json_object_get(s->info, "started_ms"));
    cmd->t0 = agent_mono_ms() - (age > 0 ? age : 0);
    if (runs) {
        cmd->restored = true;
        cmd->gen = gen;
        cmd->res0 = (struct agent_exec_result){.started = 1, .pid = s->pid,
                                               .received = s->output_bytes,
                                               .out_bytes = s->output_bytes};
    } else {
        cmd->done = true;
        cmd->exit = s->exit ? json_deep_copy(s->exit) : NULL;
        if (!cmd->exit) { /* paused before the agent said it started */
            cmd->exit = exec_exit_record(-ECONNRESET, &(struct agent_exec_result){0}, 0);
            json_object_set_new(cmd->exit, "error",
                                json_string("its sandbox was paused before it started"));
        }
    }
    if (!bg_launch(cmd, runs))
        return -EAGAIN; /* the caller drops the runner's reference */
    return 0;
}

int bg_restore(struct registry *reg, struct sandbox *sb, const struct bg_saved *s, size_t n)
{
    struct bg_table *t = n ? bg_table_of(reg, sb, true) : NULL;
    if (n && !t)
        return -ENOMEM;
    pthread_mutex_lock(&reg->lock);
    unsigned gen = sb->vm_gen; /* its resume makes the next one */
    pthread_mutex_unlock(&reg->lock);
    int rc = 0;
    for (size_t i = 0; i < n && rc != -ENOMEM; i++) {
        pthread_mutex_lock(&t->lock);
        int e = restore_one(t, reg, sb, &s[i], gen);
        pthread_mutex_unlock(&t->lock);
        if (e == -EAGAIN)
            registry_put(reg, sb); /* a runner that never started */
        else if (e)
            rc = e;
    }
    return rc;
}
