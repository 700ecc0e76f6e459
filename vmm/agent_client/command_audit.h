/* The audit records of a command run through the agent, the same for
 * `airlock run` and for a sandbox's commands: the exec record before it
 * starts, the exit record once it ended, and which limits fired. */
#ifndef AIRLOCK_AGENT_CLIENT_COMMAND_AUDIT_H
#define AIRLOCK_AGENT_CLIENT_COMMAND_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/audit/audit.h"

/* The exec record: argv, cwd, uid, gid and the timeout that applies. */
void command_audit_exec(const struct audit *a, const struct agent_exec_req *req);

/* The exit record: rc and res are agent_exec's; ms how long it ran. */
void command_audit_exit(const struct audit *a, int rc, const struct agent_exec_result *res,
                        uint64_t ms);

/* Called once per limit that fired: its name ("output", "timeout"), its
 * value, the bytes it dropped, and a line saying what happened in `airlock
 * run`'s words. */
typedef void command_limit_fn(void *ctx, const char *limit, uint64_t max, uint64_t dropped,
                              const char *msg);
/* The limits that fired, each once: the output cap, the wall clock (the
 * agent's own kill, or the host's backstop when the agent never said). */
void command_limits(const struct agent_exec_req *req, uint64_t max_output, int rc,
                    const struct agent_exec_result *res, command_limit_fn *fn, void *ctx);

/* Why the guest could not start the command, in one line naming the input
 * at fault (cwd_flag names the working folder's input, "-w" for `airlock
 * run`), for a step before execve: the 126 alone does not say which.
 * False when the command started or execve itself failed (127 not found,
 * 126 not executable: the status says it, as a shell's does). */
bool command_start_error(const struct agent_exec_req *req, const struct agent_exec_result *res,
                         const char *cwd_flag, char *msg, size_t len);

#endif
