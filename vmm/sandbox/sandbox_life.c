#include "vmm/sandbox/sandbox_life.h"

#include "vmm/agent_client/agent_conn.h"
#include "vmm/sandbox/audit_tally.h"
#include "vmm/sandbox/sandbox_audit.h"
#include "vmm/sandbox/sandbox_boot.h"
#include "vmm/sandbox/sandbox_pause.h"
#include "vmm/sandbox/sandbox_ports.h"
#include "vmm/volume/volume_hold.h"

void sandbox_touch(struct api_server *srv, struct sandbox *sb)
{
    pthread_mutex_lock(&srv->reg.lock);
    sb->last_used_mono_ms = agent_mono_ms();
    pthread_mutex_unlock(&srv->reg.lock);
}

void sandbox_hold(struct api_server *srv, struct sandbox *sb, int delta)
{
    pthread_mutex_lock(&srv->reg.lock);
    sb->running = (unsigned)((int)sb->running + delta);
    sb->last_used_mono_ms = agent_mono_ms();
    pthread_mutex_unlock(&srv->reg.lock);
}

void sandbox_forward_audit(struct api_server *srv, struct sandbox *sb)
{
    pthread_mutex_lock(&srv->audit_lock);
    sandbox_audit_forward(sb, srv->audit_fd);
    audit_tally(&srv->reg, sb); /* the same lock: one reader of its log at a time */
    pthread_mutex_unlock(&srv->audit_lock);
}

void sandbox_destroy(struct api_server *srv, struct sandbox *sb)
{
    if (registry_retire(&srv->reg, sb)) {
        /* Its ports first: a connection dialling may wait for a resume,
         * which needs the lock below (and then finds the sandbox gone). */
        sandbox_ports_close(sb);
        /* A pause or resume under way finishes first: its VM process and
         * its files are then ours to end. */
        pthread_mutex_lock(&sb->life_lock);
        sandbox_forward_audit(srv, sb);
        sandbox_teardown(sb); /* its VM synced its volumes and ended */
        if (sb->volumes)
            volume_release_holder(&srv->volumes, sb->id);
        sandbox_pause_forget(srv, sb);
        pthread_mutex_unlock(&sb->life_lock);
    }
    registry_put(&srv->reg, sb);
}
