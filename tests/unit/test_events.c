/* vmm/sandbox/events.c, the daemon's event bus: each line a JSON object
 * with type, id, RFC 3339 time and the event's fields; filters by type
 * and sandbox; a subscriber's queue bounded at EVENTS_QUEUE_MAX, every
 * loss told by an overflow item in its place (never silent: lines plus
 * what overflow items count is what was published); the cap on
 * subscribers; and vmm/sandbox/audit_tally.c turning the VM's audit
 * records into events, egress bytes and metrics. */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "vmm/sandbox/api_routes.h"
#include "vmm/sandbox/audit_tally.h"
#include "vmm/sandbox/events.h"
#include "vmm/sandbox/metrics.h"

static const char ID_A[] = "00112233445566aa", ID_B[] = "00112233445566bb";

/* The next item's line parsed (NULL: an overflow, its count in *dropped). */
static json_t *next(struct events_sub *s, uint64_t *dropped)
{
    char *line;
    *dropped = 0;
    ck_assert_int_eq(events_next(s, 1000, &line, dropped), 1);
    if (!line)
        return NULL;
    size_t n = strlen(line);
    ck_assert(n > 1 && line[n - 1] == '\n' && !memchr(line, '\n', n - 1)); /* one line */
    json_t *o = json_loads(line, 0, NULL);
    ck_assert_ptr_nonnull(o);
    free(line);
    return o;
}

START_TEST(line_shape)
{
    struct events bus;
    events_init(&bus);
    struct events_sub *s = calloc(1, sizeof(*s));
    ck_assert_int_eq(events_subscribe(&bus, s), 0);
    events_publish(&bus, EVENT_CREATED, ID_A, json_pack("{s:s,s:i}", "how", "cold", "create_ms", 7));
    events_publish(&bus, EVENT_LEASE_EXPIRED, ID_B, json_pack("{s:s}", "reason", "idle"));
    uint64_t d;
    json_t *o = next(s, &d);
    ck_assert_str_eq(json_string_value(json_object_get(o, "type")), "created");
    ck_assert_str_eq(json_string_value(json_object_get(o, "id")), ID_A);
    ck_assert_str_eq(json_string_value(json_object_get(o, "how")), "cold");
    ck_assert_int_eq(json_integer_value(json_object_get(o, "create_ms")), 7);
    regex_t re;
    ck_assert_int_eq(regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
                             REG_EXTENDED | REG_NOSUB), 0);
    ck_assert_int_eq(regexec(&re, json_string_value(json_object_get(o, "time")), 0, NULL, 0), 0);
    regfree(&re);
    json_decref(o);
    o = next(s, &d);
    ck_assert_str_eq(json_string_value(json_object_get(o, "type")), "lease_expired");
    ck_assert_str_eq(json_string_value(json_object_get(o, "reason")), "idle");
    json_decref(o);
    char *line;
    ck_assert_int_eq(events_next(s, 50, &line, &d), 0); /* nothing more: a timeout */
    events_unsubscribe(s);
    free(s);
}
END_TEST

START_TEST(filters)
{
    struct events bus;
    events_init(&bus);
    struct events_sub *s = calloc(1, sizeof(*s));
    s->types = 1u << EVENT_KILLED | 1u << EVENT_CREATED;
    memcpy(s->sandbox, ID_B, sizeof(ID_B));
    ck_assert_int_eq(events_subscribe(&bus, s), 0);
    events_publish(&bus, EVENT_CREATED, ID_A, NULL);   /* another sandbox */
    events_publish(&bus, EVENT_LIMIT, ID_B, NULL);     /* another type */
    events_publish(&bus, EVENT_KILLED, NULL, NULL);    /* no sandbox */
    events_publish(&bus, EVENT_KILLED, ID_B, NULL);
    uint64_t d;
    json_t *o = next(s, &d);
    ck_assert_str_eq(json_string_value(json_object_get(o, "type")), "killed");
    ck_assert_str_eq(json_string_value(json_object_get(o, "id")), ID_B);
    json_decref(o);
    char *line;
    ck_assert_int_eq(events_next(s, 20, &line, &d), 0);
    events_unsubscribe(s);
    free(s);
    /* names both ways */
    ck_assert_int_eq(event_type_parse("egress_denied", 13), EVENT_EGRESS_DENIED);
    ck_assert_int_eq(event_type_parse("killedx", 7), -1);
    ck_assert_int_eq(event_type_parse("kill", 4), -1);
    ck_assert_str_eq(event_type_name(EVENT_PAUSED), "paused");
}
END_TEST

