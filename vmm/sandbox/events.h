/* The daemon's lifecycle events (GET /v1/events, vmm/sandbox/api_events.h):
 * each is one JSON line {"type", "id" (the sandbox), "time" (RFC 3339 UTC,
 * ms), and what else it is about}, made once and queued for every
 * subscriber whose filters take it.
 *
 * A subscriber's queue is bounded (EVENTS_QUEUE_MAX lines): one that
 * reads too slowly loses the events past it, and the lines it still gets
 * say so in their place ({"type":"overflow","dropped":N} between the
 * lines before the loss and those after it); never silent, never
 * unbounded memory.  There are at most EVENTS_SUBSCRIBERS_MAX subscribers
 * at once. */
#ifndef AIRLOCK_SANDBOX_EVENTS_H
#define AIRLOCK_SANDBOX_EVENTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "vmm/sandbox/registry.h"

#define EVENTS_QUEUE_MAX       256
#define EVENTS_SUBSCRIBERS_MAX 16

enum event_type {
    EVENT_CREATED,       /* how, image, create_ms */
    EVENT_PAUSED,
    EVENT_RESUMED,
    EVENT_LEASE_EXPIRED, /* reason: "idle" (timeout_s) or "max_lifetime" */
    EVENT_KILLED,        /* DELETE (either API) */
    EVENT_EXITED,        /* its VM process ended on its own */
    EVENT_LIMIT,         /* a limit fired: its audit record's limit, max, dropped_bytes */
    EVENT_EGRESS_DENIED, /* host, port, status, reason */
    EVENT_TYPES
};

/* "created", "paused", ... as the lines and the ?type= filter spell them. */
const char *event_type_name(enum event_type t);
/* The type named by the n bytes at s, or -1. */
int event_type_parse(const char *s, size_t n);

/* One queued line, or (line NULL) an overflow of `dropped` events. */
struct events_item {
    char *line;
    uint64_t dropped;
};

struct events;

struct events_sub {
    struct events *bus;
    unsigned types;                     /* bit per enum event_type; 0: all */
    char sandbox[SANDBOX_ID_HEX + 1];   /* only this sandbox's; "": all */
    /* One slot more than the bound: the overflow item that follows a full queue. */
    struct events_item q[EVENTS_QUEUE_MAX + 1];
    size_t head, n;
    pthread_cond_t more;
};

struct events {
    pthread_mutex_t lock;
    struct events_sub *subs[EVENTS_SUBSCRIBERS_MAX];
    unsigned nsubs;
    uint64_t dropped; /* events lost to slow subscribers, all told */
};

void events_init(struct events *bus);

/* Adds s (its types and sandbox set by the caller) to the bus: 0, or
 * -EBUSY when EVENTS_SUBSCRIBERS_MAX are subscribed already. */
int events_subscribe(struct events *bus, struct events_sub *s);
/* Takes it off and drops what it had queued. */
void events_unsubscribe(struct events_sub *s);

/* An event of sandbox `id` (NULL: none) with more fields (an object, its
 * reference taken; NULL: none) to every subscriber that wants it. */
void events_publish(struct events *bus, enum event_type t, const char *id, json_t *fields);

/* The next item, waiting at most timeout_ms: 1 with *line (the caller's
 * to free, ending in its newline) or, *line NULL, an overflow of *dropped
 * events; 0 when nothing came. */
int events_next(struct events_sub *s, unsigned timeout_ms, char **line, uint64_t *dropped);

/* The daemon's bus (one daemon per process), and events_publish on it:
 * what the layers that make, pause, resume and end sandboxes call. */
extern struct events events_daemon;
void events_emit(enum event_type t, const char *id, json_t *fields);

#endif
