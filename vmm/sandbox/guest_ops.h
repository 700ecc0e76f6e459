/* The guest file operations that every API of the daemon calls: /v1's
 * routes (files, directory, stat, move) and the E2B layer (vmm/e2b/).
 * Each takes checked arguments and an agent connection (guest_fs_dial),
 * does its requests, and returns 0 or -errno without answering anything,
 * so each API answers in its own shape (/v1: guest_fs_error). */
#ifndef AIRLOCK_SANDBOX_GUEST_OPS_H
#define AIRLOCK_SANDBOX_GUEST_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/agent_client/agent_client.h"

/* Who gets what an operation makes: AGENT_CHOWN_KEEP for both leaves it
 * root's (the agent's). */
struct guest_owner {
    uint32_t uid, gid;
};
#define GUEST_OWNER_ROOT ((struct guest_owner){AGENT_CHOWN_KEEP, AGENT_CHOWN_KEEP})

/* Folders in a listing with a depth, and how deep it may go. */
#define GUEST_LIST_MAX_ENTRIES 65536
#define GUEST_LIST_MAX_DEPTH   64

/* A folder at path (absolute), mode's permission bits; with parents, the
 * missing folders on its way too (0755), each given to `own`.  *made: the
 * last one was made now (false: it was a folder already).  -ENOTDIR or
 * -EEXIST when a non-folder is in the way. */
int guest_mkdir(int agent, const char *path, uint32_t mode, struct guest_owner own, bool parents,
                bool *made);

/* size bytes from read_fn become the file at path (mode; replaced in
 * place when it exists), given to `own`; with parents, missing folders
 * on its way are made (guest_mkdir's way). */
int guest_write(int agent, const char *path, uint32_t mode, struct guest_owner own, bool parents,
                uint64_t size, agent_read_fn *read_fn, void *opaque);

/* The file at path read whole (at most max bytes: -EFBIG past it) into
 * a new memfd, *fd (rewound) and *size; -errno (-ENOMEM without a memfd). */
int guest_read(int agent, const char *path, uint64_t max, int *fd, uint64_t *size);

/* path's entries, and with depth > 1 those of its subfolders (links are
 * not followed) to that depth, in name order, each folder's entries
 * after it: each(opaque, rel, e) with rel the entry's path below `path`
 * ("a", "a/b"; e->name is its last part).  A nonzero return of each
 * stops it and is returned.  -E2BIG past GUEST_LIST_MAX_ENTRIES;
 * -ENOTDIR when path is not a folder. */
typedef int guest_list_fn(void *opaque, const char *rel, const struct agent_entry *e);
int guest_list(int agent, const char *path, unsigned depth, guest_list_fn *each, void *opaque);

/* rename(2) of from to to (a file at `to` replaced; none with
 * no_replace: -EEXIST). */
int guest_move(int agent, const char *from, const char *to, bool no_replace);
/* path removed (a folder only when empty, unless recursive). */
int guest_remove(int agent, const char *path, bool recursive);

/* A path's parent folder into out (AGENT_MAX_PATH bytes): "/a/b" -> "/a",
 * "/a" -> "/". */
void guest_parent(const char *path, char *out);

#endif
