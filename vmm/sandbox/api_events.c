#include "vmm/sandbox/api_events.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/http/http_query.h"
#include "vmm/sandbox/events.h"
#include "vmm/util/utc_time.h"

/* How often a quiet stream looks whether its client is still there. */
#define EVENTS_IDLE_CHECK_MS 1000

/* Every parameter's name is one we know (a misspelt filter would
 * otherwise quietly pass everything): 0, or -1 with the 400 sent. */
static int known_params(struct api_conn *c)
{
    const char *q = strchr(c->req.target, '?');
    while (q && *q) {
        q++;
        size_t n = strcspn(q, "=&");
        if (n && !(n == 4 && !memcmp(q, "type", 4)) && !(n == 7 && !memcmp(q, "sandbox", 7))) {
            char name[65];
            snprintf(name, sizeof(name), "%.*s", (int)(n < 64 ? n : 64), q);
            api_error(c, 400, name, "unknown parameter '%s' (known: type, sandbox)", name);
            return -1;
        }
        q = strchr(q, '&');
    }
    return 0;
}

/* ?type=created,killed into a mask of types: 0 and no answer when absent. */
static int parse_types(struct api_conn *c, unsigned *mask)
{
    char list[512];
    int rc = query_param(c->req.target, "type", list, sizeof(list));
    *mask = 0;
    if (rc == 0)
        return 0;
    for (const char *p = list; rc > 0;) {
        size_t n = strcspn(p, ",");
        int t = event_type_parse(p, n);
        if (t < 0) {
            rc = -1;
            break;
        }
        *mask |= 1u << t;
        if (!p[n])
            break;
        p += n + 1;
    }
    if (rc < 0 || !*mask) {
        char known[256] = "";
        for (int t = 0; t < EVENT_TYPES; t++)
            snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s", t ? ", " : "",
                     event_type_name(t));
        api_error(c, 400, "type", "type: want a comma-separated list of event types (%s)", known);
        return -1;
    }
    return 0;
}

static int parse_sandbox(struct api_conn *c, char id[SANDBOX_ID_HEX + 1])
{
    char v[SANDBOX_ID_HEX + 2];
    int rc = query_param(c->req.target, "sandbox", v, sizeof(v));
    id[0] = '\0';
    if (rc == 0)
        return 0;
    bool ok = rc > 0 && strlen(v) == SANDBOX_ID_HEX && strspn(v, "0123456789abcdef") == SANDBOX_ID_HEX;
    if (!ok) {
        api_error(c, 400, "sandbox", "sandbox: want a sandbox id (%d lowercase hex digits)",
                  SANDBOX_ID_HEX);
        return -1;
    }
    memcpy(id, v, SANDBOX_ID_HEX + 1);
    return 0;
}

/* Whether the client hung up (it sends nothing on this stream). */
static bool gone(struct api_conn *c)
{
    struct pollfd p = {.fd = c->fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

void api_events(struct api_conn *c)
{
    struct events_sub *sub = calloc(1, sizeof(*sub));
    if (!sub)
        return api_error(c, 503, NULL, "out of memory");
    if (known_params(c) || parse_types(c, &sub->types) || parse_sandbox(c, sub->sandbox)) {
        free(sub);
        return;
    }
    if (events_subscribe(&events_daemon, sub)) {
        free(sub);
        return api_error(c, 503, NULL, "%d clients follow the events already (the most at once)",
                         EVENTS_SUBSCRIBERS_MAX);
    }
    /* Subscribed before the head goes: every event after a client saw
     * the head is in its stream. */
    api_stream_begin(c, 200);
    while (!c->broken) {
        char *line;
        uint64_t dropped;
        if (events_next(sub, EVENTS_IDLE_CHECK_MS, &line, &dropped)) {
            if (line) {
                api_chunked_write(c, line, strlen(line));
                free(line);
            } else {
                char now[UTC_TIME_LEN];
                utc_time_now(now);
                api_stream_line(c, json_pack("{s:s,s:I,s:s}", "type", "overflow", "dropped",
                                             (json_int_t)dropped, "time", now));
            }
        } else if (gone(c)) {
            break;
        }
    }
    events_unsubscribe(sub);
    free(sub);
    api_chunked_abort(c); /* only a hang-up ends it: the connection goes */
}
