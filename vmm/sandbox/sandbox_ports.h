/* A sandbox's published ports: a forwarder (vmm/forward/forward.h) whose
 * dial is the sandbox's vsock socket, owned by the daemon, so ports come
 * and go while the VM runs (vsock needs no hotplug) and end with it. */
#ifndef AIRLOCK_SANDBOX_SANDBOX_PORTS_H
#define AIRLOCK_SANDBOX_SANDBOX_PORTS_H

#include <jansson.h>

#include "vmm/forward/forward.h"
#include "vmm/sandbox/registry.h"

/* Publishes one: 0 and `info` (its bound address), or -errno with err:
 * -EEXIST (the guest port is published), -ENOSPC (too many), or the
 * listener's error (-EADDRINUSE, -EACCES, -EADDRNOTAVAIL...). */
int sandbox_ports_add(struct sandbox *sb, const struct forward_spec *s, struct forward_info *info,
                      char *err, size_t errlen);
/* Ends one and its connections: 0 or -ENOENT. */
int sandbox_ports_remove(struct sandbox *sb, uint16_t guest_port);
/* Its ports as bound, in the order published: how many (out holds them). */
size_t sandbox_ports_list(struct sandbox *sb, struct forward_info out[FORWARD_MAX_PORTS]);
/* [{"guest_port", "host_ip", "host_port", "address", "connections"}...] */
json_t *sandbox_ports_json(struct sandbox *sb);
json_t *sandbox_port_json(const struct forward_info *i);
/* Connections open through its ports now: they hold its lease, as a
 * running command does. */
unsigned sandbox_ports_busy(struct sandbox *sb);
/* Ends them all, before the VM stops. */
void sandbox_ports_close(struct sandbox *sb);

/* What a connection to a port does first (the API layer's: a paused
 * sandbox resumes); a negative result refuses the connection. */
void sandbox_ports_on_dial(int (*wake)(void *ctx, struct sandbox *sb), void *ctx);

#endif
