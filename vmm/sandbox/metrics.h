/* The daemon's metrics (GET /v1/metrics, Prometheus's text format,
 * vmm/sandbox/prom_text.h): every name starts with airlock_.  Counters
 * are the daemon's own since it started; the gauges (sandboxes by state,
 * pool ready, the daemon's RSS) are read as the request is answered.
 *
 * The counters live in one place per process (one daemon per process),
 * so that every layer that does something counted (a create, a command, a
 * pause) calls a hook here without carrying a handle. */
#ifndef AIRLOCK_SANDBOX_METRICS_H
#define AIRLOCK_SANDBOX_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/sandbox/prom_text.h"

struct api_server;
struct api_conn;

/* A create that succeeded: how ("pool", "restore", "cold", as its answer
 * says) and how long it took. */
void metrics_count_create(const char *how, unsigned create_ms);
/* A command started in a sandbox (foreground, background or on a pty). */
void metrics_count_command(void);
/* A sandbox paused, or resumed (the pause and resume routes call these). */
void metrics_count_pause(void);
void metrics_count_resume(void);
/* How many named volumes there are now (the volume routes set it). */
void metrics_set_volumes(unsigned n);
/* From the sandboxes' audit records (vmm/sandbox/audit_tally.h): an
 * egress request allowed or denied, a connection's bytes each way, a
 * limit that fired. */
void metrics_count_egress(bool allowed);
void metrics_count_egress_bytes(uint64_t out, uint64_t in);
void metrics_count_limit(void);

/* The whole exposition into b. */
void metrics_text(struct api_server *srv, struct prom_buf *b);

/* GET /v1/metrics. */
void metrics_get(struct api_server *srv, struct api_conn *c);

#endif
