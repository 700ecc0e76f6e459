#include "vmm/sandbox/events.h"
#include "vmm/sandbox/metrics.h"
#include "vmm/sandbox/sandbox_pause.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/sandbox/daemon_state.h"
#include "vmm/sandbox/sandbox_boot.h"
#include "vmm/sandbox/sandbox_record.h"
#include "vmm/sandbox/vm_identity.h"
#include "vmm/sandbox/snapshots.h"
#include "vmm/snapshot/snapshot_dir.h"
#include "vmm/util/rmtree.h"
#include "vmm/util/user_dirs.h"

static void state_folder(const struct api_server *srv, const struct sandbox *sb, char *out,
                         size_t cap)
{
    snprintf(out, cap, "%.3800s/%s/%s", srv->state_dir, DAEMON_STATE_SANDBOXES, sb->id);
}

const char *sandbox_state_name(const struct sandbox *sb)
{
    return sb->state == SB_PAUSED ? "paused" : "running";
}

int sandbox_pause(struct api_server *srv, struct sandbox *sb, bool memory, char *err, size_t cap)
{
    pthread_mutex_lock(&sb->life_lock);
    pthread_mutex_lock(&srv->reg.lock);
    int http = 0;
    if (sb->state == SB_PAUSED) {
        snprintf(err, cap, "sandbox %s is paused already", sb->id);
        http = 409;
    } else if (sb->state != SB_RUNNING) {
        snprintf(err, cap, "sandbox %s is gone", sb->id);
        http = 404;
    } else if (sb->no_pause) {
        snprintf(err, cap, "sandbox %s cannot be paused: %s", sb->id, sb->no_pause);
        http = 409;
    } else if (sb->foreground) {
        snprintf(err, cap, "sandbox %s runs a command in the foreground, whose stream a pause "
                 "would end: wait for it, or run it in the background", sb->id);
        http = 409;
    } else {
        /* From here on new requests wait for the resume this pause makes
         * them ask for (sandbox_wake takes life_lock after us). */
        sb->state = SB_PAUSED;
    }
    pthread_mutex_unlock(&srv->reg.lock);
    /* A pause without memory keeps what the guest has written back to its
     * disks: everything, once its file systems are synced. */
    char why[256];
    if (!http && !memory && sandbox_sync(sb, why, sizeof(why))) {
        snprintf(err, cap, "sandbox %s: its files could not be synced for a pause without "
                 "memory: %s", sb->id, why);
        pthread_mutex_lock(&srv->reg.lock);
        sb->state = SB_RUNNING; /* nothing was stopped */
        pthread_mutex_unlock(&srv->reg.lock);
        http = 500;
    }
    if (http) {
        pthread_mutex_unlock(&sb->life_lock);
        return http;
    }
    char dir[PATH_MAX - 64], snap[PATH_MAX];
    state_folder(srv, sb, dir, sizeof(dir));
    snprintf(snap, sizeof(snap), "%s/vm-%u", dir, sb->vm_gen);
    /* Its record first, naming the saved VM to come (a record whose VM
     * is incomplete, its state file written last, is refused when read):
     * a pause is reported only once a daemon started anew could resume it. */
    struct vm_identity id;
    vm_identity_files(sb->image, sb->cpus, &id);
    json_t *was = sb->identity;
    char was_snap[PATH_MAX];
    snprintf(was_snap, sizeof(was_snap), "%s", sb->vm_snapshot);
    sb->identity = vm_identity_json(&id);
    snprintf(sb->vm_snapshot, sizeof(sb->vm_snapshot), "%s", snap);
    sb->paused_ms = agent_wall_ms();
    sb->pauses++;
    sb->paused_fs_only = !memory; /* in the record too: a daemon started anew cold-boots it */
    char rec[PATH_MAX + 32];
    snprintf(rec, sizeof(rec), "%s/%s", dir, SANDBOX_RECORD_FILE);
    int e = make_dirs(dir, 0700);
    if (e)
        snprintf(err, cap, "cannot make %.300s: %s", dir, strerror(-e));
    else if ((e = sandbox_record_write(&srv->reg, sb, dir)))
        snprintf(err, cap, "cannot write its record in %.300s: %s", dir, strerror(-e));
    if (e)
        http = e == -ENOSPC || e == -EDQUOT ? 507 : 500;
    else /* the VM stays paused once saved: it must not run ahead of it */
        http = snapshot_save(sb, snap, true, err, cap);
    if (http) {
        unlink(rec);
        json_decref(sb->identity);
        sb->identity = was;
        snprintf(sb->vm_snapshot, sizeof(sb->vm_snapshot), "%s", was_snap);
        sb->pauses--;
        sb->paused_fs_only = false;
    } else {
        json_decref(was);
        if (was_snap[0]) /* the previous pause's, which that VM mapped */
            snapshot_files(was_snap, true);
        if (!memory) { /* saved with the rest; a cold boot needs only the disks */
            char mem[PATH_MAX + 16];
            snprintf(mem, sizeof(mem), "%s/%s", snap, SNAP_MEMORY_FILE);
            unlink(mem);
        }
    }
    if (http) {
        pthread_mutex_lock(&srv->reg.lock);
        if (sb->state == SB_PAUSED)
            sb->state = SB_RUNNING; /* its VM never stopped */
        pthread_mutex_unlock(&srv->reg.lock);
        pthread_mutex_unlock(&sb->life_lock);
        return http;
    }
    /* Saved: the VM process goes.  Its agent connections end with it;
     * the background commands' threads wait for the resume. */
    sandbox_vm_stop(sb);
    pthread_mutex_unlock(&sb->life_lock);
    metrics_count_pause();
    events_emit(EVENT_PAUSED, sb->id, NULL);
    return 0;
}

