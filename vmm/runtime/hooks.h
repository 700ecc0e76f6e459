/* OCI hooks, run as runc runs them: the program at `path` with `args`
 * (args[0] is its argv[0]) and only `env`, the container's state JSON on
 * its stdin, its stdout and stderr ours (the log's readers see them), in
 * the runtime's namespaces (the container's are a VM's: a hook cannot
 * enter them), killed after its timeout.  A hook that fails fails the
 * step it belongs to, except poststart and poststop, whose failures are
 * warnings (the runtime spec's rule). */
#ifndef AIRLOCK_RUNTIME_HOOKS_H
#define AIRLOCK_RUNTIME_HOOKS_H

#include <stddef.h>

#include <jansson.h>

#include "vmm/runtime/oci_config.h"

/* Runs the hooks of `kind` in order with `state` on stdin, up to the
 * first that fails (poststart, poststop: all of them).  0, or -1 with err
 * naming the first that failed and why. */
int hooks_run(const struct oci_config *c, enum oci_hook_kind kind, const json_t *state, char *err,
              size_t cap);

#endif
