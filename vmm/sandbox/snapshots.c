#include "vmm/sandbox/snapshots.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/snapshot/snapshot_control.h"
#include "vmm/snapshot/snapshot_dir.h"

/* A sandbox's VM has one disk, its root image, copy-on-write. */
#define SANDBOX_DISKS 1

void snapshots_init(struct snapshots *ss, const char *run_dir)
{
    memset(ss, 0, sizeof(*ss));
    pthread_mutex_init(&ss->lock, NULL);
    snprintf(ss->dir, sizeof(ss->dir), "%.4000s/snapshots", run_dir);
}

static const char *file_name(unsigned i, char overlay[SNAP_NAME_MAX])
{
    if (i == 0)
        return SNAP_STATE_FILE;
    if (i == 1)
        return SNAP_MEMORY_FILE;
    snap_overlay_name(i - 2, overlay);
    return overlay;
}

uint64_t snapshot_files(const char *dir, bool remove)
{
    bool count_only = !remove;
    uint64_t bytes = 0;
    char overlay[SNAP_NAME_MAX], p[PATH_MAX + SNAP_NAME_MAX + 2];
    for (unsigned i = 0; i < 2 + SANDBOX_DISKS; i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, file_name(i, overlay));
        struct stat st;
        if (!stat(p, &st))
            bytes += (uint64_t)st.st_blocks * 512;
        if (!count_only)
            unlink(p);
    }
    if (!count_only)
        rmdir(dir);
    return bytes;
}


int snapshot_save(struct sandbox *sb, const char *dir, bool stop, char *err, size_t cap)
{
    int fds[2 + SANDBOX_DISKS];
    unsigned nfds = 0;
    int status = 0;
    if (sb->control_fd < 0) {
        snprintf(err, cap, "this sandbox's VM takes no snapshot requests");
        return 409;
    }
    if (mkdir(dir, 0700) < 0) {
        snprintf(err, cap, "cannot make %.300s: %s", dir, strerror(errno));
        return errno == ENOSPC || errno == EDQUOT ? 507 : 500;
    }
    for (unsigned i = 0; !status && i < 2 + SANDBOX_DISKS; i++) {
        char overlay[SNAP_NAME_MAX], p[PATH_MAX + SNAP_NAME_MAX + 2];
        snprintf(p, sizeof(p), "%s/%s", dir, file_name(i, overlay));
        int fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0) {
            snprintf(err, cap, "cannot make %.300s: %s", p, strerror(errno));
            status = 500;
        } else {
            fds[nfds++] = fd;
        }
    }
    int e = 0;
    /* One request at a time on a sandbox's control socket. */
    pthread_mutex_lock(&sb->control_lock);
    if (!status && (e = snap_control_request(sb->control_fd, fds, nfds, stop))) {
        snprintf(err, cap, "cannot reach the sandbox's VM: %s", strerror(-e));
        status = 500;
    }
    if (!status && (e = snap_control_answer_wait(sb->control_fd, SNAPSHOT_SAVE_MS, err, cap))) {
        if (e == -ETIMEDOUT)
            snprintf(err, cap, "the sandbox's VM did not save itself within %d s",
                     SNAPSHOT_SAVE_MS / 1000);
        else if (e != -EIO)
            snprintf(err, cap, "the sandbox's VM is gone: %s", strerror(-e));
        /* A full disk is the host's state, not the daemon's fault. */
        status = e == -EIO && (strstr(err, "No space left") || strstr(err, "quota")) ? 507 : 500;
    }
    /* What the VM wrote is on disk before anyone is told it is saved. */
    bool saved = !status;
    for (unsigned i = 0; i < nfds; i++) {
        if (!status && fsync(fds[i]) < 0) {
            snprintf(err, cap, "cannot sync the snapshot in %.300s: %s", dir, strerror(errno));
            status = errno == ENOSPC || errno == EDQUOT ? 507 : 500;
        }
        close(fds[i]);
    }
    /* A VM left paused by a save that cannot be kept runs on. */
    char why[SNAP_CONTROL_MSG_MAX];
    if (saved && status && stop && snap_control_resume(sb->control_fd, SNAPSHOT_SAVE_MS, why,
                                                        sizeof(why)))
        fprintf(stderr, "airlock: sandbox %s could not be resumed after a failed pause\n", sb->id);
    pthread_mutex_unlock(&sb->control_lock);
    if (status)
        snapshot_files(dir, true);
    return status;
}

