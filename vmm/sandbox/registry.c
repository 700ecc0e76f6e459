#include "vmm/sandbox/registry.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>


void registry_init(struct registry *reg, unsigned max, uint64_t max_mem_mib)
{
    memset(reg, 0, sizeof(*reg));
    pthread_mutex_init(&reg->lock, NULL);
    reg->max = max > SANDBOX_MAX ? SANDBOX_MAX : max;
    reg->max_mem_mib = max_mem_mib;
}

/* Under the lock. */
static void slot_free(struct registry *reg, struct sandbox *sb)
{
    json_decref(sb->env);
    json_decref(sb->labels);
    json_decref(sb->allow);
    json_decref(sb->allow_ip);
    json_decref(sb->volumes);
    if (reg->release)
        reg->release(sb);
    memset(sb, 0, sizeof(*sb));
}

struct sandbox *registry_add(struct registry *reg, unsigned mem_mib, int *why)
{
    uint8_t raw[SANDBOX_ID_HEX / 2];
    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
        *why = -EIO;
        return NULL;
    }
    pthread_mutex_lock(&reg->lock);
    unsigned live = 0;
    uint64_t mem = mem_mib;
    struct sandbox *free_slot = NULL;
    for (unsigned i = 0; i < SANDBOX_MAX; i++) {
        struct sandbox *s = &reg->slots[i];
        if (s->state == SB_FREE) {
            if (!free_slot)
                free_slot = s;
            continue;
        }
        live++;
        mem += s->mem_mib;
    }
    struct sandbox *sb = NULL;
    if (live >= reg->max || !free_slot)
        *why = -ENOSPC;
    else if (reg->max_mem_mib && mem > reg->max_mem_mib)
        *why = -ENOMEM;
    else {
        sb = free_slot;
        memset(sb, 0, sizeof(*sb));
        sb->state = SB_STARTING;
        sb->refs = 1;
        sb->mem_mib = mem_mib;
        sb->pool = -1;
        sb->audit.fd = -1;
        sb->control_fd = -1;
        sb->egress_fd = -1;
        for (size_t i = 0; i < sizeof(raw); i++)
            snprintf(sb->id + 2 * i, 3, "%02x", raw[i]);
    }
    pthread_mutex_unlock(&reg->lock);
    return sb;
}

struct sandbox *registry_get(struct registry *reg, const char *id)
{
    struct sandbox *found = NULL;
    if (strlen(id) != SANDBOX_ID_HEX)
        return NULL;
    pthread_mutex_lock(&reg->lock);
    for (unsigned i = 0; i < SANDBOX_MAX && !found; i++) {
        struct sandbox *s = &reg->slots[i];
        if (s->state == SB_RUNNING && !strcmp(s->id, id)) {
            s->refs++;
            found = s;
        }
    }
    pthread_mutex_unlock(&reg->lock);
    return found;
}

void registry_ref(struct registry *reg, struct sandbox *sb)
{
    pthread_mutex_lock(&reg->lock);
    sb->refs++;
    pthread_mutex_unlock(&reg->lock);
}

void registry_put(struct registry *reg, struct sandbox *sb)
{
    pthread_mutex_lock(&reg->lock);
    if (--sb->refs == 0 && sb->state == SB_GONE)
        slot_free(reg, sb);
    pthread_mutex_unlock(&reg->lock);
}

bool registry_retire(struct registry *reg, struct sandbox *sb)
{
    pthread_mutex_lock(&reg->lock);
    bool mine = sb->state != SB_GONE;
    sb->state = SB_GONE;
    pthread_mutex_unlock(&reg->lock);
    return mine;
}
