/* airlock run's records about its command; see run_report.h. */
#include "vmm/cli/run_report.h"

#include "vmm/agent_client/command_audit.h"
#include "vmm/audit/limits.h"

void run_report_exec(const struct audit *au, const struct agent_exec_req *req)
{
    command_audit_exec(au, req);
}

/* A limit that fired: one stderr line and one record (vmm/audit/limits.h). */
static void say_limit(void *ctx, const char *limit, uint64_t max, uint64_t dropped,
                      const char *msg)
{
    (void)ctx;
    limit_report(limit, max, dropped, "%s", msg);
}

void run_report_exit(const struct audit *au, const struct agent_exec_req *req, uint64_t max_output,
                     int rc, const struct agent_exec_result *res, uint64_t ms)
{
    command_limits(req, max_output, rc, res, say_limit, NULL);
    command_audit_exit(au, rc, res, ms);
}
