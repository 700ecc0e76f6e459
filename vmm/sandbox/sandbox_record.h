/* A paused sandbox's record in the state folder (STATE/sandboxes/ID/
 * sandbox.json), so a daemon started on the same folder lists it paused
 * and can resume it: its shape, its commands' defaults, labels, egress
 * rules, limits, lease, the folder of its saved VM, the identities of
 * the files that VM depends on (vmm/sandbox/vm_identity.h), its published
 * ports and its background commands' records (vmm/sandbox/record_keeps.h:
 * the loader binds the ports again and lists the commands, re-attached
 * when it resumes).  Written whole
 * to a new file, synced and renamed over the old, so a crash leaves the
 * old record or the new, never half of one.  Read as hostile: a record
 * that is not exactly what this code writes is reported and left alone. */
#ifndef AIRLOCK_SANDBOX_SANDBOX_RECORD_H
#define AIRLOCK_SANDBOX_SANDBOX_RECORD_H

#include <stddef.h>

#include "vmm/sandbox/api_routes.h"

#define SANDBOX_RECORD_FILE "sandbox.json"
#define SANDBOX_RECORD_MAX  (1 << 20)

/* Writes sb's record (sb paused: sb->vm_snapshot is its saved VM) into
 * dir.  0 or -errno. */
int sandbox_record_write(struct registry *reg, struct sandbox *sb, const char *dir);

/* Every record under STATE/sandboxes into the registry, as paused
 * sandboxes; one line on stderr for each that cannot be (and it stays as
 * it is on disk).  The count taken. */
unsigned sandbox_records_load(struct api_server *srv);

/* Whether sb's saved VM may be restored with the files here now: 0, or
 * -1 with err naming what changed. */
int sandbox_record_check(const struct sandbox *sb, char *err, size_t cap);

#endif
