/* Snapshots of running sandboxes (POST /v1/sandboxes/{id}/snapshot): the
 * VM is paused, saved into a folder of the daemon's and resumed
 * (vmm/snapshot/snapshot_control.h); new sandboxes are then restored from it
 * (create with "snapshot": ID), each a private copy-on-write copy, so an
 * environment set up once (packages installed, files written) is forked
 * as often as needed.  A snapshot outlives its sandbox and goes with
 * DELETE /v1/snapshots/{id} or when the daemon stops. */
#ifndef AIRLOCK_SANDBOX_SNAPSHOTS_H
#define AIRLOCK_SANDBOX_SNAPSHOTS_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "vmm/sandbox/registry.h"

#define SNAPSHOTS_MAX     32
#define SNAPSHOT_SAVE_MS  300000 /* the VM's save (RAM to a file), in the slow lab too */

struct snapshot_rec {
    char id[SANDBOX_ID_HEX + 1]; /* "" when the slot is free */
    char dir[PATH_MAX];
    char source[SANDBOX_ID_HEX + 1];
    char image[PATH_MAX];
    unsigned mem_mib, cpus;
    int64_t created_ms;
    unsigned save_ms;
    uint64_t bytes;  /* on disk (the memory file's holes not counted) */
};

struct snapshots {
    pthread_mutex_t lock;
    char dir[PATH_MAX]; /* STATE_DIR/snapshots */
    struct snapshot_rec recs[SNAPSHOTS_MAX];
};

void snapshots_init(struct snapshots *ss, const char *run_dir);

/* Saves sb (a running sandbox the caller holds a reference to).  0 with
 * *out the new record's JSON; else the HTTP status to answer, err saying
 * why (nothing left behind). */
int snapshots_take(struct snapshots *ss, struct sandbox *sb, json_t **out, char *err,
                   size_t cap);

/* A copy of the record `id`: whether there is one. */
bool snapshots_find(struct snapshots *ss, const char *id, struct snapshot_rec *copy);

/* Removes it: whether there was one.  Sandboxes restored from it keep
 * running (their RAM maps a file that stays until they end). */
bool snapshots_delete(struct snapshots *ss, const char *id);
void snapshots_delete_all(struct snapshots *ss);

/* Saves sb's VM (running; the caller holds a reference) into dir, made
 * here and new: the VM pauses, writes its state, RAM and disk overlay,
 * and runs on (with stop: stays paused, to be ended); every file is
 * synced before this returns.  0, or the HTTP status to answer (507: the
 * disk is full) with err saying why, nothing left of dir, and the VM
 * running. */
int snapshot_save(struct sandbox *sb, const char *dir, bool stop, char *err, size_t cap);
/* The bytes a snapshot folder takes on disk (holes not counted); with
 * remove, its files and the folder go too. */
uint64_t snapshot_files(const char *dir, bool remove);

json_t *snapshot_json(const struct snapshot_rec *rec);
/* {"snapshots": [...]} */
json_t *snapshots_list(struct snapshots *ss);

#endif