/* Publishes n events numbered from *seq (field "n"). */
static void publish_n(struct events *bus, unsigned n, int *seq)
{
    for (unsigned i = 0; i < n; i++)
        events_publish(bus, EVENT_CREATED, ID_A, json_pack("{s:i}", "n", (*seq)++));
}

START_TEST(bounded_overflow_told)
{
    struct events bus;
    events_init(&bus);
    struct events_sub *s = calloc(1, sizeof(*s));
    ck_assert_int_eq(events_subscribe(&bus, s), 0);
    int seq = 0;
    publish_n(&bus, EVENTS_QUEUE_MAX + 40, &seq); /* nobody reads */
    ck_assert_uint_le(s->n, EVENTS_QUEUE_MAX + 1);
    ck_assert_uint_eq(bus.dropped, 40);
    uint64_t d;
    for (int i = 0; i < EVENTS_QUEUE_MAX; i++) { /* the first ones, in order */
        json_t *o = next(s, &d);
        ck_assert_ptr_nonnull(o);
        ck_assert_int_eq(json_integer_value(json_object_get(o, "n")), i);
        json_decref(o);
    }
    ck_assert_ptr_null(next(s, &d)); /* then the loss, counted */
    ck_assert_uint_eq(d, 40);
    publish_n(&bus, 1, &seq); /* after it: the next one published */
    json_t *o = next(s, &d);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "n")), EVENTS_QUEUE_MAX + 40);
    json_decref(o);
    events_unsubscribe(s);
    free(s);
}
END_TEST

/* A reader that takes a few now and then: whatever the interleaving,
 * every event is either a line, in order, or counted by an overflow item
 * placed where it was lost. */
START_TEST(never_silent)
{
    struct events bus;
    events_init(&bus);
    struct events_sub *s = calloc(1, sizeof(*s));
    ck_assert_int_eq(events_subscribe(&bus, s), 0);
    int seq = 0, expect = 0;
    uint64_t lines = 0, lost = 0;
    for (int round = 0; round < 50; round++) {
        publish_n(&bus, (unsigned)(round * 37 % 400), &seq);
        for (int k = 0; k < round * 13 % 300 && s->n; k++) {
            uint64_t d;
            json_t *o = next(s, &d);
            if (o) {
                int n = (int)json_integer_value(json_object_get(o, "n"));
                ck_assert_int_ge(n, expect); /* in order, gaps only where told */
                ck_assert_int_eq(n - expect, 0);
                expect = n + 1;
                lines++;
                json_decref(o);
            } else {
                ck_assert_uint_gt(d, 0);
                expect += (int)d; /* the lost ones were the next ones */
                lost += d;
            }
            ck_assert_uint_le(s->n, EVENTS_QUEUE_MAX + 1);
        }
    }
    while (s->n) {
        uint64_t d;
        json_t *o = next(s, &d);
        if (o) {
            ck_assert_int_eq((int)json_integer_value(json_object_get(o, "n")), expect);
            expect++;
            lines++;
            json_decref(o);
        } else {
            expect += (int)d;
            lost += d;
        }
    }
    ck_assert_uint_gt(lost, 0);
    ck_assert_uint_eq(lines + lost, (uint64_t)seq);
    ck_assert_uint_eq(bus.dropped, lost);
    events_unsubscribe(s);
    free(s);
}
END_TEST

START_TEST(subscriber_cap)
{
    struct events bus;
    events_init(&bus);
    struct events_sub *s[EVENTS_SUBSCRIBERS_MAX + 1];
    for (int i = 0; i <= EVENTS_SUBSCRIBERS_MAX; i++)
        s[i] = calloc(1, sizeof(*s[i]));
    for (int i = 0; i < EVENTS_SUBSCRIBERS_MAX; i++)
        ck_assert_int_eq(events_subscribe(&bus, s[i]), 0);
    ck_assert_int_eq(events_subscribe(&bus, s[EVENTS_SUBSCRIBERS_MAX]), -EBUSY);
    events_publish(&bus, EVENT_KILLED, ID_A, NULL); /* each gets its own copy */
    events_unsubscribe(s[3]); /* its queued line goes with it */
    ck_assert_int_eq(events_subscribe(&bus, s[EVENTS_SUBSCRIBERS_MAX]), 0);
    for (int i = 0; i <= EVENTS_SUBSCRIBERS_MAX; i++) {
        if (i == 3)
            continue;
        ck_assert_uint_eq(s[i]->n, i == EVENTS_SUBSCRIBERS_MAX ? 0 : 1);
        events_unsubscribe(s[i]);
    }
    ck_assert_uint_eq(bus.nsubs, 0);
    for (int i = 0; i <= EVENTS_SUBSCRIBERS_MAX; i++)
        free(s[i]);
}
END_TEST

