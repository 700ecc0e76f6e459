/* The E2B layer: `airlock serve` speaking E2B's API (its control plane
 * and its sandboxes' "envd" plane) on the same listeners as /v1, so the
 * official E2B SDKs run against airlock unmodified (docs/e2b.md).  It
 * holds only the wire mapping: every operation is /v1's (vmm/sandbox/). */
#ifndef AIRLOCK_E2B_E2B_H
#define AIRLOCK_E2B_E2B_H

#include <stdbool.h>

#include "vmm/sandbox/api_routes.h"

/* Whether the request is E2B's: it names a sandbox (E2b-Sandbox-Id: the
 * envd plane) or asks a control-plane path. */
bool e2b_request(const struct api_conn *c);

/* Serves it.  token: the listener's API key (NULL on the Unix socket,
 * whose mode is its guard): the control plane wants it as X-API-Key or
 * as a bearer token; the envd plane wants the sandbox's own access token
 * (X-Access-Token) instead, whatever the listener. */
void e2b_handle(struct api_server *srv, struct api_conn *c, const char *token);

#endif
