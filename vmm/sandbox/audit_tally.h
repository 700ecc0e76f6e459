/* A sandbox's audit records counted as they come: what its VM's egress
 * proxy decided ("egress" records: decision allow or deny), the bytes of
 * its connections that ended ("egress_end": bytes_out, bytes_in), and the
 * limits that fired ("limit", the VM's and its commands').  They become
 * the daemon's metrics (vmm/sandbox/metrics.h), the sandbox's egress_out
 * and egress_in, and the events egress_denied and limit
 * (vmm/sandbox/events.h).  The records are the one channel: nothing
 * else reports these from the VM process. */
#ifndef AIRLOCK_SANDBOX_AUDIT_TALLY_H
#define AIRLOCK_SANDBOX_AUDIT_TALLY_H

#include <stddef.h>

#include "vmm/sandbox/registry.h"

/* Counts the records of sb's log not counted yet (sb->audit_tallied),
 * whole lines only.  One caller at a time per sandbox (the daemon's
 * audit_lock); the registry's lock is taken only to add to sb's bytes. */
void audit_tally(struct registry *reg, struct sandbox *sb);

/* One record (a line without its newline) of sandbox `id`: what it
 * counts, into the metrics and events; its egress bytes added to *out
 * and *in.  Lines that are not records of these kinds count nothing. */
void audit_tally_line(const char *id, const char *line, size_t len, uint64_t *out, uint64_t *in);

#endif
