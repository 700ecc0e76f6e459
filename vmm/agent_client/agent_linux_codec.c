/* EXEC's linux section as bytes (protocol version 16; layout and rules
 * in guest/agent/proto.h): what an OCI config's linux object asks of a
 * new container, laid out and checked.  Below agent_exec_proc.c, which
 * places it after the container section; nothing here calls back.  The
 * encoder refuses what the decoder would, so a request that encodes
 * also decodes.  Pure code: the agent links it. */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/wire.h"

int agent_lnx_path_ok(const char *path, size_t len, int device)
{
    if (!agent_clean_path(path, len, AGENT_LNX_MAX_PATH))
        return 0;
    return !device || (!agent_path_under(path, len, "/proc") && !agent_path_under(path, len, "/sys"));
}

int agent_sysctl_key_ok(const char *key, size_t len)
{
    if (len < 1 || len >= AGENT_LNX_MAX_KEY || key[0] == '.' || key[len - 1] == '.')
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = key[i];
        if (c == '.' ? key[i + 1] == '.'
                     : !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

int agent_sysctl_value_ok(const char *value, size_t len)
{
    return len < AGENT_LNX_MAX_VALUE && !memchr(value, '\n', len);
}

int agent_tmpfs_options_ok(const char *options, size_t len)
{
    if (len >= AGENT_LNX_MAX_DATA)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (options[i] <= ' ' || options[i] > '~')
            return 0;
    return 1;
}

static int tmpfs_ok(const struct agent_tmpfs *t, size_t target_len, size_t options_len)
{
    return !(t->flags & ~AGENT_LNX_TMPFS_FLAGS) && t->propagation <= AGENT_LNX_PROP_LAST &&
           agent_lnx_path_ok(t->target, target_len, 1) && agent_tmpfs_options_ok(t->options, options_len);
}

static int device_ok(const struct agent_device *d, size_t path_len)
{
    uint32_t type = d->mode & S_IFMT;
    if ((d->mode & ~(uint32_t)(S_IFMT | 07777)) ||
        (type != S_IFCHR && type != S_IFBLK && type != S_IFIFO))
        return 0;
    if (type == S_IFIFO ? d->major || d->minor
                        : d->major >= AGENT_LNX_MAJOR_LIMIT || d->minor >= AGENT_LNX_MINOR_LIMIT)
        return 0;
    return agent_lnx_path_ok(d->path, path_len, 1);
}

/* The fixed part's rules, and those tying the section to the request. */
static int lnx_fixed_ok(const struct agent_exec_req *r)
{
    if ((r->lnx_flags & ~AGENT_LNX_F_ALL) || r->propagation > AGENT_LNX_PROP_LAST ||
        r->nmasked > AGENT_LNX_MAX_LIST || r->nreadonly > AGENT_LNX_MAX_LIST ||
        r->nsysctl > AGENT_LNX_MAX_LIST || r->ndevices > AGENT_LNX_MAX_LIST ||
        r->ntmpfs > AGENT_LNX_MAX_LIST)
        return 0;
    if (r->lnx_flags & AGENT_LNX_F_OOM ? r->oom_score_adj < -1000 || r->oom_score_adj > 1000
                                       : r->oom_score_adj != 0)
        return 0;
    return r->pidns == AGENT_PIDNS_NEW;
}

static int lnx_empty(const struct agent_exec_req *r)
{
    return !(r->lnx_flags | (uint32_t)r->oom_score_adj | r->propagation | r->nmasked |
             r->nreadonly | r->nsysctl | r->ndevices | r->ntmpfs);
}

size_t agent_exec_lnx_size(const struct agent_exec_req *r)
{
    if (!(r->flags & AGENT_EXEC_F_LINUX))
        return lnx_empty(r) ? 0 : SIZE_MAX;
    if (!lnx_fixed_ok(r))
        return SIZE_MAX;
    size_t size = AGENT_EXEC_LNX_FIXED, n;
    for (uint32_t i = 0; i < r->ntmpfs; i++) {
        const struct agent_tmpfs *t = &r->tmpfs[i];
        size_t tl = wire_len_upto(t->target, AGENT_LNX_MAX_PATH);
        size_t ol = wire_len_upto(t->options, AGENT_LNX_MAX_DATA);
        if (tl == SIZE_MAX || ol == SIZE_MAX || !tmpfs_ok(t, tl, ol))
            return SIZE_MAX;
        size += AGENT_LNX_TMPFS_FIXED + tl + 1 + ol + 1;
    }
    for (uint32_t i = 0; i < r->nmasked + r->nreadonly; i++) {
        const char *path = i < r->nmasked ? r->masked[i] : r->readonly[i - r->nmasked];
        if ((n = wire_len_upto(path, AGENT_LNX_MAX_PATH)) == SIZE_MAX || !agent_lnx_path_ok(path, n, 0))
            return SIZE_MAX;
        size += n + 1;
    }
    for (uint32_t i = 0; i < r->nsysctl; i++) {
        const struct agent_sysctl *s = &r->sysctl[i];
        size_t k = wire_len_upto(s->key, AGENT_LNX_MAX_KEY), v = wire_len_upto(s->value, AGENT_LNX_MAX_VALUE);
        if (k == SIZE_MAX || v == SIZE_MAX || !agent_sysctl_key_ok(s->key, k) ||
            !agent_sysctl_value_ok(s->value, v))
            return SIZE_MAX;
        size += k + 1 + v + 1;
    }
    for (uint32_t i = 0; i < r->ndevices; i++) {
        const struct agent_device *d = &r->devices[i];
        if ((n = wire_len_upto(d->path, AGENT_LNX_MAX_PATH)) == SIZE_MAX || !device_ok(d, n))
            return SIZE_MAX;
        size += AGENT_LNX_DEV_FIXED + n + 1;
    }
    return size - AGENT_EXEC_LNX_FIXED > AGENT_LNX_MAX_BYTES ? SIZE_MAX : size;
}

void agent_exec_lnx_put(uint8_t *p, const struct agent_exec_req *r)
{
    size_t size = agent_exec_lnx_size(r);
    if (!size || size == SIZE_MAX)
        return;
    put32(p, r->lnx_flags);
    put32(p + 4, (uint32_t)r->oom_score_adj);
    put32(p + 8, r->propagation);
    put16(p + 12, (uint16_t)r->nmasked);
    put16(p + 14, (uint16_t)r->nreadonly);
    put16(p + 16, (uint16_t)r->nsysctl);
    put16(p + 18, (uint16_t)r->ndevices);
    put16(p + 20, (uint16_t)r->ntmpfs);
    put16(p + 22, 0);
    put32(p + 24, (uint32_t)(size - AGENT_EXEC_LNX_FIXED));
    uint8_t *q = p + AGENT_EXEC_LNX_FIXED;
    for (uint32_t i = 0; i < r->ntmpfs; i++) {
        put32(q, r->tmpfs[i].flags);
        put32(q + 4, r->tmpfs[i].propagation);
        q = wire_put_str(wire_put_str(q + AGENT_LNX_TMPFS_FIXED, r->tmpfs[i].target),
                         r->tmpfs[i].options);
    }
    for (uint32_t i = 0; i < r->nmasked; i++)
        q = wire_put_str(q, r->masked[i]);
    for (uint32_t i = 0; i < r->nreadonly; i++)
        q = wire_put_str(q, r->readonly[i]);
    for (uint32_t i = 0; i < r->nsysctl; i++)
        q = wire_put_str(wire_put_str(q, r->sysctl[i].key), r->sysctl[i].value);
    for (uint32_t i = 0; i < r->ndevices; i++) {
        const struct agent_device *d = &r->devices[i];
        put32(q, d->mode);
        put32(q + 4, d->major);
        put32(q + 8, d->minor);
        put32(q + 12, d->uid);
        put32(q + 16, d->gid);
        q = wire_put_str(q + AGENT_LNX_DEV_FIXED, d->path);
    }
}

size_t agent_exec_lnx_get(const uint8_t *p, size_t avail, struct agent_exec_req *r)
{
    r->lnx_flags = r->propagation = 0;
    r->oom_score_adj = 0;
    r->nmasked = r->nreadonly = r->nsysctl = r->ndevices = r->ntmpfs = 0;
    if (!(r->flags & AGENT_EXEC_F_LINUX))
        return 0;
    if (avail < AGENT_EXEC_LNX_FIXED)
        return SIZE_MAX;
    r->lnx_flags = get32(p);
    r->oom_score_adj = (int32_t)get32(p + 4);
    r->propagation = get32(p + 8);
    r->nmasked = get16(p + 12);
    r->nreadonly = get16(p + 14);
    r->nsysctl = get16(p + 16);
    r->ndevices = get16(p + 18);
    r->ntmpfs = get16(p + 20);
    uint32_t bytes = get32(p + 24);
    /* Counts and size bounded before anything is walked or filled. */
    if (!lnx_fixed_ok(r) || get16(p + 22) || bytes > AGENT_LNX_MAX_BYTES ||
        bytes > avail - AGENT_EXEC_LNX_FIXED)
        return SIZE_MAX;
    size_t end = AGENT_EXEC_LNX_FIXED + (size_t)bytes, off = AGENT_EXEC_LNX_FIXED, n;
    for (uint32_t i = 0; i < r->ntmpfs; i++) {
        struct agent_tmpfs *t = &r->tmpfs[i];
        if (end - off < AGENT_LNX_TMPFS_FIXED)
            return SIZE_MAX;
        t->flags = get32(p + off);
        t->propagation = get32(p + off + 4);
        off += AGENT_LNX_TMPFS_FIXED;
        size_t tl = wire_take_str(p, end, &off, &t->target);
        size_t ol = wire_take_str(p, end, &off, &t->options);
        if (tl == SIZE_MAX || ol == SIZE_MAX || !tmpfs_ok(t, tl, ol))
            return SIZE_MAX;
    }
    for (uint32_t i = 0; i < r->nmasked + r->nreadonly; i++) {
        const char **path = i < r->nmasked ? &r->masked[i] : &r->readonly[i - r->nmasked];
        if ((n = wire_take_str(p, end, &off, path)) == SIZE_MAX || !agent_lnx_path_ok(*path, n, 0))
            return SIZE_MAX;
    }
    for (uint32_t i = 0; i < r->nsysctl; i++) {
        struct agent_sysctl *s = &r->sysctl[i];
        size_t k = wire_take_str(p, end, &off, &s->key);
        size_t v = wire_take_str(p, end, &off, &s->value);
        if (k == SIZE_MAX || v == SIZE_MAX || !agent_sysctl_key_ok(s->key, k) ||
            !agent_sysctl_value_ok(s->value, v))
            return SIZE_MAX;
    }
    for (uint32_t i = 0; i < r->ndevices; i++) {
        struct agent_device *d = &r->devices[i];
        if (end - off < AGENT_LNX_DEV_FIXED)
            return SIZE_MAX;
        d->mode = get32(p + off);
        d->major = get32(p + off + 4);
        d->minor = get32(p + off + 8);
        d->uid = get32(p + off + 12);
        d->gid = get32(p + off + 16);
        off += AGENT_LNX_DEV_FIXED;
        if ((n = wire_take_str(p, end, &off, &d->path)) == SIZE_MAX || !device_ok(d, n))
            return SIZE_MAX;
    }
    return off == end ? end : SIZE_MAX; /* every byte accounted for */
}
