/* The folder requests of the agent protocol as bytes (guest/agent/proto.h:
 * STAT, LIST, MKDIR, SYMLINK and their ENTRY answers): their payloads, laid
 * out and checked, below agent_client.c (its encoders frame them, its
 * decoder calls the checks; nothing here calls back).  An ENTRY comes from the
 * guest, so its name is checked to be one path component: whatever the
 * host builds from it (a tar member, a JSON listing, the next LIST's
 * path) cannot climb out of the folder it was listed in. */
#include <errno.h>
#include <string.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/wire.h"

int agent_root_len_ok(const char *path, size_t path_len, uint32_t root_len)
{
    /* 0: no root; else a '/'-ended prefix with at least one byte after it */
    return root_len == 0 ||
           (path[0] == '/' && root_len < path_len && path[root_len - 1] == '/' &&
            path[root_len] != '/');
}

int agent_name_ok(const char *name, size_t len)
{
    return len >= 1 && len <= AGENT_MAX_NAME && !memchr(name, '/', len) &&
           !memchr(name, 0, len) && strcmp(name, ".") && strcmp(name, "..");
}

/* Splits [p, p+size) into exactly two NUL-terminated strings; 0 or -EPROTO. */
static int two_strings(const uint8_t *p, size_t size, const char **a, size_t *alen,
                       const char **b, size_t *blen)
{
    const uint8_t *nul = size ? memchr(p, 0, size) : NULL;
    if (!nul)
        return -EPROTO;
    *a = (const char *)p;
    *alen = (size_t)(nul - p);
    size_t rest = size - *alen - 1;
    const uint8_t *q = nul + 1;
    const uint8_t *nul2 = rest ? memchr(q, 0, rest) : NULL;
    if (!nul2 || nul2 != q + rest - 1)
        return -EPROTO;
    *b = (const char *)q;
    *blen = rest - 1;
    return 0;
}

const char *agent_path_in(const uint8_t *p, size_t size, int allow_empty)
{
    if (size < 1 || size > AGENT_MAX_PATH || p[size - 1] != 0 ||
        memchr(p, 0, size - 1) != NULL || (size == 1 && !allow_empty))
        return NULL;
    return (const char *)p;
}

/* A path the agent acts on: 2..AGENT_MAX_PATH bytes with its NUL; else 0. */
static size_t path_size(const char *path)
{
    size_t pl = path ? strnlen(path, AGENT_MAX_PATH) + 1 : 0;
    return pl >= 2 && pl <= AGENT_MAX_PATH ? pl : 0;
}

size_t agent_path_payload(const char *path)
{
    return path_size(path);
}

size_t agent_mkdir_payload(uint8_t *p, const char *path, uint32_t root_len, uint32_t mode)
{
    size_t pl = path_size(path);
    if (!pl || (mode & ~07777u) || !agent_root_len_ok(path, pl - 1, root_len))
        return 0;
    put32(p, mode);
    put32(p + 4, root_len);
    memcpy(p + AGENT_MKDIR_FIXED, path, pl);
    return AGENT_MKDIR_FIXED + pl;
}

size_t agent_symlink_payload(uint8_t *p, const char *path, uint32_t root_len, const char *target)
{
    size_t pl = path_size(path);
    size_t tl = target ? strnlen(target, AGENT_MAX_PATH) + 1 : 0;
    if (!pl || tl < 2 || tl > AGENT_MAX_PATH || !agent_root_len_ok(path, pl - 1, root_len))
        return 0;
    put32(p, root_len);
    memcpy(p + AGENT_SYMLINK_FIXED, path, pl);
    memcpy(p + AGENT_SYMLINK_FIXED + pl, target, tl);
    return AGENT_SYMLINK_FIXED + pl + tl;
}

/* An absolute path the agent acts on: 2..AGENT_MAX_PATH bytes with its NUL. */
static int abs_ok(const char *s, size_t len)
{
    return len >= 1 && len < AGENT_MAX_PATH && s[0] == '/' && !memchr(s, 0, len);
}