int snapshots_take(struct snapshots *ss, struct sandbox *sb, json_t **out, char *err,
                   size_t cap)
{
    struct snapshot_rec rec = {.mem_mib = sb->mem_mib, .cpus = sb->cpus};
    uint8_t raw[SANDBOX_ID_HEX / 2];
    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
        snprintf(err, cap, "cannot make a snapshot id");
        return 500;
    }
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(rec.id + 2 * i, 3, "%02x", raw[i]);
    snprintf(rec.source, sizeof(rec.source), "%s", sb->id);
    snprintf(rec.image, sizeof(rec.image), "%s", sb->image);
    snprintf(rec.dir, sizeof(rec.dir), "%.4000s/%s", ss->dir, rec.id);
    /* A slot first: a snapshot that cannot be kept is not taken. */
    pthread_mutex_lock(&ss->lock);
    struct snapshot_rec *slot = NULL;
    for (unsigned i = 0; i < SNAPSHOTS_MAX && !slot; i++)
        if (!ss->recs[i].id[0])
            slot = &ss->recs[i];
    if (slot)
        snprintf(slot->id, sizeof(slot->id), "-"); /* taken, not listed yet */
    pthread_mutex_unlock(&ss->lock);
    if (!slot) {
        snprintf(err, cap, "the daemon keeps %d snapshots already (DELETE /v1/snapshots/ID)",
                 SNAPSHOTS_MAX);
        return 503;
    }
    int64_t t0 = agent_mono_ms();
    int status = 0;
    if (mkdir(ss->dir, 0700) < 0 && errno != EEXIST) {
        snprintf(err, cap, "cannot make %.300s: %s", ss->dir, strerror(errno));
        status = 500;
    }
    if (!status)
        status = snapshot_save(sb, rec.dir, false, err, cap);
    if (status) {
        pthread_mutex_lock(&ss->lock);
        slot->id[0] = '\0';
        pthread_mutex_unlock(&ss->lock);
        return status;
    }
    rec.save_ms = (unsigned)(agent_mono_ms() - t0);
    rec.created_ms = agent_wall_ms();
    rec.bytes = snapshot_files(rec.dir, false);
    pthread_mutex_lock(&ss->lock);
    *slot = rec;
    *out = snapshot_json(slot);
    pthread_mutex_unlock(&ss->lock);
    return 0;
}

bool snapshots_find(struct snapshots *ss, const char *id, struct snapshot_rec *copy)
{
    bool found = false;
    pthread_mutex_lock(&ss->lock);
    for (unsigned i = 0; i < SNAPSHOTS_MAX && !found; i++)
        if (ss->recs[i].id[0] != '-' && !strcmp(ss->recs[i].id, id)) {
            *copy = ss->recs[i];
            found = true;
        }
    pthread_mutex_unlock(&ss->lock);
    return found && id[0];
}

bool snapshots_delete(struct snapshots *ss, const char *id)
{
    char dir[PATH_MAX] = "";
    pthread_mutex_lock(&ss->lock);
    for (unsigned i = 0; i < SNAPSHOTS_MAX && !dir[0]; i++)
        if (id[0] && ss->recs[i].id[0] != '-' && !strcmp(ss->recs[i].id, id)) {
            snprintf(dir, sizeof(dir), "%s", ss->recs[i].dir);
            ss->recs[i].id[0] = '\0';
        }
    pthread_mutex_unlock(&ss->lock);
    if (dir[0])
        snapshot_files(dir, true);
    return dir[0];
}

void snapshots_delete_all(struct snapshots *ss)
{
    for (unsigned i = 0; i < SNAPSHOTS_MAX; i++) {
        char id[SANDBOX_ID_HEX + 1];
        pthread_mutex_lock(&ss->lock);
        snprintf(id, sizeof(id), "%s", ss->recs[i].id);
        pthread_mutex_unlock(&ss->lock);
        if (id[0] && id[0] != '-')
            snapshots_delete(ss, id);
    }
    rmdir(ss->dir);
}

json_t *snapshot_json(const struct snapshot_rec *r)
{
    return json_pack("{s:s,s:s,s:s,s:i,s:i,s:I,s:i,s:I}", "id", r->id, "sandbox", r->source,
                     "image", r->image, "mem", r->mem_mib, "cpus", r->cpus, "created_ms",
                     (json_int_t)r->created_ms, "save_ms", r->save_ms, "bytes",
                     (json_int_t)r->bytes);
}

json_t *snapshots_list(struct snapshots *ss)
{
    json_t *arr = json_array();
    pthread_mutex_lock(&ss->lock);
    for (unsigned i = 0; i < SNAPSHOTS_MAX; i++)
        if (ss->recs[i].id[0] && ss->recs[i].id[0] != '-')
            json_array_append_new(arr, snapshot_json(&ss->recs[i]));
    pthread_mutex_unlock(&ss->lock);
    return json_pack("{s:o}", "snapshots", arr);
}
