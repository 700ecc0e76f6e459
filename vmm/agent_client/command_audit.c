#include "vmm/agent_client/command_audit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "guest/agent/proto.h"
#include "vmm/util/exit_codes.h"

void command_audit_exec(const struct audit *au, const struct agent_exec_req *req)
{
    struct audit_rec a;
    audit_begin(au, &a, "exec");
    audit_strv(&a, "argv", req->argv, req->argc);
    audit_str(&a, "cwd", req->cwd && *req->cwd ? req->cwd : "/");
    audit_u64(&a, "uid", req->uid == AGENT_ID_DEFAULT ? AGENT_NOBODY : req->uid);
    audit_u64(&a, "gid", req->gid == AGENT_ID_DEFAULT ? AGENT_NOBODY : req->gid);
    audit_u64(&a, "timeout_s", req->timeout_ms / 1000); /* 0: none */
    audit_end(au, &a);
}

void command_limits(const struct agent_exec_req *req, uint64_t max_output, int rc,
                    const struct agent_exec_result *res, command_limit_fn *fn, void *ctx)
{
    unsigned secs = req->timeout_ms / 1000;
    char msg[300];
    if (res->dropped) {
        snprintf(msg, sizeof(msg), "output cap reached: %llu bytes dropped (--max-output %llu)",
                 (unsigned long long)res->dropped, (unsigned long long)(max_output >> 20));
        fn(ctx, "output", max_output, res->dropped, msg);
    }
    if (rc)
        return;
    if (res->host_timeout && res->output_stalled)
        snprintf(msg, sizeof(msg), "CMD ran past --timeout %u s while our stdout or stderr took "
                 "nothing (its reader stopped reading): the VM is stopped (exit 124)", secs);
    else if (res->host_timeout)
        snprintf(msg, sizeof(msg), "CMD ran past --timeout %u s and the guest did not end it "
                 "within %u s more: the VM is stopped (exit 124)", secs,
                 (unsigned)(req->host_grace_ms / 1000));
    else if (res->timed_out)
        snprintf(msg, sizeof(msg), "CMD ran past --timeout %u s: its process group was killed "
                 "(exit 124)", secs);
    else
        return;
    fn(ctx, "timeout", secs, 0, msg);
}

bool command_start_error(const struct agent_exec_req *req, const struct agent_exec_result *res,
                         const char *cwd_flag, char *msg, size_t len)
{
    const char *cwd = req->cwd && *req->cwd ? req->cwd : "/";
    unsigned uid = req->uid == AGENT_ID_DEFAULT ? AGENT_NOBODY : req->uid;
    if (!res->error || res->error_op == AGENT_OP_EXEC)
        return false;
    if (res->error_op == AGENT_OP_CHDIR && res->error == ENOENT)
        snprintf(msg, len, "%s %s: no such folder in the guest", cwd_flag, cwd);
    else if (res->error_op == AGENT_OP_CHDIR && res->error == ENOTDIR)
        snprintf(msg, len, "%s %s: not a folder in the guest", cwd_flag, cwd);
    else if (res->error_op == AGENT_OP_CHDIR) /* EACCES: checked as the command's user */
        snprintf(msg, len, "%s %s: %s for uid %u in the guest", cwd_flag, cwd,
                 strerror(res->error), uid);
    else if (res->error_op == AGENT_OP_RLIMIT)
        snprintf(msg, len, "the guest could not set CMD's limits: %s", strerror(res->error));
    else if (res->error_op == AGENT_OP_CRED)
        snprintf(msg, len, "the guest could not run CMD as uid %u: %s", uid, strerror(res->error));
    else
        snprintf(msg, len, "the guest could not start CMD: %s", strerror(res->error));
    return true;
}

void command_audit_exit(const struct audit *au, int rc, const struct agent_exec_result *res,
                        uint64_t ms)
{
    struct audit_rec a;
    audit_begin(au, &a, "exit");
    if (rc) {
        audit_str(&a, "error", strerror(-rc));
        audit_u64(&a, "status", EXIT_AIRLOCK_ERROR);
    } else {
        audit_u64(&a, "status", (uint64_t)agent_result_status(res));
        if (res->signaled)
            audit_u64(&a, "signal", (uint64_t)res->value);
        audit_bool(&a, "timed_out", res->timed_out);
        if (res->output_closed)
            audit_bool(&a, "output_closed", true);
    }
    audit_u64(&a, "duration_ms", ms);
    audit_u64(&a, "stdout_bytes", res->out_bytes);
    audit_u64(&a, "stderr_bytes", res->err_bytes);
    audit_end(au, &a);
}
