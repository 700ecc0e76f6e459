/* The state file's layout as data: one table per node kind saying which
 * property holds which member of struct snap_state, how it is encoded and
 * which values are allowed.  The writer and the reader (snapshot_file.c)
 * both walk these tables and both call the checks below, so the two cannot
 * disagree about what a valid file is.  The layout itself is described in
 * vmm/snapshot/snapshot_file.h. */
#ifndef AIRLOCK_SNAPSHOT_SNAPSHOT_FIELDS_H
#define AIRLOCK_SNAPSHOT_SNAPSHOT_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/snapshot/snapshot_state.h"

enum snap_kind {
    SNAP_UINT, /* an integer member of 1, 2, 4 or 8 bytes: a u32 cell, u64 for 8 */
    SNAP_STR,  /* a char array: one NUL-terminated string that fits it */
    SNAP_RAW,  /* a uapi struct, byte for byte */
    SNAP_MSRS, /* struct snap_vcpu's nmsrs + msrs[]: (u32 index, u64 data) records */
    SNAP_CPUID, /* struct snap_vcpu's ncpuid + cpuid[]: 7 u32 per record (function,
                 * index, flags, eax, ebx, ecx, edx) */
};

#define SNAP_STR_NONEMPTY 1u
#define SNAP_STR_NAME     2u /* a plain file name inside the snapshot directory */

struct snap_field {
    const char *name;   /* property name */
    enum snap_kind kind;
    size_t off, size;   /* the member's offset in the node's struct, and sizeof */
    uint64_t min, max;  /* SNAP_UINT: allowed values */
    unsigned flags;     /* SNAP_STR: SNAP_STR_* */
};

/* A node kind: its name ("vcpu" for vcpu@N) and its properties. */
struct snap_node {
    const char *name;
    const struct snap_field *fields;
    size_t nfields;
};

/* Nodes that occur once, in the order they are written; their members are
 * offsets in struct snap_state. */
extern const struct snap_node snap_singletons[];
extern const size_t snap_nsingletons;
/* Indexed nodes: members are offsets in struct snap_virtio, snap_queue,
 * snap_disk and snap_vcpu. */
extern const struct snap_node snap_virtio_node, snap_queue_node, snap_disk_node, snap_vcpu_node;

/* The bytes of one record in a vcpu's msrs and cpuid. */
#define SNAP_MSR_RECORD   12
#define SNAP_CPUID_RECORD 28

/* Shared checks, each -EINVAL with err as "state: PATH/NAME WHAT".  `path`
 * is the node's path ("/disk@1"). */
int snap_check_uint(const char *path, const struct snap_field *f, uint64_t v, char *err,
                    size_t errlen);
int snap_check_text(const char *path, const struct snap_field *f, const char *text, char *err,
                    size_t errlen);
/* Rules that tie a disk's fields together. */
int snap_check_disk(const char *path, const struct snap_disk *d, char *err, size_t errlen);

/* Formats err as "state: " + fmt and returns -EINVAL. */
int snap_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
