/* The files a saved VM depends on, and their identities: this airlock
 * binary (which also fixes the snapshot format and the CPUID it gives),
 * the image's disk, the kernel and the agent's disk, each by path, device,
 * inode, size and mtime.  The pool's cache key is made of them, and a
 * paused sandbox records them, so a restore after any of them changed is
 * refused by name instead of failing somewhere in the guest. */
#ifndef AIRLOCK_SANDBOX_VM_IDENTITY_H
#define AIRLOCK_SANDBOX_VM_IDENTITY_H

#include <limits.h>
#include <stddef.h>

#include <jansson.h>

#define VM_IDENTITY_FILES 4

struct vm_identity {
    const char *what[VM_IDENTITY_FILES]; /* "the airlock binary", ... */
    char path[VM_IDENTITY_FILES][PATH_MAX];
};

/* The files of a VM of this image (as --image takes it) and vCPUs. */
void vm_identity_files(const char *image, unsigned cpus, struct vm_identity *id);

/* One file's identity as a line ("PATH DEV INO SIZE MTIME\n", or "PATH
 * missing\n"): its length. */
int vm_identity_line(const char *path, char *out, size_t cap);

/* {"the airlock binary": "LINE", ...} of every file. */
json_t *vm_identity_json(const struct vm_identity *id);

/* Whether the files are still what `saved` (vm_identity_json's) says:
 * 0, or -1 with err naming the first that changed. */
int vm_identity_check(const struct vm_identity *id, json_t *saved, char *err, size_t cap);

#endif
