/* What a sandbox's VM costs the host, from /proc: the `airlock
 * sandbox-vm` process and every process under it (the VM process it
 * forks, jailed or not, and the egress broker): CPU time (utime + stime
 * of /proc/PID/stat), RSS and PSS (/proc/PID/smaps_rollup), and the bytes
 * its copy-on-write disk overlays hold (unlinked files in $TMPDIR,
 * devices/disk_cow.c, found through /proc/PID/fd, their allocated
 * blocks).
 *
 * A sample is kept in the sandbox (struct sandbox_stats) and is at most
 * SANDBOX_STATS_MAX_AGE_MS old when its record is read: the daemon's
 * once-a-second supervision refreshes what is due, and a GET finding one
 * older (a sandbox just made) samples it first.  /proc is read without
 * the registry's lock, /proc once for all the sandboxes due. */
#ifndef AIRLOCK_SANDBOX_SANDBOX_STATS_H
#define AIRLOCK_SANDBOX_SANDBOX_STATS_H

#include <stdint.h>

#include <jansson.h>

#include "vmm/sandbox/registry.h"

#define SANDBOX_STATS_MAX_AGE_MS 5000
/* Supervision samples a little before the bound, so a record never
 * passes it between two of its rounds. */
#define SANDBOX_STATS_REFRESH_MS 4000

/* Samples the running sandboxes whose sample is older than max_age_ms
 * (or that have none).  Takes the registry's lock only to find them and
 * to store what was read. */
void sandbox_stats_refresh(struct registry *reg, int64_t max_age_ms);

/* The same for one sandbox the caller holds a reference to. */
void sandbox_stats_refresh_one(struct registry *reg, struct sandbox *sb, int64_t max_age_ms);

/* Its record's fields: cpu_ms, cpu_pct, rss_bytes, pss_bytes,
 * overlay_bytes, egress_bytes {"out","in"} and stats_ms (when sampled;
 * null before the first sample).  Under the registry's lock. */
void sandbox_stats_json(const struct sandbox *sb, json_t *o);

#endif
