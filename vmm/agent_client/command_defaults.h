/* What every command gets unless its caller says otherwise, the same for
 * `airlock run` and for a sandbox's commands (airlock serve). */
#ifndef AIRLOCK_AGENT_CLIENT_COMMAND_DEFAULTS_H
#define AIRLOCK_AGENT_CLIENT_COMMAND_DEFAULTS_H

/* Per-command limits: enough for builds and test runners, low enough that
 * a fork or fd bomb fails inside the guest (they bind the unprivileged
 * default user; root ignores RLIMIT_NPROC). */
#define COMMAND_DEFAULT_NPROC  1024
#define COMMAND_DEFAULT_NOFILE 4096
/* Output a command may produce: roomy for builds and test logs, small
 * next to a host's disk. */
#define COMMAND_DEFAULT_MAX_OUTPUT_MIB 1024
/* Wall clock (0: none): a command left running for an hour is far more
 * often stuck or spinning than working, and an unattended agent's VM must
 * not hold a host's CPU and memory forever; a longer build asks for more. */
#define COMMAND_DEFAULT_TIMEOUT_S 3600
#define COMMAND_MAX_TIMEOUT_S     4000000 /* x 1000 still fits the request's 32-bit ms */

/* The environment every command starts with, before its own variables
 * (which win: a command sees the first of two same-named variables, so
 * a default is added only when its name was not given): PATH, HOME and
 * the guest's proxy (the agent's relay to airlock's egress filter) under
 * both the lower- and upper-case names that curl, pip, requests and wget
 * read. */
#define COMMAND_DEFAULT_ENVS 8
extern const char *const command_default_env[COMMAND_DEFAULT_ENVS];

#endif
