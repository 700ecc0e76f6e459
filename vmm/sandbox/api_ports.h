/* The API's published ports of one sandbox (vmm/sandbox/sandbox_ports.h):
 *   GET    .../ports               {"ports": [port...]}
 *   POST   .../ports               {"guest_port", "host_port" (0: any),
 *                                  "host_ip" (127.0.0.1)}: 201 and the port
 *   GET    .../ports/{guest_port}  the port
 *   DELETE .../ports/{guest_port}  204: its listener and connections end
 *   ANY    .../ports/{guest_port}/PATH  the guest server's own answer
 *                                  (vmm/sandbox/port_proxy.h)
 * and the create field "ports", a list of the same objects (or docker's
 * "[IP:]HOSTPORT:GUESTPORT" strings). */
#ifndef AIRLOCK_SANDBOX_API_PORTS_H
#define AIRLOCK_SANDBOX_API_PORTS_H

#include "vmm/forward/forward_spec.h"
#include "vmm/sandbox/api_fields.h"
#include "vmm/sandbox/api_routes.h"

#define API_PORTS_MAX FORWARD_MAX_PORTS

/* Is `sub` ".../ports" + "/{port}/..." (a guest port's HTTP route)? */
bool api_ports_is_route(const char *sub);

/* `sub` is the path after ".../ports" (query cut): "", "/{guest_port}"
 * or "/{guest_port}/PATH". */
void api_ports(struct api_conn *c, struct sandbox *sb, const char *sub);

/* The create field "ports": up to API_PORTS_MAX specs; 400 naming it. */
void api_ports_parse(struct fields *f, struct forward_spec *out, unsigned *n);
/* Publishes the create's ports on a new sandbox: 0, or the HTTP status
 * with err (the caller destroys the sandbox). */
int api_ports_publish(struct sandbox *sb, const struct forward_spec *s, unsigned n, char *err,
                      size_t errlen, const char **field);

#endif
