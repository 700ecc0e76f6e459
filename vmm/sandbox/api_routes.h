/* The API's paths (all JSON; errors are {"error": ..., "field": ...}):
 *   GET    /v1/version                    {"version": ...}
 *   GET    /v1/sandboxes                  {"sandboxes": [sandbox...]}
 *   POST   /v1/sandboxes                  201 sandbox (+ "how", "create_ms")
 *   GET    /v1/sandboxes/{id}             sandbox
 *   DELETE /v1/sandboxes/{id}             204
 *   POST   /v1/sandboxes/{id}/commands    200, a stream of JSON lines
 *                                         (vmm/sandbox/exec_stream.h)
 *   PUT|GET /v1/sandboxes/{id}/files?path= one file in or out (vmm/sandbox/files.h)
 *   GET    /v1/sandboxes/{id}/directory?path=, /stat?path=   (vmm/sandbox/directory.h)
 *   PUT|GET /v1/sandboxes/{id}/archive?path= a tar in or out (vmm/sandbox/archive.h)
 *   GET    /v1/sandboxes/{id}/audit       its audit records (vmm/sandbox/sandbox_audit.h)
 *   POST   /v1/sandboxes/{id}/snapshot    201, a snapshot of it (vmm/sandbox/snapshots.h)
 *   GET    /v1/snapshots[/{sid}], DELETE /v1/snapshots/{sid}
 *   GET    /v1/pool                       the warm pools (vmm/sandbox/pool.h)
 *   GET    /v1/metrics                    Prometheus text (vmm/sandbox/metrics.h)
 *   GET    /v1/events                     lifecycle events, JSON lines (vmm/sandbox/api_events.h)
 *   GET|POST /v1/volumes, GET|DELETE /v1/volumes/{name}  named volumes
 *                                         (vmm/sandbox/api_volumes.h)
 * and the daemon's supervision of the sandboxes it made. */
#ifndef AIRLOCK_SANDBOX_API_ROUTES_H
#define AIRLOCK_SANDBOX_API_ROUTES_H

#include <limits.h>

#include "vmm/sandbox/api_http.h"
#include "vmm/sandbox/mount_roots.h"
#include "vmm/sandbox/pool.h"
#include "vmm/sandbox/registry.h"
#include "vmm/sandbox/snapshots.h"
#include "vmm/volume/volume_store.h"

/* A lease when create gives none: idle this long, the sandbox goes. */
#define SANDBOX_DEFAULT_LEASE_S 600

struct api_server {
    struct registry reg;
    struct pool pool;
    struct snapshots snaps;
    int audit_fd;                 /* --audit: every sandbox's records (-1: none) */
    pthread_mutex_t audit_lock;   /* one copier at a time (sandbox_audit_forward) */
    /* One private folder per sandbox under it (its agent's socket, its
     * VM's log), and the API's snapshots: made for this daemon, gone with it. */
    char run_dir[PATH_MAX];
    /* --state: what outlives the daemon (vmm/sandbox/daemon_state.h), and
     * its lock's fd. */
    char state_dir[PATH_MAX];
    int state_lock_fd;
    bool on_exit_kill; /* --on-exit kill: stopping destroys every sandbox */
    struct volume_store volumes; /* STATE/volumes (vmm/volume/) */
    struct mount_roots mount_roots; /* --mount-root: where "mounts" sources may be */
};

/* The registry (--max-sandboxes, --max-mem), no --audit log yet. */
void api_server_init(struct api_server *srv, unsigned max, uint64_t max_mem_mib);

/* Serves one request that api_read_request read. */
void api_handle(struct api_server *srv, struct api_conn *c);

/* Once a second: sandboxes whose VM ended, whose lease ran out (idle) or
 * whose max_lifetime_s passed are destroyed (each an event), their audit
 * records copied and counted, their /proc figures sampled when due
 * (vmm/sandbox/sandbox_stats.h). */
void api_supervise(struct api_server *srv);

/* The daemon is stopping: every running sandbox is paused to the state
 * folder (destroyed when that fails), unless --on-exit kill, which
 * destroys them and the paused ones too; pooled ones go. */
void api_stop_all(struct api_server *srv);

#endif
