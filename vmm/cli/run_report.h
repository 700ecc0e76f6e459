/* What `airlock run` says about the command it ran: the audit log's exec
 * record before it starts, and once it ended, the limits that fired
 * (vmm/audit/limits.h: one stderr line and one record each) and the exit record.
 * The audit log may be closed (no --audit): then only stderr. */
#ifndef AIRLOCK_CLI_RUN_REPORT_H
#define AIRLOCK_CLI_RUN_REPORT_H

#include <stdint.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/audit/audit.h"

/* The exec record: argv, cwd, uid, gid and the timeout that applies. */
void run_report_exec(const struct audit *a, const struct agent_exec_req *req);

/* rc and res: agent_exec's; max_output: the output cap in bytes; ms: how
 * long the command ran. */
void run_report_exit(const struct audit *a, const struct agent_exec_req *req, uint64_t max_output,
                     int rc, const struct agent_exec_result *res, uint64_t ms);

#endif
