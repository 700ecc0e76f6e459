#include "vmm/sandbox/metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/sandbox/api_routes.h"
#include "vmm/sandbox/events.h"

/* Creates take from a pooled VM in milliseconds, restore in a fraction
 * of a second to seconds, boot cold in seconds to (in a nested lab)
 * a minute or two: buckets from 50 ms to 120 s. */
static const double create_bounds[] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120};
#define CREATE_BUCKETS (sizeof(create_bounds) / sizeof(create_bounds[0]))

static const char *const hows[] = {"pool", "restore", "cold"};
#define HOWS (sizeof(hows) / sizeof(hows[0]))

static struct {
    pthread_mutex_t lock;
    uint64_t creates[HOWS];
    uint64_t create_counts[CREATE_BUCKETS + 1];
    struct prom_histogram create_s;
    uint64_t commands, pauses, resumes, limits;
    uint64_t egress_allowed, egress_denied, egress_out, egress_in;
    unsigned volumes;
} m = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .create_s = {.bounds = create_bounds, .n = CREATE_BUCKETS, .counts = m.create_counts},
};

void metrics_count_create(const char *how, unsigned create_ms)
{
    pthread_mutex_lock(&m.lock);
    for (size_t i = 0; i < HOWS; i++)
        if (how && !strcmp(how, hows[i]))
            m.creates[i]++;
    prom_histogram_observe(&m.create_s, create_ms / 1000.0);
    pthread_mutex_unlock(&m.lock);
}

#define BUMP(field, by)                  \
    do {                                 \
        pthread_mutex_lock(&m.lock);     \
        m.field += (by);                 \
        pthread_mutex_unlock(&m.lock);   \
    } while (0)

void metrics_count_command(void) { BUMP(commands, 1); }
void metrics_count_pause(void) { BUMP(pauses, 1); }
void metrics_count_resume(void) { BUMP(resumes, 1); }
void metrics_count_limit(void) { BUMP(limits, 1); }

void metrics_set_volumes(unsigned n)
{
    pthread_mutex_lock(&m.lock);
    m.volumes = n;
    pthread_mutex_unlock(&m.lock);
}

void metrics_count_egress(bool allowed)
{
    pthread_mutex_lock(&m.lock);
    if (allowed)
        m.egress_allowed++;
    else
        m.egress_denied++;
    pthread_mutex_unlock(&m.lock);
}

void metrics_count_egress_bytes(uint64_t out, uint64_t in)
{
    pthread_mutex_lock(&m.lock);
    m.egress_out += out;
    m.egress_in += in;
    pthread_mutex_unlock(&m.lock);
}

/* The daemon's resident set, from /proc/self/statm (its second field,
 * in pages); 0 when it cannot be read. */
