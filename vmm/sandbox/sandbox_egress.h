/* A sandbox's egress allowlist, replaced while it runs (`PATCH
 * /v1/sandboxes/{id}` with "allow" / "allow_ip"): the new rules go to the
 * sandbox's egress broker on the channel only the daemon holds
 * (vmm/egress/egress_rules.h); the broker parses them again, makes them
 * the policy for every new connection and cuts the open ones they do not
 * admit; the daemon then writes the change into the sandbox's audit log
 * ("egress_rules": the connections cut, the new lists and the old). */
#ifndef AIRLOCK_SANDBOX_SANDBOX_EGRESS_H
#define AIRLOCK_SANDBOX_SANDBOX_EGRESS_H

#include <stddef.h>

#include <jansson.h>

#include "vmm/sandbox/registry.h"

/* A create's lists become sb's (absent: empty), for the record and for
 * the first change's "old" lists. */
void sandbox_egress_init(struct sandbox *sb, json_t *allow, json_t *allow_ip);

/* Checks new lists (arrays of strings, as api_fields' get_list gives
 * them; NULL: that list stays) rule by rule as the VM would: 0, or
 * -EINVAL with err and *field ("allow" or "allow_ip"). */
int sandbox_egress_check(json_t *allow, json_t *allow_ip, char *err, size_t cap,
                         const char **field);

/* Makes allow / allow_ip (checked; NULL: the list in force stays) sb's
 * allowlist: its broker's, then the record's (swapped under reg->lock),
 * with the audit record.  0; else the HTTP status with err (and *field
 * when the client's rules are to blame). */
int sandbox_egress_replace(struct registry *reg, struct sandbox *sb, json_t *allow,
                           json_t *allow_ip, char *err, size_t cap, const char **field);

#endif