int sandbox_resume(struct api_server *srv, struct sandbox *sb, char *err, size_t cap)
{
    pthread_mutex_lock(&sb->life_lock);
    pthread_mutex_lock(&srv->reg.lock);
    enum sandbox_state st = sb->state;
    pthread_mutex_unlock(&srv->reg.lock);
    if (st != SB_PAUSED) {
        pthread_mutex_unlock(&sb->life_lock);
        if (st == SB_RUNNING)
            return 0;
        snprintf(err, cap, "sandbox %s is gone", sb->id);
        return 404;
    }
    if (sandbox_record_check(sb, err, cap)) {
        pthread_mutex_unlock(&sb->life_lock);
        return 409;
    }
    int e;
    while ((e = registry_admit(&srv->reg, sb)) && pool_evict_one(&srv->pool))
        ; /* a pooled VM makes room, as for a create */
    if (e) {
        snprintf(err, cap, "%s", e == -ENOSPC
                 ? "the daemon runs as many sandboxes as --max-sandboxes allows"
                 : "this sandbox's memory would pass the daemon's --max-mem");
        pthread_mutex_unlock(&sb->life_lock);
        return 503;
    }
    const char *limits[2 * SANDBOX_LIMITS_MAX + 1];
    unsigned n = 0;
    for (unsigned i = 0; i < sb->nlimits; i++) {
        limits[n++] = sb->limits[i].flag;
        limits[n++] = sb->limits[i].value;
    }
    limits[n] = NULL;
    /* Its lists as they are now (a PATCH while it ran changed them), read
     * under the registry's lock, which their replacement also takes. */
    pthread_mutex_lock(&srv->reg.lock);
    json_t *allow = json_incref(sb->allow), *allow_ip = json_incref(sb->allow_ip);
    pthread_mutex_unlock(&srv->reg.lock);
    struct sandbox_boot_req b = {.from_snapshot = sb->vm_snapshot, .cold = sb->paused_fs_only,
                                 .allow = allow, .allow_ip = allow_ip, .limits = limits,
                                 .resume = true};
    const char *field;
    int http = sandbox_boot(srv->run_dir, sb, &b, err, cap, &field);
    json_decref(allow);
    json_decref(allow_ip);
    if (!http) {
        pthread_mutex_lock(&srv->reg.lock);
        if (sb->state == SB_PAUSED) {
            sb->state = SB_RUNNING;
            sb->vm_gen++;
            sb->resumes++;
            sb->paused_fs_only = false;
            sb->last_used_mono_ms = agent_mono_ms();
            pthread_cond_broadcast(&sb->vm_cond); /* its background commands attach */
        }
        pthread_mutex_unlock(&srv->reg.lock);
        /* It runs: a daemon started anew must not bring back the state it
         * was paused in (what it did since would be lost unseen). */
        char dir[PATH_MAX - 64], rec[PATH_MAX];
        state_folder(srv, sb, dir, sizeof(dir));
        snprintf(rec, sizeof(rec), "%s/%s", dir, SANDBOX_RECORD_FILE);
        unlink(rec);
        metrics_count_resume();
        events_emit(EVENT_RESUMED, sb->id, NULL);
    } else if (http == 400) {
        http = 500; /* nothing of this request's: what was saved no longer restores */
    }
    pthread_mutex_unlock(&sb->life_lock);
    return http;
}

struct pause_job {
    struct api_server *srv;
    struct sandbox *sb;
};

static void *pause_thread(void *arg)
{
    struct pause_job *j = arg;
    char err[600];
    int http = sandbox_pause(j->srv, j->sb, !j->sb->timeout_fs_only, err, sizeof(err));
    if (http && http != 409 && http != 404) {
        fprintf(stderr, "airlock: sandbox %s: its lease ran out, and it could not be paused: "
                "%s (it runs on)\n", j->sb->id, err);
        pthread_mutex_lock(&j->srv->reg.lock); /* the next try after another lease */
        j->sb->last_used_mono_ms = agent_mono_ms();
        pthread_mutex_unlock(&j->srv->reg.lock);
    }
    registry_put(&j->srv->reg, j->sb);
    free(j);
    return NULL;
}

void sandbox_pause_async(struct api_server *srv, struct sandbox *sb)
{
    struct pause_job *j = malloc(sizeof(*j));
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (j) {
        *j = (struct pause_job){srv, sb};
        if (pthread_create(&t, &at, pause_thread, j)) {
            free(j);
            j = NULL;
        }
    }
    pthread_attr_destroy(&at);
    if (!j)
        registry_put(&srv->reg, sb);
}

int sandbox_pause_rewrite(struct api_server *srv, struct sandbox *sb)
{
    char dir[PATH_MAX - 64];
    state_folder(srv, sb, dir, sizeof(dir));
    pthread_mutex_lock(&sb->life_lock);
    pthread_mutex_lock(&srv->reg.lock);
    bool paused = sb->state == SB_PAUSED && sb->vm_snapshot[0];
    pthread_mutex_unlock(&srv->reg.lock);
    int e = paused ? sandbox_record_write(&srv->reg, sb, dir) : 0;
    pthread_mutex_unlock(&sb->life_lock);
    return e;
}

void sandbox_pause_forget(struct api_server *srv, struct sandbox *sb)
{
    char dir[PATH_MAX];
    state_folder(srv, sb, dir, sizeof(dir));
    if (sb->vm_snapshot[0])
        snapshot_files(sb->vm_snapshot, true);
    sb->vm_snapshot[0] = '\0';
    rmtree(dir);
}
