/* A guest port's HTTP route through the daemon's own listeners:
 *   ANY /v1/sandboxes/{id}/ports/{port}/PATH?QUERY
 * goes to 127.0.0.1:{port} in the guest as ANY /PATH?QUERY, over the
 * agent's forward service, and whatever the guest answers comes back
 * unchanged, a WebSocket's upgrade and frames included.  So a caller with
 * API access reaches a guest server without a host port of its own.
 * One request per connection (the guest is asked to close after its
 * answer, unless it upgrades); the daemon's bearer token never reaches
 * the guest. */
#ifndef AIRLOCK_SANDBOX_PORT_PROXY_H
#define AIRLOCK_SANDBOX_PORT_PROXY_H

#include <stdint.h>

#include "vmm/sandbox/api_http.h"
#include "vmm/sandbox/registry.h"

/* `path` is what follows "/ports/{port}" in the target ("/..."). */
void port_proxy(struct api_conn *c, struct sandbox *sb, uint16_t port, const char *path);

#endif
