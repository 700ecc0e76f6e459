#include "vmm/sandbox/background.h"
#include "vmm/sandbox/background_cmd.h"

#include <string.h>

#include "vmm/util/mono_deadline.h"

/* Finding a sandbox's background commands and showing their records:
 * each under the table's lock, which the runner takes to change them. */

struct bg_cmd *bg_find(struct registry *reg, struct sandbox *sb, const char *id)
{
    struct bg_table *t = bg_table_of(reg, sb, false);
    if (!t)
        return NULL;
    struct bg_cmd *found = NULL;
    pthread_mutex_lock(&t->lock);
    for (unsigned i = 0; i < BG_MAX && t->cmds[i] && !found; i++)
        if (!strcmp(t->cmds[i]->id, id)) {
            found = t->cmds[i];
            found->refs++;
        }
    pthread_mutex_unlock(&t->lock);
    return found;
}

struct bg_cmd *bg_find_pid(struct registry *reg, struct sandbox *sb, uint32_t pid)
{
    struct bg_table *t = bg_table_of(reg, sb, false);
    if (!t || !pid)
        return NULL;
    struct bg_cmd *found = NULL;
    pthread_mutex_lock(&t->lock);
    for (unsigned i = 0; i < BG_MAX && t->cmds[i] && !found; i++)
        if (t->cmds[i]->pid == pid) {
            found = t->cmds[i];
            found->refs++;
        }
    pthread_mutex_unlock(&t->lock);
    return found;
}

uint32_t bg_pid(struct bg_cmd *cmd, unsigned wait_ms)
{
    struct bg_table *t = cmd->t;
    struct timespec until = mono_after_ms(wait_ms);
    pthread_mutex_lock(&t->lock);
    while (!cmd->pid && !cmd->done && pthread_cond_timedwait(&t->more, &t->lock, &until) == 0)
        ;
    uint32_t pid = cmd->pid;
    pthread_mutex_unlock(&t->lock);
    return pid;
}

bool bg_running(struct bg_cmd *cmd)
{
    pthread_mutex_lock(&cmd->t->lock);
    bool r = !cmd->done;
    pthread_mutex_unlock(&cmd->t->lock);
    return r;
}

/* Under t->lock. */
static json_t *cmd_json(const struct bg_cmd *cmd)
{
    json_t *o = json_deep_copy(cmd->info);
    json_object_set_new(o, "running", json_boolean(!cmd->done));
    json_object_set_new(o, "output_bytes", json_integer((json_int_t)cmd->total));
    json_object_set_new(o, "buffer_start", json_integer((json_int_t)cmd->start));
    json_object_set_new(o, "stdin_open", json_boolean(cmd->stdin_w >= 0 && !cmd->done));
    json_object_set(o, "exit", cmd->exit ? cmd->exit : json_null());
    return o;
}

json_t *bg_json(struct bg_cmd *cmd)
{
    pthread_mutex_lock(&cmd->t->lock);
    json_t *o = cmd_json(cmd);
    pthread_mutex_unlock(&cmd->t->lock);
    return o;
}

json_t *bg_list(struct registry *reg, struct sandbox *sb)
{
    json_t *arr = json_array();
    struct bg_table *t = bg_table_of(reg, sb, false);
    if (t) {
        pthread_mutex_lock(&t->lock);
        for (unsigned i = 0; i < BG_MAX && t->cmds[i]; i++)
            json_array_append_new(arr, cmd_json(t->cmds[i]));
        pthread_mutex_unlock(&t->lock);
    }
    json_t *o = json_object();
    json_object_set_new(o, "commands", arr);
    return o;
}