static double self_rss(void)
{
    FILE *f = fopen("/proc/self/statm", "re");
    unsigned long long size = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%llu %llu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

/* The registry's states by name (SB_GONE: its VM is being stopped). */
static void sandboxes(struct api_server *srv, struct prom_buf *b)
{
    static const struct { enum sandbox_state s; const char *name; } states[] = {
        {SB_STARTING, "starting"}, {SB_POOLED, "pooled"}, {SB_RUNNING, "running"},
        {SB_PAUSED, "paused"}, {SB_GONE, "stopping"},
    };
    unsigned n[sizeof(states) / sizeof(states[0])] = {0};
    pthread_mutex_lock(&srv->reg.lock);
    for (unsigned i = 0; i < SANDBOX_MAX; i++)
        for (size_t k = 0; k < sizeof(states) / sizeof(states[0]); k++)
            if (srv->reg.slots[i].state == states[k].s)
                n[k]++;
    pthread_mutex_unlock(&srv->reg.lock);
    prom_family(b, "airlock_sandboxes", "gauge",
                "Sandboxes by state (pooled: ready in the warm pool, nobody's yet).");
    for (size_t k = 0; k < sizeof(states) / sizeof(states[0]); k++)
        prom_sample(b, "airlock_sandboxes", (const char *const[]){"state", states[k].name, NULL},
                    n[k]);
}

/* One sample per warm pool (vmm/sandbox/pool.h): what pool_json says. */
static void pool_ready(struct api_server *srv, struct prom_buf *b)
{
    json_t *pools = pool_json(&srv->pool), *p;
    size_t i;
    prom_family(b, "airlock_pool_ready", "gauge",
                "Sandboxes ready in each warm pool (airlock serve --pool).");
    json_array_foreach(json_object_get(pools, "pools"), i, p) {
        char mem[24], cpus[24];
        snprintf(mem, sizeof(mem), "%lld", (long long)json_integer_value(json_object_get(p, "mem")));
        snprintf(cpus, sizeof(cpus), "%lld", (long long)json_integer_value(json_object_get(p, "cpus")));
        const char *image = json_string_value(json_object_get(p, "image"));
        prom_sample(b, "airlock_pool_ready",
                    (const char *const[]){"image", image ? image : "", "mem", mem, "cpus", cpus, NULL},
                    (double)json_integer_value(json_object_get(p, "ready")));
    }
    json_decref(pools);
}

static void counter(struct prom_buf *b, const char *name, const char *help, uint64_t v)
{
    prom_family(b, name, "counter", help);
    prom_sample(b, name, NULL, (double)v);
}

void metrics_text(struct api_server *srv, struct prom_buf *b)
{
    sandboxes(srv, b);
    pool_ready(srv, b);
    pthread_mutex_lock(&m.lock);
    __typeof__(m) c = m; /* a copy: the text is written without the lock */
    pthread_mutex_unlock(&m.lock);
    c.create_s.counts = c.create_counts;
    prom_family(b, "airlock_sandbox_creates_total", "counter",
                "Sandboxes created, by how: from the warm pool, restored from a snapshot, "
                "booted cold.");
    for (size_t i = 0; i < HOWS; i++)
        prom_sample(b, "airlock_sandbox_creates_total",
                    (const char *const[]){"how", hows[i], NULL}, (double)c.creates[i]);
    prom_histogram_write(b, "airlock_sandbox_create_seconds",
                         "How long creates took (the create answer's create_ms).", &c.create_s);
    counter(b, "airlock_commands_total", "Commands started in sandboxes.", c.commands);
    prom_family(b, "airlock_egress_requests_total", "counter",
                "Egress requests (CONNECT or plain HTTP) the sandboxes' proxies decided.");
    prom_sample(b, "airlock_egress_requests_total",
                (const char *const[]){"decision", "allow", NULL}, (double)c.egress_allowed);
    prom_sample(b, "airlock_egress_requests_total",
                (const char *const[]){"decision", "deny", NULL}, (double)c.egress_denied);
    prom_family(b, "airlock_egress_bytes_total", "counter",
                "Bytes of egress connections that ended: out (guest to server) and in.");
    prom_sample(b, "airlock_egress_bytes_total", (const char *const[]){"direction", "out", NULL},
                (double)c.egress_out);
    prom_sample(b, "airlock_egress_bytes_total", (const char *const[]){"direction", "in", NULL},
                (double)c.egress_in);
    counter(b, "airlock_limits_fired_total", "Limits that fired in sandboxes (limit audit records).",
            c.limits);
    counter(b, "airlock_sandbox_pauses_total", "Sandboxes paused.", c.pauses);
    counter(b, "airlock_sandbox_resumes_total", "Sandboxes resumed.", c.resumes);
    prom_family(b, "airlock_volumes", "gauge", "Named volumes.");
    prom_sample(b, "airlock_volumes", NULL, c.volumes);
    pthread_mutex_lock(&events_daemon.lock);
    uint64_t dropped = events_daemon.dropped;
    unsigned subs = events_daemon.nsubs;
    pthread_mutex_unlock(&events_daemon.lock);
    prom_family(b, "airlock_event_subscribers", "gauge", "Clients following GET /v1/events.");
    prom_sample(b, "airlock_event_subscribers", NULL, subs);
    counter(b, "airlock_events_dropped_total",
            "Events lost to subscribers that read too slowly (each told by an overflow line).",
            dropped);
    prom_family(b, "airlock_daemon_resident_memory_bytes", "gauge",
                "The daemon's own resident memory (its VMs are processes of their own).");
    prom_sample(b, "airlock_daemon_resident_memory_bytes", NULL, self_rss());
}

void metrics_get(struct api_server *srv, struct api_conn *c)
{
    struct prom_buf b = {0};
    metrics_text(srv, &b);
    if (b.failed)
        api_error(c, 503, NULL, "out of memory");
    else
        api_reply_bytes(c, 200, PROM_CONTENT_TYPE, NULL, b.p, b.len);
    prom_buf_free(&b);
}
