#include "vmm/sandbox/sandbox_audit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/command_audit.h"
#include "vmm/audit/limits.h"

int sandbox_audit_open(struct sandbox *sb)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/%s", sb->dir, SANDBOX_AUDIT_FILE);
    int e = audit_open(&sb->audit, p);
    if (!e)
        e = audit_set_id(&sb->audit, sb->id);
    return e;
}

void sandbox_audit_close(struct sandbox *sb)
{
    audit_close(&sb->audit);
}

void sandbox_audit_exec(struct sandbox *sb, const struct agent_exec_req *req)
{
    command_audit_exec(&sb->audit, req);
}

static void record_limit(void *ctx, const char *limit, uint64_t max, uint64_t dropped,
                         const char *msg)
{
    (void)msg; /* `airlock run`'s words; the record says it */
    limit_record(ctx, limit, max, dropped);
}

void sandbox_audit_exit(struct sandbox *sb, const struct agent_exec_req *req, uint64_t max_output,
                        int rc, const struct agent_exec_result *res, uint64_t ms)
{
    command_limits(req, max_output, rc, res, record_limit, &sb->audit);
    command_audit_exit(&sb->audit, rc, res, ms);
}

void sandbox_audit_read(struct sandbox *sb, uint64_t *off,
                        int (*take)(void *ctx, const char *lines, size_t len), void *ctx)
{
    if (!sb->dir[0])
        return;
    char p[PATH_MAX + 16], buf[64 * 1024];
    snprintf(p, sizeof(p), "%s/%s", sb->dir, SANDBOX_AUDIT_FILE);
    int in = open(p, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return;
    for (int rounds = 0; rounds < 64; rounds++) {
        ssize_t n = pread(in, buf, sizeof(buf), (off_t)*off);
        if (n <= 0)
            break;
        /* Whole lines only: a record being written is taken next time.
         * A record is one write of at most AUDIT_RECORD_MAX bytes, so a
         * full buffer without a newline cannot happen. */
        char *end = memrchr(buf, '\n', (size_t)n);
        if (!end)
            break;
        size_t len = (size_t)(end + 1 - buf);
        if (take(ctx, buf, len))
            break;
        *off += len;
    }
    close(in);
}

static int forward_lines(void *ctx, const char *lines, size_t len)
{
    return agent_write_all(*(int *)ctx, lines, len);
}

void sandbox_audit_forward(struct sandbox *sb, int fd)
{
    if (fd >= 0)
        sandbox_audit_read(sb, &sb->audit_forwarded, forward_lines, &fd);
}
