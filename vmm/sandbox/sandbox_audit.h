/* A sandbox's audit records: its VM writes egress and limit records into
 * DIR/audit.jsonl (`sandbox-vm --audit ... --audit-id ID`), the daemon
 * writes the exec, exit and limit records of its commands there, all
 * under the sandbox's id as "vm".  GET /v1/sandboxes/{id}/audit reads the
 * file; the daemon copies each complete line to its own --audit log as
 * well (once a second, and once more before the sandbox goes). */
#ifndef AIRLOCK_SANDBOX_SANDBOX_AUDIT_H
#define AIRLOCK_SANDBOX_SANDBOX_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/sandbox/registry.h"

#define SANDBOX_AUDIT_FILE "audit.jsonl"

/* Opens sb's log in sb->dir (made).  0 or -errno. */
int sandbox_audit_open(struct sandbox *sb);
void sandbox_audit_close(struct sandbox *sb);

/* The records of one command: exec before it, then exit and the limits
 * that fired (rc and res: agent_exec's). */
void sandbox_audit_exec(struct sandbox *sb, const struct agent_exec_req *req);
void sandbox_audit_exit(struct sandbox *sb, const struct agent_exec_req *req, uint64_t max_output,
                        int rc, const struct agent_exec_result *res, uint64_t ms);

/* Hands take() the whole lines of sb's log from byte *off on, a run of
 * them at a time (at most a few MiB a call), *off moving past each run
 * it took (0; nonzero: it did not, and the reading stops). */
void sandbox_audit_read(struct sandbox *sb, uint64_t *off,
                        int (*take)(void *ctx, const char *lines, size_t len), void *ctx);

/* Copies the lines of sb's log not copied yet to fd (-1: none), whole
 * lines only, at most a few MiB a call. */
void sandbox_audit_forward(struct sandbox *sb, int fd);

#endif
