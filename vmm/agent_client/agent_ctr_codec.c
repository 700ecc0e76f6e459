/* A pod's containers in the agent protocol as bytes (protocol version
 * 15; layout and rules in guest/agent/proto.h): EXEC's container section
 * and CONTAINER_END's payload, laid out and checked.  Below
 * agent_exec_proc.c (which places the section after the process
 * section) and agent_client.c (whose decoder checks CONTAINER_END here);
 * nothing here calls back.  The encoder refuses what the decoder would,
 * so a request that encodes also decodes.  Pure code: the agent links it. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/wire.h"

/* [A-Za-z0-9_.-]: what an OCI container id or a disk serial is made of;
 * no '/', no space, nothing a path or a shell would read otherwise. */
static int ctr_chars_ok(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

int agent_ctr_name_ok(const char *name, size_t len)
{
    /* Not starting with '.': never ".", "..", nor a hidden folder. */
    return len >= 1 && len <= AGENT_CTR_MAX_NAME && name[0] != '.' && ctr_chars_ok(name, len);
}

int agent_ctr_serial_ok(const char *serial, size_t len)
{
    return len >= 1 && len <= AGENT_CTR_MAX_SERIAL && ctr_chars_ok(serial, len);
}

int agent_ctr_bind_path_ok(const char *path, size_t len, int target)
{
    if (!agent_clean_path(path, len, AGENT_CTR_MAX_PATH) || agent_path_under(path, len, "/proc") ||
        agent_path_under(path, len, "/sys"))
        return 0;
    /* A target may be in the container's /dev (a pod's termination log);
     * a source is never the agent's /dev nor another container's root. */
    return target || (!agent_path_under(path, len, "/dev") &&
                      !agent_path_under(path, len, AGENT_CTR_DIR));
}

/* The rules that tie the section to the rest of the request. */
static int ctr_shape_ok(const struct agent_exec_req *r, size_t serial_len)
{
    if (r->pidns == AGENT_PIDNS_JOIN)
        return serial_len == 0 && r->nbinds == 0;
    return r->pidns == AGENT_PIDNS_NEW && r->nbinds <= AGENT_CTR_MAX_BINDS;
}

size_t agent_exec_ctr_size(const struct agent_exec_req *r)
{
    if (!(r->flags & AGENT_EXEC_F_CONTAINER))
        return r->ctr_name || r->ctr_serial || r->nbinds ? SIZE_MAX : 0;
    size_t nl = wire_len_upto(r->ctr_name, AGENT_CTR_MAX_NAME);
    size_t sl = r->ctr_serial ? wire_len_upto(r->ctr_serial, AGENT_CTR_MAX_SERIAL) : 0;
    if (nl == SIZE_MAX || sl == SIZE_MAX || !agent_ctr_name_ok(r->ctr_name, nl) ||
        (sl && !agent_ctr_serial_ok(r->ctr_serial, sl)) || !ctr_shape_ok(r, sl))
        return SIZE_MAX;
    size_t size = AGENT_EXEC_CTR_FIXED + nl + 1 + sl + 1;
    for (uint32_t i = 0; i < r->nbinds; i++) {
        const struct agent_bind *b = &r->binds[i];
        size_t s = wire_len_upto(b->source, AGENT_CTR_MAX_PATH), t = wire_len_upto(b->target, AGENT_CTR_MAX_PATH);
        if (s == SIZE_MAX || t == SIZE_MAX || (b->flags & ~AGENT_BIND_F_ALL) ||
            !agent_ctr_bind_path_ok(b->source, s, 0) || !agent_ctr_bind_path_ok(b->target, t, 1))
            return SIZE_MAX;
        size += AGENT_CTR_BIND_FIXED + s + 1 + t + 1;
    }
    return size;
}

void agent_exec_ctr_put(uint8_t *p, const struct agent_exec_req *r)
{
    size_t size = agent_exec_ctr_size(r);
    if (!size || size == SIZE_MAX)
        return;
    put32(p, r->nbinds);
    put32(p + 4, (uint32_t)(size - AGENT_EXEC_CTR_FIXED));
    uint8_t *q = wire_put_str(p + AGENT_EXEC_CTR_FIXED, r->ctr_name);
    q = wire_put_str(q, r->ctr_serial ? r->ctr_serial : "");
    for (uint32_t i = 0; i < r->nbinds; i++) {
        put32(q, r->binds[i].flags);
        q = wire_put_str(wire_put_str(q + AGENT_CTR_BIND_FIXED, r->binds[i].source), r->binds[i].target);
    }
}

size_t agent_exec_ctr_get(const uint8_t *p, size_t avail, struct agent_exec_req *r)
{
    r->ctr_name = r->ctr_serial = NULL;
    r->nbinds = 0;
    if (!(r->flags & AGENT_EXEC_F_CONTAINER))
        return 0;
    if (avail < AGENT_EXEC_CTR_FIXED)
        return SIZE_MAX;
    uint32_t nbinds = get32(p), bytes = get32(p + 4);
    /* Both bounded before anything is summed or walked. */
    if (nbinds > AGENT_CTR_MAX_BINDS || bytes > AGENT_CTR_MAX_BYTES ||
        bytes > avail - AGENT_EXEC_CTR_FIXED)
        return SIZE_MAX;
    size_t end = AGENT_EXEC_CTR_FIXED + (size_t)bytes, off = AGENT_EXEC_CTR_FIXED;
    size_t nl = wire_take_str(p, end, &off, &r->ctr_name);
    size_t sl = wire_take_str(p, end, &off, &r->ctr_serial);
    if (nl == SIZE_MAX || sl == SIZE_MAX || !agent_ctr_name_ok(r->ctr_name, nl) ||
        (sl && !agent_ctr_serial_ok(r->ctr_serial, sl)))
        return SIZE_MAX;
    r->nbinds = nbinds;
    for (uint32_t i = 0; i < nbinds; i++) {
        struct agent_bind *b = &r->binds[i];
        if (end - off < AGENT_CTR_BIND_FIXED)
            return SIZE_MAX;
        b->flags = get32(p + off);
        off += AGENT_CTR_BIND_FIXED;
        size_t s = wire_take_str(p, end, &off, &b->source);
        size_t t = wire_take_str(p, end, &off, &b->target);
        if (s == SIZE_MAX || t == SIZE_MAX || (b->flags & ~AGENT_BIND_F_ALL) ||
            !agent_ctr_bind_path_ok(b->source, s, 0) || !agent_ctr_bind_path_ok(b->target, t, 1))
            return SIZE_MAX;
    }
    /* Every byte accounted for, and the section fits its request. */
    return off == end && ctr_shape_ok(r, sl) ? end : SIZE_MAX;
}

size_t agent_ctr_end_payload(uint8_t *p, const char *name)
{
    size_t nl = wire_len_upto(name, AGENT_CTR_MAX_NAME);
    if (nl == SIZE_MAX || !agent_ctr_name_ok(name, nl))
        return 0;
    memcpy(p, name, nl + 1);
    return nl + 1;
}

int agent_ctr_end_parse(const uint8_t *p, size_t len, struct agent_msg *m)
{
    size_t off = 0;
    const char *name;
    size_t nl = wire_take_str(p, len, &off, &name);
    if (nl == SIZE_MAX || off != len || !agent_ctr_name_ok(name, nl))
        return -EPROTO;
    if (m)
        m->u.ctr_end.name = name;
    return 0;
}
