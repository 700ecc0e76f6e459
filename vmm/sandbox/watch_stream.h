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

/* One event as its JSON line. */
json_t *watch_event_line(const struct agent_event *e);

#endif
