#include "vmm/sandbox/audit_tally.h"

#include <string.h>

#include "vmm/sandbox/events.h"
#include "vmm/sandbox/metrics.h"
#include "vmm/sandbox/sandbox_audit.h"

static uint64_t u64(json_t *o, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(o, key));
    return v > 0 ? (uint64_t)v : 0;
}

/* The fields of an event that come from a record as they are. */
static json_t *copy_fields(json_t *rec, const char *const *keys)
{
    json_t *o = json_object();
    for (; *keys; keys++) {
        json_t *v = json_object_get(rec, *keys);
        if (v)
            json_object_set(o, *keys, v);
    }
    return o;
}

void audit_tally_line(const char *id, const char *line, size_t len, uint64_t *out, uint64_t *in)
{
    json_t *rec = json_loadb(line, len, 0, NULL);
    const char *event = json_string_value(json_object_get(rec, "event"));
    if (!event) {
        json_decref(rec);
        return;
    }
    if (!strcmp(event, "egress")) {
        const char *decision = json_string_value(json_object_get(rec, "decision"));
        bool allowed = decision && !strcmp(decision, "allow");
        metrics_count_egress(allowed);
        if (!allowed)
            events_emit(EVENT_EGRESS_DENIED, id,
                        copy_fields(rec, (const char *const[]){"host", "port", "kind", "status",
                                                               "reason", NULL}));
    } else if (!strcmp(event, "egress_end")) {
        uint64_t o = u64(rec, "bytes_out"), i = u64(rec, "bytes_in");
        metrics_count_egress_bytes(o, i);
        *out += o;
        *in += i;
    } else if (!strcmp(event, "limit")) {
        metrics_count_limit();
        events_emit(EVENT_LIMIT, id,
                    copy_fields(rec, (const char *const[]){"limit", "max", "dropped_bytes", NULL}));
    }
    json_decref(rec);
}

struct tally {
    const char *id;
    uint64_t out, in;
};

static int take(void *ctx, const char *lines, size_t len)
{
    struct tally *t = ctx;
    while (len) {
        const char *nl = memchr(lines, '\n', len); /* a run ends in one */
        size_t n = (size_t)(nl - lines);
        audit_tally_line(t->id, lines, n, &t->out, &t->in);
        lines += n + 1;
        len -= n + 1;
    }
    return 0;
}

void audit_tally(struct registry *reg, struct sandbox *sb)
{
    struct tally t = {sb->id, 0, 0};
    sandbox_audit_read(sb, &sb->audit_tallied, take, &t);
    if (t.out || t.in) {
        pthread_mutex_lock(&reg->lock);
        sb->egress_out += t.out;
        sb->egress_in += t.in;
        pthread_mutex_unlock(&reg->lock);
    }
}
