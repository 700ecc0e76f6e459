/* Limits a task cannot escape (docs/security.md "Limits"): the token bucket the
 * serial console is metered with, and the one place a limit that fired is
 * reported: one stderr line, and with `airlock run --audit` one record
 * {"event":"limit","limit":NAME,"max":M,"dropped_bytes":N}.
 *
 * Each limit drops or refuses what is beyond it; none ends the VM, so the
 * command's own status is still what airlock exits with. */
#ifndef AIRLOCK_AUDIT_LIMITS_H
#define AIRLOCK_AUDIT_LIMITS_H

#include <stdint.h>

#include "vmm/audit/audit.h"

struct disk;

/* A token bucket over bytes: `rate` bytes per second on average, up to
 * `burst` at once.  Credit is kept in byte-nanoseconds, so metering one
 * byte at a time loses nothing to rounding. */
struct rate_limit {
    uint64_t rate;    /* bytes per second; 0 = no limit */
    uint64_t max;     /* burst x 1e9 */
    uint64_t credit;  /* byte-nanoseconds available */
    uint64_t last_ns; /* when credit was last topped up */
};

/* Starts full (a burst may pass at once).  rate 0 lets everything through.
 * burst is capped at 16 GiB so the credit fits 64 bits. */
void rate_limit_init(struct rate_limit *rl, uint64_t rate, uint64_t burst);

/* How many of n bytes may pass at monotonic time now_ns (the rest are to
 * be dropped); the passed bytes are spent.  A clock that goes backwards
 * adds no credit. */
uint64_t rate_limit_take(struct rate_limit *rl, uint64_t now_ns, uint64_t n);

/* CLOCK_MONOTONIC in nanoseconds (the vDSO: no system call, fine on a vCPU
 * thread). */
uint64_t limits_now_ns(void);

/* Where limit records go (airlock run's --audit); NULL: stderr only.  Set
 * before any thread starts: the pointer is read without a lock. */
void limits_set_audit(const struct audit *a);

/* Where the stderr lines go: stderr's non-blocking twin (vmm/util/nbfd.h), so a
 * reader who stopped reading cannot hold up the thread that reports (a
 * vCPU, the command's thread on --timeout); default stderr.  Set before
 * any thread starts. */
void limits_set_err_fd(int fd);

/* Reports a limit that fired: "airlock: <fmt...>" on stderr and the audit
 * record above.  Callers report each limit once. */
void limit_report(const char *limit, uint64_t max, uint64_t dropped, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* disk_set_on_full callback: the copy-on-write overlay refused a write
 * (the guest got an I/O error).  opaque: the flag that set the cap. */
void limits_disk_full(void *opaque, const struct disk *d, uint64_t refused);

/* The record alone, into `a` (the daemon writes its sandboxes' own). */
void limit_record(const struct audit *a, const char *limit, uint64_t max, uint64_t dropped);

#endif