size_t agent_rename_payload(uint8_t *p, const char *from, const char *to, uint32_t flags)
{
    size_t fl = from ? strnlen(from, AGENT_MAX_PATH) : AGENT_MAX_PATH;
    size_t tl = to ? strnlen(to, AGENT_MAX_PATH) : AGENT_MAX_PATH;
    if ((flags & ~AGENT_RENAME_F_ALL) || !abs_ok(from, fl) || !abs_ok(to, tl))
        return 0;
    put32(p, flags);
    memcpy(p + AGENT_RENAME_FIXED, from, fl + 1);
    memcpy(p + AGENT_RENAME_FIXED + fl + 1, to, tl + 1);
    return AGENT_RENAME_FIXED + fl + 1 + tl + 1;
}

/* REMOVE's and CHOWN's layout: fixed words, then one absolute path. */
static size_t words_path(uint8_t *p, const uint32_t *w, size_t nw, const char *path)
{
    size_t pl = path ? strnlen(path, AGENT_MAX_PATH) : AGENT_MAX_PATH;
    if (!abs_ok(path, pl))
        return 0;
    for (size_t i = 0; i < nw; i++)
        put32(p + 4 * i, w[i]);
    memcpy(p + 4 * nw, path, pl + 1);
    return 4 * nw + pl + 1;
}

size_t agent_remove_payload(uint8_t *p, const char *path, uint32_t flags)
{
    return flags & ~AGENT_REMOVE_F_ALL ? 0 : words_path(p, &flags, 1, path);
}

size_t agent_chown_payload(uint8_t *p, const char *path, uint32_t uid, uint32_t gid)
{
    uint32_t w[2] = {uid, gid};
    return words_path(p, w, 2, path);
}

/* The path after `fixed` bytes of words: absolute, the payload's end its NUL. */
static const char *abs_in(const uint8_t *p, size_t len, size_t fixed)
{
    if (len < fixed + 2)
        return NULL;
    const char *s = agent_path_in(p + fixed, len - fixed, 0);
    return s && s[0] == '/' ? s : NULL;
}

/* What an entry may hold, for the encoder and the decoder alike. */
static int entry_ok(const struct agent_entry *e, size_t name_len, size_t target_len, int stat)
{
    if (e->kind > AGENT_ENTRY_OTHER || (e->mode & ~07777u))
        return 0;
    if (stat ? name_len != 0 : !agent_name_ok(e->name, name_len))
        return 0;
    if (target_len >= AGENT_MAX_PATH || memchr(e->target, 0, target_len))
        return 0;
    return e->kind == AGENT_ENTRY_SYMLINK ? target_len > 0 : target_len == 0;
}

size_t agent_entry_payload(uint8_t *p, const struct agent_entry *e)
{
    const char *target = e->target ? e->target : "";
    size_t nl = e->name ? strnlen(e->name, AGENT_MAX_NAME + 1) : 0;
    size_t tl = strnlen(target, AGENT_MAX_PATH);
    struct agent_entry c = *e;
    c.name = e->name ? e->name : "";
    c.target = target;
    if (!entry_ok(&c, nl, tl, nl == 0))
        return 0;
    put32(p, e->kind);
    put32(p + 4, e->mode);
    put64(p + 8, e->size);
    put64(p + 16, (uint64_t)e->mtime);
    put32(p + 24, e->uid);
    put32(p + 28, e->gid);
    memcpy(p + AGENT_ENTRY_FIXED, c.name, nl + 1);
    memcpy(p + AGENT_ENTRY_FIXED + nl + 1, target, tl + 1);
    return AGENT_ENTRY_FIXED + nl + 1 + tl + 1;
}

