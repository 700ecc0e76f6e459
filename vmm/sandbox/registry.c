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
    json_decref(sb->identity);
    if (reg->release)
        reg->release(sb);
    memset(sb, 0, sizeof(*sb));
}

/* Under the lock: a free slot made ready for a new sandbox. */
static void slot_init(struct sandbox *sb, unsigned mem_mib)
{
    memset(sb, 0, sizeof(*sb));
    sb->state = SB_STARTING;
    sb->refs = 1;
    sb->mem_mib = mem_mib;
    sb->pool = -1;
    sb->audit.fd = -1;
    sb->control_fd = -1;
    sb->egress_fd = -1;
}

struct sandbox *registry_add_saved(struct registry *reg, const char *id)
{
    struct sandbox *sb = NULL;
    pthread_mutex_lock(&reg->lock);
    for (unsigned i = 0; i < SANDBOX_MAX; i++) {
        struct sandbox *s = &reg->slots[i];
        if (s->state != SB_FREE && !strcmp(s->id, id)) {
            sb = NULL;
            break;
        }
        if (s->state == SB_FREE && !sb)
            sb = s;
    }
    if (sb) {
        slot_init(sb, 0);
        snprintf(sb->id, sizeof(sb->id), "%s", id);
    }
    pthread_mutex_unlock(&reg->lock);
    return sb;
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
        if (s->state == SB_PAUSED) /* no VM: only its slot */
            continue;
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
        slot_init(sb, mem_mib);
        for (size_t i = 0; i < sizeof(raw); i++)
            snprintf(sb->id + 2 * i, 3, "%02x", raw[i]);
    }
    pthread_mutex_unlock(&reg->lock);
    return sb;
}

static struct sandbox *find(struct registry *reg, const char *id, bool paused_too)
{
    struct sandbox *found = NULL;
    if (strlen(id) != SANDBOX_ID_HEX)
        return NULL;
    pthread_mutex_lock(&reg->lock);
    for (unsigned i = 0; i < SANDBOX_MAX && !found; i++) {
        struct sandbox *s = &reg->slots[i];
        if ((s->state == SB_RUNNING || (paused_too && s->state == SB_PAUSED)) &&
            !strcmp(s->id, id)) {
            s->refs++;
            found = s;
        }
    }
    pthread_mutex_unlock(&reg->lock);
    return found;
}

struct sandbox *registry_get(struct registry *reg, const char *id)
{
    return find(reg, id, false);
}

struct sandbox *registry_find(struct registry *reg, const char *id)
{
    return find(reg, id, true);
}

int registry_admit(struct registry *reg, const struct sandbox *sb)
{
    unsigned live = 0;
    uint64_t mem = sb->mem_mib;
    pthread_mutex_lock(&reg->lock);
    for (unsigned i = 0; i < SANDBOX_MAX; i++) {
        const struct sandbox *s = &reg->slots[i];
        if (s == sb || s->state == SB_FREE || s->state == SB_PAUSED)
            continue;
        live++;
        mem += s->mem_mib;
    }
    pthread_mutex_unlock(&reg->lock);
    return live >= reg->max ? -ENOSPC : reg->max_mem_mib && mem > reg->max_mem_mib ? -ENOMEM : 0;
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
    pthread_cond_broadcast(&sb->vm_cond); /* what waits for a resume ends */
    pthread_mutex_unlock(&reg->lock);
    return mine;
}
