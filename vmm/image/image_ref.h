/* What an --image value (run, snapshot, sandbox-vm, a sandbox's create)
 * names, one rule for all of them:
 *   "python" (also no --image) and "small": the built-in images, disks
 *     airlock builds with the agent inside (guest/ beside the binary);
 *   a name in the image store (airlock image import): its disk, booted
 *     with the agent from airlock's agent disk (guest/agent.ext4), and
 *     its config's defaults;
 *   anything with a '/' (or an existing file that is no store name): a
 *     disk file of the built-in kind, with its own /sbin/airlock-agent. */
#ifndef AIRLOCK_IMAGE_IMAGE_REF_H
#define AIRLOCK_IMAGE_IMAGE_REF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "vmm/image/image_store.h"

/* The small read-only disk that boots imported images (its /init is the
 * agent; guest/build-agent-disk.sh). */
#define IMAGE_AGENT_DISK "agent.ext4"

struct image_ref {
    char name[IMAGE_NAME_MAX + 1]; /* as given, or "python" */
    char disk[PATH_MAX];
    bool own_agent; /* the disk's /sbin/airlock-agent is PID 1 (built in, a path) */
    json_t *rec;    /* an imported image's store record (config defaults,
                     * uid/gid), else NULL */
};

/* 0, or -1 with err naming the value ("--image 'x': no such image ..."). */
int image_ref_resolve(const char *image, struct image_ref *ref, char *err, size_t cap);
void image_ref_release(struct image_ref *ref);

/* `--root-disk FILE`: an ext4 root disk with no agent of its own and no
 * config, booted as an imported image is (airlock's agent disk as /init):
 * the OCI runtime's disks of a bundle's root folder.  0, or -1 with err
 * when the file is not there. */
int image_ref_bare_disk(const char *path, struct image_ref *ref, char *err, size_t cap);

/* A built-in image's record as `airlock image ls/inspect` shows it
 * ({"name", "builtin": true, "disk", "bytes"}), NULL for any other name. */
json_t *image_builtin_record(const char *name);
bool image_is_builtin(const char *name);

#endif
