/* GET /v1/events[?type=T1,T2&sandbox=ID]: the daemon's lifecycle events
 * (vmm/sandbox/events.h) as a stream of JSON lines, from the moment the
 * answer's head is sent until the client hangs up.  type keeps only those
 * types, sandbox only that sandbox's; a bad or unknown parameter is a 400
 * naming it, and past EVENTS_SUBSCRIBERS_MAX subscribers a 503 says so. */
#ifndef AIRLOCK_SANDBOX_API_EVENTS_H
#define AIRLOCK_SANDBOX_API_EVENTS_H

#include "vmm/sandbox/api_http.h"

void api_events(struct api_conn *c);

#endif
