#include "vmm/sandbox/events.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmm/util/mono_deadline.h"
#include "vmm/util/utc_time.h"

static const char *const names[EVENT_TYPES] = {
    [EVENT_CREATED] = "created",     [EVENT_PAUSED] = "paused",
    [EVENT_RESUMED] = "resumed",     [EVENT_LEASE_EXPIRED] = "lease_expired",
    [EVENT_KILLED] = "killed",       [EVENT_EXITED] = "exited",
    [EVENT_LIMIT] = "limit",         [EVENT_EGRESS_DENIED] = "egress_denied",
};

const char *event_type_name(enum event_type t)
{
    return (unsigned)t < EVENT_TYPES ? names[t] : "?";
}

int event_type_parse(const char *s, size_t n)
{
    for (int t = 0; t < EVENT_TYPES; t++)
        if (strlen(names[t]) == n && !memcmp(names[t], s, n))
            return t;
    return -1;
}

struct events events_daemon = {.lock = PTHREAD_MUTEX_INITIALIZER};

void events_init(struct events *bus)
{
    memset(bus, 0, sizeof(*bus));
    pthread_mutex_init(&bus->lock, NULL);
}

int events_subscribe(struct events *bus, struct events_sub *s)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* a wall clock jump is no timeout */
    pthread_cond_init(&s->more, &ca);
    pthread_condattr_destroy(&ca);
    s->bus = bus;
    s->head = s->n = 0;
    pthread_mutex_lock(&bus->lock);
    int rc = -EBUSY;
    if (bus->nsubs < EVENTS_SUBSCRIBERS_MAX) {
        bus->subs[bus->nsubs++] = s;
        rc = 0;
    }
    pthread_mutex_unlock(&bus->lock);
    if (rc)
        pthread_cond_destroy(&s->more);
    return rc;
}

void events_unsubscribe(struct events_sub *s)
{
    struct events *bus = s->bus;
    pthread_mutex_lock(&bus->lock);
    for (unsigned i = 0; i < bus->nsubs; i++)
        if (bus->subs[i] == s) {
            bus->subs[i] = bus->subs[--bus->nsubs];
            break;
        }
    for (; s->n; s->n--, s->head = (s->head + 1) % (EVENTS_QUEUE_MAX + 1))
        free(s->q[s->head].line);
    pthread_mutex_unlock(&bus->lock);
    pthread_cond_destroy(&s->more);
}

static bool wants(const struct events_sub *s, enum event_type t, const char *id)
{
    if (s->types && !(s->types & (1u << t)))
        return false;
    return !s->sandbox[0] || (id && !strcmp(s->sandbox, id));
}

/* Under the bus's lock.  A line goes in while fewer than EVENTS_QUEUE_MAX
 * wait; past that, the item after the last line counts what is lost (the
 * spare slot holds it), so the queue never passes EVENTS_QUEUE_MAX + 1. */
static void enqueue(struct events *bus, struct events_sub *s, const char *text)
{
    const size_t ring = EVENTS_QUEUE_MAX + 1;
    struct events_item *last = s->n ? &s->q[(s->head + s->n - 1) % ring] : NULL;
    char *copy = s->n < EVENTS_QUEUE_MAX ? strdup(text) : NULL;
    if (copy) {
        s->q[(s->head + s->n++) % ring] = (struct events_item){copy, 0};
    } else {
        bus->dropped++;
        if (last && !last->line)
            last->dropped++;
        else if (s->n < ring) /* full, or out of memory: either way lost */
            s->q[(s->head + s->n++) % ring] = (struct events_item){NULL, 1};
    }
    pthread_cond_signal(&s->more);
}

/* o as one line, its newline included. */
static char *line_of(json_t *o)
{
    char *text = json_dumps(o, JSON_COMPACT);
    size_t len = text ? strlen(text) : 0;
    char *line = text ? realloc(text, len + 2) : NULL;
    if (!line) {
        free(text);
        return NULL;
    }
    line[len] = '\n';
    line[len + 1] = '\0';
    return line;
}

void events_publish(struct events *bus, enum event_type t, const char *id, json_t *fields)
{
    char now[UTC_TIME_LEN];
    utc_time_now(now);
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string(event_type_name(t)));
    json_object_set_new(o, "id", id ? json_string(id) : json_null());
    json_object_set_new(o, "time", json_string(now));
    if (fields)
        json_object_update(o, fields);
    json_decref(fields);
    char *text = NULL;
    pthread_mutex_lock(&bus->lock);
    for (unsigned i = 0; i < bus->nsubs; i++) {
        if (!wants(bus->subs[i], t, id))
            continue;
        if (!text) /* made once, only when someone takes it */
            text = line_of(o);
        if (text)
            enqueue(bus, bus->subs[i], text);
    }
    pthread_mutex_unlock(&bus->lock);
    free(text);
    json_decref(o);
}

int events_next(struct events_sub *s, unsigned timeout_ms, char **line, uint64_t *dropped)
{
    struct events *bus = s->bus;
    struct timespec until = mono_after_ms(timeout_ms);
    pthread_mutex_lock(&bus->lock);
    while (!s->n && pthread_cond_timedwait(&s->more, &bus->lock, &until) != ETIMEDOUT)
        ;
    int got = s->n > 0;
    if (got) {
        *line = s->q[s->head].line;
        *dropped = s->q[s->head].dropped;
        s->head = (s->head + 1) % (EVENTS_QUEUE_MAX + 1);
        s->n--;
    }
    pthread_mutex_unlock(&bus->lock);
    return got;
}

void events_emit(enum event_type t, const char *id, json_t *fields)
{
    events_publish(&events_daemon, t, id, fields);
}
