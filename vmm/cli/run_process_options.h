/* run's flags for an OCI process's fields, under docker run's names:
 * --group-add, --ulimit, --security-opt no-new-privileges (agent protocol
 * 6: EXEC's process section). */
#ifndef AIRLOCK_CLI_RUN_PROCESS_OPTIONS_H
#define AIRLOCK_CLI_RUN_PROCESS_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/agent_client/agent_client.h"

/* Each adds to req: 0, or -EINVAL with one line in err naming the flag. */
/* --group-add GID: a supplementary group (a number, at most 32). */
int run_group_add(struct agent_exec_req *req, const char *val, char *err, size_t errlen);
/* --ulimit NAME=SOFT[:HARD]: NAME as docker's (core, nofile, ...), a value
 * a number or "unlimited" (-1 too); HARD defaults to SOFT. */
int run_ulimit(struct agent_exec_req *req, const char *val, char *err, size_t errlen);
/* --security-opt no-new-privileges[=true|false] (the one option taken). */
int run_security_opt(struct agent_exec_req *req, const char *val, char *err, size_t errlen);
/* --ulimit of a resource that --nproc, --nofile or --fsize (given[0..2])
 * also set: -EINVAL naming both. */
int run_ulimit_check(const struct agent_exec_req *req, const bool given[3], char *err,
                     size_t errlen);

#endif
