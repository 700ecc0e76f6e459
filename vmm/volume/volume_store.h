/* Named volumes (docs/volumes.md): each an ext4 disk file NAME.ext4 and
 * its record NAME.json in a state folder's volumes/, shared by the daemon
 * (`airlock serve --state DIR`) and `airlock run --volume` / `airlock
 * volume` on the same folder.  Every read and change of the records is
 * under flock(2) on the volumes/ folder itself (each call opens it anew,
 * so two threads of one process exclude each other too); a record is
 * replaced whole (a temporary written, fsync'ed, renamed over it, the
 * folder fsync'ed), so a crash leaves the old record or the new one.
 * A record names the volume's holders (volume_hold.h): who has its disk
 * attached now. */
#ifndef AIRLOCK_VOLUME_VOLUME_STORE_H
#define AIRLOCK_VOLUME_VOLUME_STORE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "vmm/volume/volume_name.h"

#define VOLUME_STORE_DIR "volumes"
/* Holders of one volume at once: one writer, or readers (a daemon has at
 * most 256 sandboxes). */
#define VOLUME_HOLDERS_MAX 256
/* A record file past this is damaged (256 holders take under 40 KiB). */
#define VOLUME_RECORD_MAX (256 * 1024)
/* The most volumes a store lists. */
#define VOLUME_LIST_MAX 4096

/* A sandbox of a daemon on this state folder (its id), or an `airlock
 * run` process (its pid and its start time, vmm/util/proc_start.h, so a
 * pid used again is not taken for it). */
struct volume_holder {
    char sandbox[40];
    long pid;
    unsigned long long pid_start;
    bool readonly;
};

struct volume_rec {
    char name[VOLUME_NAME_MAX + 1];
    uint32_t size_mib;
    int64_t created_ms;     /* wall clock */
    uint64_t used_bytes;    /* the disk file's allocated bytes (not in the file) */
    unsigned nholders;
    struct volume_holder h[VOLUME_HOLDERS_MAX];
};

struct volume_store {
    char dir[PATH_MAX - 128]; /* STATE/volumes; room for NAME.ext4 after it */
};

/* STATE/volumes made (0700, with STATE) if missing; its path kept.  0, or
 * -1 with err naming the folder and why. */
int volume_store_open(struct volume_store *vs, const char *state_dir, char *err, size_t cap);

/* The paths of a volume's disk and record. */
void volume_disk_path(const struct volume_store *vs, const char *name, char *out, size_t cap);

/* The store's lock (LOCK_EX when excl, else LOCK_SH): an fd to close to
 * release it, or -errno. */
int volume_store_lock(const struct volume_store *vs, bool excl);
void volume_store_unlock(int lock_fd);

/* Under the lock: a record read (-ENOENT: no such volume, -EIO: a
 * damaged record) or written in place atomically (0 or -errno). */
int volume_store_read(const struct volume_store *vs, const char *name, struct volume_rec *rec);
int volume_store_write(const struct volume_store *vs, const struct volume_rec *rec);

/* A new volume: its disk made with mke2fs (ext4, 4 KiB blocks, no
 * reserved blocks, the root folder owned by 65534, the user commands run
 * as), a sparse file of size_mib MiB, then its record.  0 with *rec;
 * -EEXIST (a record of that name), -EINVAL (a bad name or size), or
 * -errno with err saying which step failed and mke2fs's last line. */
int volume_create(const struct volume_store *vs, const char *name, uint32_t size_mib,
                  struct volume_rec *rec, char *err, size_t cap);

/* One volume's record, its holders that are gone left out (volume_hold.h
 * says which are).  0, -ENOENT or -EIO. */
int volume_get(const struct volume_store *vs, const char *name, struct volume_rec *rec);

/* Every volume's name, sorted (at most VOLUME_LIST_MAX), into a malloc'ed
 * array of *n names; free each and the array.  0 or -errno. */
int volume_names(const struct volume_store *vs, char ***names, size_t *n);

/* Removes a volume that no one holds: its record, then its disk.  0,
 * -ENOENT, or -EBUSY with *rec naming its holders. */
int volume_remove(const struct volume_store *vs, const char *name, struct volume_rec *rec);

/* An `airlock run` holder is gone once its process is (or its pid is
 * another process's now); a sandbox's holds until its daemon releases it
 * (volume_hold.h). */
bool volume_holder_alive(const struct volume_holder *h);

/* A record as the API shows it: name, size_mib, used_bytes, created_ms,
 * holders [{"sandbox": ID | "pid": N, "readonly": B}]. */
json_t *volume_rec_json(const struct volume_rec *rec);

/* Such a record (or a record file's JSON) back into *rec, each field
 * checked: 0, or -EIO when one is missing or out of bounds. */
int volume_rec_from_json(json_t *o, struct volume_rec *rec);

#endif
