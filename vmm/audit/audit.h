/* The audit log (--audit FILE): one JSON object per line, one line per
 * event, written by airlock on the host, never by anything in the guest.
 * Every record carries "time" (UTC, ISO 8601 with milliseconds), "vm" (a
 * random id per airlock run) and "event"; the rest are the event's fields.
 *
 * A record is built in memory and written with one write(2) on an O_APPEND
 * file, so records from concurrent threads (or several airlock runs
 * sharing one file) never interleave. */
#ifndef AIRLOCK_AUDIT_AUDIT_H
#define AIRLOCK_AUDIT_AUDIT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUDIT_RECORD_MAX 16384 /* a longer record is cut at a field boundary */

struct audit {
    int fd;          /* -1: no --audit, every call is a no-op */
    char vm_id[17];  /* 16 hex digits */
};

/* Opens (creates, appends to) path; -errno. */
int audit_open(struct audit *a, const char *path);
/* Its records carry `id` (16 lowercase hex digits) as "vm" instead of a
 * random one: a sandbox's VM and its daemon write under the sandbox's id.
 * -EINVAL for anything else. */
int audit_set_id(struct audit *a, const char *id);
/* No log: records are dropped. */
void audit_none(struct audit *a);
void audit_close(struct audit *a);

/* A record under construction. */
struct audit_rec {
    char buf[AUDIT_RECORD_MAX];
    size_t len;
    bool full;
};

/* Starts a record for `event`. */
void audit_begin(const struct audit *a, struct audit_rec *r, const char *event);
/* Fields: key names are ours (plain ASCII); string values may be anything
 * the guest chose and are escaped (control bytes as \u00XX, bytes >= 0x80
 * as \u00XX too: the log stays ASCII whatever the guest sends). */
void audit_str(struct audit_rec *r, const char *key, const char *val);
void audit_strn(struct audit_rec *r, const char *key, const char *val, size_t len);
void audit_u64(struct audit_rec *r, const char *key, uint64_t val);
void audit_i64(struct audit_rec *r, const char *key, int64_t val);
void audit_bool(struct audit_rec *r, const char *key, bool val);
/* "key":["a","b",...] */
void audit_strv(struct audit_rec *r, const char *key, const char *const *v, size_t n);
/* "key":[1,2,...] */
void audit_u64v(struct audit_rec *r, const char *key, const uint64_t *v, size_t n);
/* Ends the record and writes it; 0 or -errno (a failed write is reported
 * by the caller once: an audit that silently stops would be worse). */
int audit_end(const struct audit *a, struct audit_rec *r);

#endif
