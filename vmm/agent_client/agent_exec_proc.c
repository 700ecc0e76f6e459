/* What an OCI process adds to a command (protocol versions 6 and 7,
 * proto.h): EXEC's process section (a terminal's size, capability sets,
 * supplementary groups, rlimits by number) and WINSIZE.  Pure code, shared with the agent: one set of
 * rules for both ends, and the encoder refuses what the decoder would. */
#include <errno.h>
#include <stdint.h>
#include <stddef.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/wire.h"

/* Whether the section's fields of req keep the rules (proto.h). */
static int proc_ok(const struct agent_exec_req *r)
{
    if (r->ngroups > AGENT_MAX_GROUPS || r->nrlimits > AGENT_MAX_RLIMITS)
        return 0;
    if (r->pidns && r->pidns != AGENT_PIDNS_NEW && r->pidns != AGENT_PIDNS_JOIN)
        return 0;
    /* A script is the third of SHELL -c SCRIPT, nothing else. */
    if ((r->flags & AGENT_EXEC_F_SCRIPT) && r->argc != 3)
        return 0;
    /* A size means nothing without a terminal: one form per request. */
    if (!(r->flags & AGENT_EXEC_F_TTY) && (r->tty_rows || r->tty_cols))
        return 0;
    if (!(r->flags & AGENT_EXEC_F_CAPS) && (r->cap_bounding | r->cap_effective |
                                            r->cap_permitted | r->cap_inheritable |
                                            r->cap_ambient))
        return 0;
    for (uint32_t i = 0; i < r->ngroups; i++)
        if (r->groups[i] == UINT32_MAX) /* (gid_t)-1: setgroups says EINVAL */
            return 0;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < r->nrlimits; i++) {
        const struct agent_rlimit *l = &r->rlimits[i];
        if (l->resource >= AGENT_RLIMIT_NUM || (seen & (1u << l->resource)) || l->soft > l->hard)
            return 0;
        seen |= 1u << l->resource;
    }
    return 1;
}

/* The process section's own bytes (the container section aside). */
static size_t proc_only(const struct agent_exec_req *r)
{
    return AGENT_EXEC_PROC_FIXED + 4 * (size_t)r->ngroups +
           AGENT_EXEC_RLIMIT_SIZE * (size_t)r->nrlimits;
}

/* With AGENT_EXEC_F_CONTAINER the container section follows (since
 * version 15), then with AGENT_EXEC_F_LINUX the linux section (since
 * 16): counted, laid out and read here with the process section, so the
 * EXEC codec sees one section between env and cwd. */
size_t agent_exec_proc_size(const struct agent_exec_req *r)
{
    size_t ctr = agent_exec_ctr_size(r), lnx = agent_exec_lnx_size(r);
    if (!proc_ok(r) || ctr == SIZE_MAX || lnx == SIZE_MAX)
        return 0;
    return proc_only(r) + ctr + lnx;
}

void agent_exec_proc_put(uint8_t *p, const struct agent_exec_req *r)
{
    put16(p, r->tty_rows);
    put16(p + 2, r->tty_cols);
    put32(p + 4, r->ngroups);
    put32(p + 8, r->nrlimits);
    put32(p + 12, r->pidns);
    put64(p + 16, r->cap_bounding);
    put64(p + 24, r->cap_effective);
    put64(p + 32, r->cap_permitted);
    put64(p + 40, r->cap_inheritable);
    put64(p + 48, r->cap_ambient);
    p += AGENT_EXEC_PROC_FIXED;
    for (uint32_t i = 0; i < r->ngroups; i++, p += 4)
        put32(p, r->groups[i]);
    for (uint32_t i = 0; i < r->nrlimits; i++, p += AGENT_EXEC_RLIMIT_SIZE) {
        put32(p, r->rlimits[i].resource);
        put64(p + 4, r->rlimits[i].soft);
        put64(p + 12, r->rlimits[i].hard);
    }
    agent_exec_ctr_put(p, r);
    agent_exec_lnx_put(p + agent_exec_ctr_size(r), r);
}

size_t agent_exec_proc_get(const uint8_t *p, size_t avail, struct agent_exec_req *r)
{
    if (avail < AGENT_EXEC_PROC_FIXED)
        return 0;
    r->tty_rows = get16(p);
    r->tty_cols = get16(p + 2);
    r->ngroups = get32(p + 4);
    r->nrlimits = get32(p + 8);
    r->pidns = get32(p + 12);
    r->cap_bounding = get64(p + 16);
    r->cap_effective = get64(p + 24);
    r->cap_permitted = get64(p + 32);
    r->cap_inheritable = get64(p + 40);
    r->cap_ambient = get64(p + 48);
    /* The counts are bounded before the size is computed or an array is
     * filled: nothing below overflows or writes past req's arrays. */
    if (r->ngroups > AGENT_MAX_GROUPS || r->nrlimits > AGENT_MAX_RLIMITS)
        return 0;
    size_t size = proc_only(r);
    if (size > avail)
        return 0;
    const uint8_t *q = p + AGENT_EXEC_PROC_FIXED;
    for (uint32_t i = 0; i < r->ngroups; i++, q += 4)
        r->groups[i] = get32(q);
    for (uint32_t i = 0; i < r->nrlimits; i++, q += AGENT_EXEC_RLIMIT_SIZE)
        r->rlimits[i] = (struct agent_rlimit){get32(q), get64(q + 4), get64(q + 12)};
    size_t ctr = agent_exec_ctr_get(q, avail - size, r);
    if (ctr == SIZE_MAX)
        return 0;
    size_t lnx = agent_exec_lnx_get(q + ctr, avail - size - ctr, r);
    return proc_ok(r) && lnx != SIZE_MAX ? size + ctr + lnx : 0;
}

void agent_sigq_winsize(uint8_t rec[AGENT_SIGQ_WINSIZE_LEN], uint16_t rows, uint16_t cols)
{
    rec[0] = AGENT_SIGQ_WINSIZE;
    put16(rec + 1, rows);
    put16(rec + 3, cols);
}
