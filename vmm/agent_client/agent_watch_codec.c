/* The WATCH request and its EVENT answers as bytes (layout and rules in
 * guest/agent/proto.h): their payloads laid out and checked, below
 * agent_client.c (its encoders frame them, its decoder calls the checks;
 * nothing here calls back).  The encoder and the decoder share every
 * rule, so what encodes also decodes.  An EVENT comes from the guest, and
 * the daemon turns it into a JSON line for its client: its kind, flags and
 * strings are checked to be what the agent could honestly send, and
 * agent_watch_beneath keeps its paths under the path the host asked for.
 * Pure code: the agent links it. */
#include <errno.h>
#include <string.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/wire.h"

/* A path of a WATCH or an EVENT: absolute, len < AGENT_MAX_PATH, no NUL
 * inside (empty only when allowed). */
static int abs_path_ok(const char *s, size_t len, int allow_empty)
{
    if (len == 0)
        return allow_empty;
    return len < AGENT_MAX_PATH && s[0] == '/' && !memchr(s, 0, len);
}

size_t agent_watch_payload(uint8_t *p, const char *path, uint32_t flags)
{
    size_t pl = path ? strnlen(path, AGENT_MAX_PATH) : AGENT_MAX_PATH;
    if ((flags & ~AGENT_WATCH_F_ALL) || !abs_path_ok(path, pl, 0))
        return 0;
    put32(p, flags);
    memcpy(p + AGENT_WATCH_FIXED, path, pl + 1);
    return AGENT_WATCH_FIXED + pl + 1;
}

int agent_watch_parse(const uint8_t *p, size_t len, struct agent_msg *m)
{
    if (len < AGENT_WATCH_FIXED + 2 || len > AGENT_WATCH_FIXED + AGENT_MAX_PATH)
        return -EPROTO;
    uint32_t flags = get32(p);
    const char *path = agent_path_in(p + AGENT_WATCH_FIXED, len - AGENT_WATCH_FIXED, 0);
    if ((flags & ~AGENT_WATCH_F_ALL) || !path ||
        !abs_path_ok(path, len - AGENT_WATCH_FIXED - 1, 0))
        return -EPROTO;
    if (m) {
        m->u.watch.flags = flags;
        m->u.watch.path = path;
    }
    return 0;
}

/* What an event may hold, for the encoder and the decoder alike. */
static int event_ok(const struct agent_event *e, size_t path_len, size_t to_len)
{
    if (e->kind > AGENT_EVENT_OVERFLOW || (e->flags & ~AGENT_EVENT_F_DIR))
        return 0;
    if (e->kind == AGENT_EVENT_OVERFLOW)
        return !e->flags && to_len == 0 && abs_path_ok(e->path, path_len, 1);
    return abs_path_ok(e->path, path_len, 0) &&
           abs_path_ok(e->to, to_len, 1) && (e->kind == AGENT_EVENT_RENAME || to_len == 0);
}

size_t agent_event_payload(uint8_t *p, const struct agent_event *e)
{
    struct agent_event c = *e;
    c.path = e->path ? e->path : "";
    c.to = e->to ? e->to : "";
    size_t pl = strnlen(c.path, AGENT_MAX_PATH), tl = strnlen(c.to, AGENT_MAX_PATH);
    if (!event_ok(&c, pl, tl))
        return 0;
    put32(p, c.kind);
    put32(p + 4, c.flags);
    memcpy(p + AGENT_EVENT_FIXED, c.path, pl + 1);
    memcpy(p + AGENT_EVENT_FIXED + pl + 1, c.to, tl + 1);
    return AGENT_EVENT_FIXED + pl + 1 + tl + 1;
}

int agent_event_parse(const uint8_t *p, size_t len, struct agent_msg *m)
{
    if (len < AGENT_EVENT_FIXED + 2 || len > AGENT_EVENT_FIXED + 2 * AGENT_MAX_PATH)
        return -EPROTO;
    /* Exactly two strings: the first NUL ends the path, the payload's last
     * byte is the NUL of `to`, and no NUL lies between. */
    const uint8_t *s = p + AGENT_EVENT_FIXED;
    size_t sl = len - AGENT_EVENT_FIXED;
    const uint8_t *nul = memchr(s, 0, sl);
    if (!nul || s[sl - 1] != 0 || nul == s + sl - 1)
        return -EPROTO;
    size_t pl = (size_t)(nul - s), tl = sl - pl - 2;
    struct agent_event e = {get32(p), get32(p + 4), (const char *)s, (const char *)nul + 1};
    if (memchr(e.to, 0, tl) || !event_ok(&e, pl, tl))
        return -EPROTO;
    if (m)
        m->u.event = e;
    return 0;
}

int agent_watch_beneath(const char *root, const char *path)
{
    size_t rl = strlen(root);
    while (rl > 1 && root[rl - 1] == '/')
        rl--;
    if (strncmp(path, root, rl))
        return 0;
    if (!path[rl])
        return 1; /* the root itself */
    /* Below it only whole names, no "." or "..": a client that mirrors the
     * tree by these paths must not be led out of its copy. */
    const char *r = path + (rl == 1 && root[0] == '/' ? 0 : rl);
    while (*r) {
        if (*r++ != '/')
            return 0;
        size_t n = strcspn(r, "/");
        if (n < 1 || n > AGENT_MAX_NAME || (r[0] == '.' && (n == 1 || (n == 2 && r[1] == '.'))))
            return 0;
        r += n;
    }
    return 1;
}