/* The VM's records as vmm/egress/egress.c and vmm/audit/limits.c write them. */
START_TEST(audit_records_counted)
{
    struct events_sub *s = calloc(1, sizeof(*s));
    ck_assert_int_eq(events_subscribe(&events_daemon, s), 0);
    static const char *const recs[] = {
        "{\"time\":\"t\",\"vm\":\"v\",\"event\":\"egress\",\"conn\":1,\"decision\":\"allow\","
        "\"kind\":\"connect\",\"host\":\"pypi.org\",\"port\":443,\"rule\":\"pypi.org\",\"status\":200}",
        "{\"time\":\"t\",\"vm\":\"v\",\"event\":\"egress_end\",\"conn\":1,\"host\":\"pypi.org\","
        "\"bytes_out\":100,\"bytes_in\":2000,\"end\":\"closed\"}",
        "{\"time\":\"t\",\"vm\":\"v\",\"event\":\"egress\",\"conn\":2,\"decision\":\"deny\","
        "\"kind\":\"http\",\"host\":\"evil.example\",\"port\":80,\"reason\":\"no rule\",\"status\":403}",
        "{\"time\":\"t\",\"vm\":\"v\",\"event\":\"limit\",\"limit\":\"output\",\"max\":1048576,"
        "\"dropped_bytes\":12}",
        "{\"time\":\"t\",\"vm\":\"v\",\"event\":\"exec\",\"argv\":[\"true\"]}",
        "not json at all",
        "{\"event\":\"egress_end\",\"bytes_out\":-5,\"bytes_in\":\"x\"}",
    };
    uint64_t out = 0, in = 0;
    for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
        audit_tally_line(ID_A, recs[i], strlen(recs[i]), &out, &in);
    ck_assert_uint_eq(out, 100);
    ck_assert_uint_eq(in, 2000);
    uint64_t d;
    json_t *o = next(s, &d);
    ck_assert_str_eq(json_string_value(json_object_get(o, "type")), "egress_denied");
    ck_assert_str_eq(json_string_value(json_object_get(o, "id")), ID_A);
    ck_assert_str_eq(json_string_value(json_object_get(o, "host")), "evil.example");
    ck_assert_int_eq(json_integer_value(json_object_get(o, "port")), 80);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "status")), 403);
    json_decref(o);
    o = next(s, &d);
    ck_assert_str_eq(json_string_value(json_object_get(o, "type")), "limit");
    ck_assert_str_eq(json_string_value(json_object_get(o, "limit")), "output");
    ck_assert_int_eq(json_integer_value(json_object_get(o, "dropped_bytes")), 12);
    json_decref(o);
    char *line;
    ck_assert_int_eq(events_next(s, 20, &line, &d), 0);
    events_unsubscribe(s);
    free(s);
    /* ... and in the metrics (an empty daemon: its registry, no pools) */
    static struct api_server srv;
    api_server_init(&srv, 4, 0);
    struct prom_buf b = {0};
    metrics_text(&srv, &b);
    ck_assert(!b.failed);
    ck_assert_ptr_nonnull(strstr(b.p, "\nairlock_egress_requests_total{decision=\"allow\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(b.p, "\nairlock_egress_requests_total{decision=\"deny\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(b.p, "\nairlock_egress_bytes_total{direction=\"out\"} 100\n"));
    ck_assert_ptr_nonnull(strstr(b.p, "\nairlock_egress_bytes_total{direction=\"in\"} 2000\n"));
    ck_assert_ptr_nonnull(strstr(b.p, "\nairlock_limits_fired_total 1\n"));
    ck_assert_ptr_nonnull(strstr(b.p, "\nairlock_sandboxes{state=\"running\"} 0\n"));
    ck_assert_ptr_nonnull(strstr(b.p, "# TYPE airlock_sandbox_create_seconds histogram\n"));
    prom_buf_free(&b);
}
END_TEST

Suite *events_suite(void)
{
    Suite *s = suite_create("events");
    TCase *tc = tcase_create("events");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, line_shape);
    tcase_add_test(tc, filters);
    tcase_add_test(tc, bounded_overflow_told);
    tcase_add_test(tc, never_silent);
    tcase_add_test(tc, subscriber_cap);
    tcase_add_test(tc, audit_records_counted);
    suite_add_tcase(s, tc);
    return s;
}
