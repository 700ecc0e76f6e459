/* File watches: a guest path's changes streamed to the API client as JSON
 * lines, as a command's output is (exec_stream.h):
 *   GET /v1/sandboxes/{id}/watch?path=/ABS&recursive=true
 *   {"type":"create","path":"/tmp/x","dir":false}
 *   {"type":"write"|"remove"|"chmod","path":...,"dir":B}
 *   {"type":"rename","path":"/tmp/a","to":"/tmp/b"|null,"dir":B}
 *   {"type":"overflow"}  (or with "path": the folder whose events are lost)
 * ("path_b64"/"to_b64" for names that are not UTF-8).  The agent watches
 * with inotify (guest/agent/watch.c); the stream ends when the client
 * hangs up (the agent's connection closes, and the agent drops its
 * inotify fd) or the path is removed or moved away (its event is the last
 * line, and the answer ends cleanly); a lost agent cuts the answer short,
 * so the client sees a broken body, never a clean end. */
#ifndef AIRLOCK_SANDBOX_WATCH_STREAM_H
#define AIRLOCK_SANDBOX_WATCH_STREAM_H

#include <stdbool.h>

#include <jansson.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/sandbox/api_http.h"
#include "vmm/sandbox/registry.h"

/* Lines waiting for a slow client: past this many, events are dropped
 * and one {"type":"overflow"} says so where the loss began (a slot is
 * kept for it, and one for the path's own end, never dropped); lines are
 * taken again once half have gone out. */
#define WATCH_QUEUE_LINES 1024
/* Watches open at once on one sandbox (503 past it): each is an agent
 * process and an inotify instance in the guest, and a thread here. */
#define WATCH_MAX 16

/* Serves the route: 400 naming `path` or `recursive`, 404 naming a path
 * that does not exist, 503 past WATCH_MAX; else 200 and the stream.  An
 * open watch holds the sandbox's lease (sb->watches) as a command does. */
void watch_get(struct api_conn *c, struct registry *reg, struct sandbox *sb);

/* The stream over `ac`, a connection already watching `root`
 * (agent_watch_begin), until the client hangs up, the path goes or the
 * agent is lost: 0 when the path went (the answer ended cleanly), 1 when
 * the client went, -errno when the agent was lost (the answer was cut). */
struct agent_conn;
int watch_stream(struct api_conn *c, struct agent_conn *ac, const char *root);

/* Another API's watch over the same stream (the E2B layer's WatchDir),
 * as bg_follow_with is for commands: `line` makes an event into what is
 * queued (NULL: nothing), `send` writes one queued item (takes it; false:
 * stop, the answer is done or the client gone), `overflow` makes the item
 * that says events were lost there, `tick` (NULL: none) is called about
 * once a second (false: stop), `end` closes the answer when the path went
 * (rc 0) or the agent was lost (-errno). */
struct watch_sink {
    json_t *(*line)(void *ctx, const struct agent_event *e);
    bool (*send)(void *ctx, json_t *item);
    json_t *(*overflow)(void *ctx);
    bool (*tick)(void *ctx);
    void (*end)(void *ctx, int rc);
};
/* watch_stream's loop with a sink: 0 when the path went, 1 when the
 * client went or the sink stopped, -errno when the agent was lost (end
 * was called for 0 and -errno). */
int watch_follow(struct api_conn *c, struct agent_conn *ac, const char *root,
                 const struct watch_sink *sink, void *ctx);
/* An open watch holds the sandbox's lease: +1 as it starts (false past
 * WATCH_MAX: refused), -1 as it ends. */
bool watch_lease_hold(struct registry *reg, struct sandbox *sb, int delta);

/* One event as its JSON line. */
json_t *watch_event_line(const struct agent_event *e);

#endif
