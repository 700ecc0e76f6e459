/* Who has a volume's disk attached (docs/volumes.md): one writer, or any
 * number of readers, never both.  Two kernels must never mount one ext4
 * where either writes: a reader's kernel caches metadata the writer
 * changes under it (reads of garbage, errors, a panic with errors=panic),
 * and a filesystem a writer left dirty cannot even be mounted read-only
 * without replaying its journal, which a read-only disk refuses.  So a
 * writer waits for no reader and a reader for no writer: each is refused
 * at once (409), naming the holder in its way.
 * A holder is a sandbox (its id, until its daemon destroys it: a paused
 * sandbox, whose VM process is gone, still holds its volumes) or an
 * `airlock run` process (until it ends, even by kill -9: a holder whose
 * process is gone is dropped by the next look). */
#ifndef AIRLOCK_VOLUME_VOLUME_HOLD_H
#define AIRLOCK_VOLUME_VOLUME_HOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/volume/volume_store.h"

/* Adds `who` to the volume's holders if the rule allows.  0 (with
 * *readers_before: other readers held it already, so its disk was
 * checked and no one wrote it since); -ENOENT (no such volume), -EBUSY
 * with *in_way the holder that stands in the way, -EEXIST (who holds it
 * already), -EIO (a damaged record) or the store's -errno. */
int volume_hold(const struct volume_store *vs, const char *name, const struct volume_holder *who,
                bool *readers_before, struct volume_holder *in_way);

/* `who` no longer holds the volume (not there: nothing to do).  0 or -errno. */
int volume_release(const struct volume_store *vs, const char *name, const struct volume_holder *who);

/* Every hold of this sandbox, on every volume: what destroying it calls. */
void volume_release_holder(const struct volume_store *vs, const char *sandbox_id);

/* A daemon starting on the store: every sandbox holder for which kept()
 * says false is dropped (its sandbox died with a daemon before it). */
void volume_prune_sandboxes(const struct volume_store *vs,
                            bool (*kept)(const char *sandbox_id, void *opaque), void *opaque);

/* "sandbox ID" or "airlock run (pid N)", for an error. */
void volume_holder_text(const struct volume_holder *h, char *out, size_t cap);

/* Every holder of rec: "sandbox ID (read-write), airlock run (pid N)
 * (read-only)". */
void volume_holders_text(const struct volume_rec *rec, char *out, size_t cap);

/* This process as a holder (for `airlock run`). */
void volume_holder_self(struct volume_holder *h, bool readonly);

#endif
