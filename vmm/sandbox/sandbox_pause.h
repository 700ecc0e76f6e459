/* Pausing a sandbox to disk and resuming it under the same id
 * (POST /v1/sandboxes/{id}/pause and /resume, on_timeout "pause").
 *
 * A pause saves the VM as a snapshot does (its RAM, devices and disk
 * overlay, each file synced) into the daemon's state folder
 * (STATE/sandboxes/ID/vm-N) and ends the VM process: the sandbox stays
 * listed, SB_PAUSED, holding no memory.  A resume restores a new VM
 * process from that folder, with the sandbox's egress rules and limits,
 * and reseeds it (entropy, the clock).  Background commands survive both
 * (they run with AGENT_EXEC_F_KEEP: their threads wait and ATTACH again,
 * vmm/sandbox/background.c); a foreground command's stream could not, so
 * a pause waits for none and is refused while one runs.  Any request that
 * needs the VM resumes a paused sandbox first (sandbox_wake). */
#ifndef AIRLOCK_SANDBOX_SANDBOX_PAUSE_H
#define AIRLOCK_SANDBOX_SANDBOX_PAUSE_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/sandbox/api_routes.h"

/* Pauses sb (the caller holds a reference).  memory false: its file
 * systems are synced first, and only its disks are kept (the memory file
 * saved with them is removed): its resume boots the guest afresh on them
 * (run --cold-boot), without its processes, as E2B's filesystem-only
 * pause does.  0; else the HTTP status (409: it cannot be paused now, the
 * reason in err; 507: the disk is full; 500, also when its files could
 * not be synced), and sb runs on as before. */
int sandbox_pause(struct api_server *srv, struct sandbox *sb, bool memory, char *err, size_t cap);

/* Resumes sb when it is paused (0 at once when it runs).  0; else the
 * HTTP status (503: no room under --max-sandboxes/--max-mem; 404: it
 * went; 500: the restore failed, err says why) and sb stays paused. */
int sandbox_resume(struct api_server *srv, struct sandbox *sb, char *err, size_t cap);

/* A lease that ran out with on_timeout "pause": pauses sb on a thread of
 * its own (the caller's reference is handed over), so the supervision
 * loop never waits for a save. */
void sandbox_pause_async(struct api_server *srv, struct sandbox *sb);

/* The daemon stops: a paused sb's record written again, with its ports
 * and its commands' records as they are now (published or deleted while
 * it was paused; each command's output offset where its connection
 * stopped).  0 (also when sb is not paused) or -errno: the record of its
 * pause stays. */
int sandbox_pause_rewrite(struct api_server *srv, struct sandbox *sb);

/* Its folder in the state folder goes (sb is being destroyed). */
void sandbox_pause_forget(struct api_server *srv, struct sandbox *sb);

/* "running" or "paused", as the API shows a sandbox's state. */
const char *sandbox_state_name(const struct sandbox *sb);

#endif