uint32_t agent_dir_type_max(enum agent_dir dir, uint16_t type)
{
    if (dir == AGENT_DIR_REQUEST) {
        switch (type) {
        case AGENT_STAT: case AGENT_LIST: return AGENT_MAX_PATH;
        case AGENT_MKDIR: return AGENT_MKDIR_FIXED + AGENT_MAX_PATH;
        case AGENT_SYMLINK: return AGENT_SYMLINK_FIXED + 2 * AGENT_MAX_PATH;
        case AGENT_RENAME: return AGENT_RENAME_FIXED + 2 * AGENT_MAX_PATH;
        case AGENT_REMOVE: return AGENT_REMOVE_FIXED + AGENT_MAX_PATH;
        case AGENT_CHOWN: return AGENT_CHOWN_FIXED + AGENT_MAX_PATH;
        default: return 0;
        }
    }
    return type == AGENT_ENTRY ? AGENT_ENTRY_FIXED + AGENT_MAX_NAME + 1 + AGENT_MAX_PATH : 0;
}

int agent_dir_check_payload(uint16_t type, const uint8_t *p, uint32_t len, struct agent_msg *m)
{
    const char *a, *b;
    size_t al, bl;
    switch (type) {
    case AGENT_MKDIR:
        if (len < AGENT_MKDIR_FIXED)
            return -EPROTO;
        m->u.mkdir.mode = get32(p);
        m->u.mkdir.root_len = get32(p + 4);
        m->u.mkdir.path = agent_path_in(p + AGENT_MKDIR_FIXED, len - AGENT_MKDIR_FIXED, 0);
        if (!m->u.mkdir.path || (m->u.mkdir.mode & ~07777u) ||
            !agent_root_len_ok(m->u.mkdir.path, len - AGENT_MKDIR_FIXED - 1, m->u.mkdir.root_len))
            return -EPROTO;
        return 0;
    case AGENT_SYMLINK:
        if (len < AGENT_SYMLINK_FIXED ||
            two_strings(p + AGENT_SYMLINK_FIXED, len - AGENT_SYMLINK_FIXED, &a, &al, &b, &bl) ||
            al < 1 || al >= AGENT_MAX_PATH || bl < 1 || bl >= AGENT_MAX_PATH)
            return -EPROTO;
        m->u.symlink.root_len = get32(p);
        m->u.symlink.path = a;
        m->u.symlink.target = b;
        return agent_root_len_ok(a, al, m->u.symlink.root_len) ? 0 : -EPROTO;
    case AGENT_RENAME:
        if (len < AGENT_RENAME_FIXED ||
            two_strings(p + AGENT_RENAME_FIXED, len - AGENT_RENAME_FIXED, &a, &al, &b, &bl) ||
            !abs_ok(a, al) || !abs_ok(b, bl))
            return -EPROTO;
        m->u.rename.flags = get32(p);
        m->u.rename.from = a;
        m->u.rename.to = b;
        return m->u.rename.flags & ~AGENT_RENAME_F_ALL ? -EPROTO : 0;
    case AGENT_REMOVE:
        m->u.remove.path = abs_in(p, len, AGENT_REMOVE_FIXED);
        if (!m->u.remove.path)
            return -EPROTO;
        m->u.remove.flags = get32(p);
        return m->u.remove.flags & ~AGENT_REMOVE_F_ALL ? -EPROTO : 0;
    case AGENT_CHOWN:
        m->u.chown.path = abs_in(p, len, AGENT_CHOWN_FIXED);
        if (!m->u.chown.path)
            return -EPROTO;
        m->u.chown.uid = get32(p);
        m->u.chown.gid = get32(p + 4);
        return 0;
    case AGENT_ENTRY: {
        if (len < AGENT_ENTRY_FIXED ||
            two_strings(p + AGENT_ENTRY_FIXED, len - AGENT_ENTRY_FIXED, &a, &al, &b, &bl))
            return -EPROTO;
        struct agent_entry *e = &m->u.entry;
        e->kind = get32(p);
        e->mode = get32(p + 4);
        e->size = get64(p + 8);
        e->mtime = (int64_t)get64(p + 16);
        e->uid = get32(p + 24);
        e->gid = get32(p + 28);
        e->name = a;
        e->target = b;
        return entry_ok(e, al, bl, al == 0) ? 0 : -EPROTO;
    }
    }
    return -EPROTO;
}
