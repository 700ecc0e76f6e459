/* The MOUNT request of the agent protocol as bytes (layout and rules in
 * guest/agent/proto.h): its payload laid out and checked, below
 * agent_client.c (its encoder frames it, its decoder calls the check;
 * nothing here calls back).  The encoder and the decoder share every
 * rule, so a request that encodes also decodes, and `airlock run
 * --mount` judges a GUESTDIR with the same check before any VM exists.
 * Pure code: the agent links it. */
#include <errno.h>
#include <string.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/wire.h"

int agent_path_under(const char *path, size_t len, const char *dir)
{
    size_t n = strlen(dir);
    return len >= n && !memcmp(path, dir, n) && (len == n || path[n] == '/');
}

int agent_clean_path(const char *path, size_t len, size_t max)
{
    if (len < 2 || len >= max || path[0] != '/' || path[len - 1] == '/' || memchr(path, 0, len))
        return 0;
    /* Each component: not empty ("//"), not "." or "..". */
    for (size_t i = 1, start = 1; i <= len; i++) {
        if (i < len && path[i] != '/')
            continue;
        size_t c = i - start;
        if (c == 0 || (c == 1 && path[start] == '.') ||
            (c == 2 && path[start] == '.' && path[start + 1] == '.'))
            return 0;
        start = i + 1;
    }
    return 1;
}

int agent_mount_path_ok(const char *path, size_t len)
{
    return agent_clean_path(path, len, AGENT_MOUNT_MAX_PATH) &&
           !agent_path_under(path, len, "/proc") && !agent_path_under(path, len, "/sys") &&
           !agent_path_under(path, len, "/dev");
}

size_t agent_mount_payload(uint8_t *p, uint32_t device, uint32_t flags, const char *path)
{
    size_t pl = path ? strnlen(path, AGENT_MOUNT_MAX_PATH) : AGENT_MOUNT_MAX_PATH;
    if (device < 1 || device > AGENT_MOUNT_MAX_DEVICE || (flags & ~AGENT_MOUNT_F_ALL) ||
        !agent_mount_path_ok(path, pl))
        return 0;
    put32(p, device);
    put32(p + 4, flags);
    memcpy(p + AGENT_MOUNT_FIXED, path, pl + 1);
    return AGENT_MOUNT_FIXED + pl + 1;
}

int agent_mount_parse(const uint8_t *p, size_t len, struct agent_msg *m)
{
    if (len < AGENT_MOUNT_FIXED + 2 || len > AGENT_MOUNT_FIXED + AGENT_MOUNT_MAX_PATH)
        return -EPROTO;
    uint32_t device = get32(p), flags = get32(p + 4);
    const char *path = agent_path_in(p + AGENT_MOUNT_FIXED, len - AGENT_MOUNT_FIXED, 0);
    if (device < 1 || device > AGENT_MOUNT_MAX_DEVICE || (flags & ~AGENT_MOUNT_F_ALL) || !path ||
        !agent_mount_path_ok(path, len - AGENT_MOUNT_FIXED - 1))
        return -EPROTO;
    if (m) {
        m->u.mount.device = device;
        m->u.mount.flags = flags;
        m->u.mount.path = path;
    }
    return 0;
}
