#include "vmm/sandbox/guest_ops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void guest_parent(const char *path, char *out)
{
    snprintf(out, AGENT_MAX_PATH, "%s", path);
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        out[--n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash || slash == out)
        snprintf(out, AGENT_MAX_PATH, "/");
    else
        *slash = '\0';
}

static bool owned(struct guest_owner own)
{
    return own.uid != AGENT_CHOWN_KEEP || own.gid != AGENT_CHOWN_KEEP;
}

/* One folder: made (and given away) unless it is one already. */
static int mkdir_one(int agent, const char *path, uint32_t mode, struct guest_owner own,
                     bool *made)
{
    char target[AGENT_MAX_PATH];
    struct agent_entry e;
    int rc = agent_stat(agent, path, &e, target);
    if (rc == 0) {
        *made = false;
        return e.kind == AGENT_ENTRY_DIR ? 0 : e.kind == AGENT_ENTRY_SYMLINK ? 0 : -EEXIST;
    }
    if (rc != -ENOENT)
        return rc;
    if ((rc = agent_mkdir(agent, path, 0, mode)))
        return rc;
    *made = true;
    return owned(own) ? agent_chown(agent, path, own.uid, own.gid) : 0;
}

int guest_mkdir(int agent, const char *path, uint32_t mode, struct guest_owner own, bool parents,
                bool *made)
{
    char p[AGENT_MAX_PATH];
    if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p) || p[0] != '/')
        return -EINVAL;
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    bool m = false;
    if (parents) {
        for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
            if (s[-1] == '/')
                continue;
            *s = '\0';
            int rc = mkdir_one(agent, p, 0755, own, &m);
            *s = '/';
            if (rc)
                return rc == -EEXIST ? -ENOTDIR : rc;
        }
    }
    int rc = mkdir_one(agent, p, mode, own, &m);
    if (made)
        *made = m;
    return rc;
}

int guest_write(int agent, const char *path, uint32_t mode, struct guest_owner own, bool parents,
                uint64_t size, agent_read_fn *read_fn, void *opaque)
{
    if (parents) {
        char dir[AGENT_MAX_PATH];
        guest_parent(path, dir);
        int rc = strcmp(dir, "/") ? guest_mkdir(agent, dir, 0755, own, true, NULL) : 0;
        if (rc)
            return rc;
    }
    int rc = agent_file_put_from(agent, path, 0, mode, size, read_fn, opaque);
    if (!rc && owned(own))
        rc = agent_chown(agent, path, own.uid, own.gid);
    return rc;
}

int guest_read(int agent, const char *path, uint64_t max, int *fd, uint64_t *size)
{
    *fd = memfd_create("airlock-get", MFD_CLOEXEC);
    if (*fd < 0)
        return -ENOMEM;
    int rc = agent_file_get(agent, path, *fd, max);
    off_t end = rc ? -1 : lseek(*fd, 0, SEEK_END);
    if (!rc && (end < 0 || lseek(*fd, 0, SEEK_SET) < 0))
        rc = -EIO;
    if (rc) {
        close(*fd);
        *fd = -1;
        return rc;
    }
    *size = (uint64_t)end;
    return 0;
}

/* ---- listings ---- */

struct item {
    struct agent_entry e;
    char *name, *target;
};

struct level {
    struct item *v;
    size_t n, cap;
    size_t *total;
};

static int collect(void *opaque, const struct agent_entry *e)
{
    struct level *l = opaque;
    if (++*l->total > GUEST_LIST_MAX_ENTRIES)
        return -E2BIG;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        struct item *v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    struct item *it = &l->v[l->n];
    it->e = *e;
    it->name = strdup(e->name);
    it->target = strdup(e->target);
    if (!it->name || !it->target) {
        free(it->name);
        free(it->target);
        return -ENOMEM;
    }
    it->e.name = it->name;
    it->e.target = it->target;
    l->n++;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct item *)a)->name, ((const struct item *)b)->name);
}

static int list_level(int agent, const char *path, const char *rel, unsigned depth,
                      guest_list_fn *each, void *opaque, size_t *total)
{
    struct level l = {.total = total};
    int rc = agent_list(agent, path, collect, &l);
    if (!rc)
        qsort(l.v, l.n, sizeof(*l.v), by_name);
    char *sub_path = rc ? NULL : malloc(AGENT_MAX_PATH), *sub_rel = rc ? NULL : malloc(AGENT_MAX_PATH);
    if (!rc && (!sub_path || !sub_rel))
        rc = -ENOMEM;
    for (size_t i = 0; !rc && i < l.n; i++) {
        const struct item *it = &l.v[i];
        int a = snprintf(sub_path, AGENT_MAX_PATH, "%s%s%s", path,
                         path[strlen(path) - 1] == '/' ? "" : "/", it->name);
        int b = snprintf(sub_rel, AGENT_MAX_PATH, "%s%s%s", rel, rel[0] ? "/" : "", it->name);
        if (a < 0 || a >= AGENT_MAX_PATH || b < 0 || b >= AGENT_MAX_PATH)
            continue; /* deeper than a path can say: not listed */
        rc = each(opaque, sub_rel, &it->e);
        if (!rc && depth > 1 && it->e.kind == AGENT_ENTRY_DIR) {
            rc = list_level(agent, sub_path, sub_rel, depth - 1, each, opaque, total);
            if (rc == -ENOENT || rc == -ENOTDIR || rc == -EACCES)
                rc = 0; /* gone or closed meanwhile: listed as an entry only */
        }
    }
    for (size_t i = 0; i < l.n; i++) {
        free(l.v[i].name);
        free(l.v[i].target);
    }
    free(l.v);
    free(sub_path);
    free(sub_rel);
    return rc;
}

int guest_list(int agent, const char *path, unsigned depth, guest_list_fn *each, void *opaque)
{
    size_t total = 0;
    if (depth < 1)
        depth = 1;
    if (depth > GUEST_LIST_MAX_DEPTH)
        depth = GUEST_LIST_MAX_DEPTH;
    return list_level(agent, path, "", depth, each, opaque, &total);
}

int guest_move(int agent, const char *from, const char *to, bool no_replace)
{
    return agent_rename(agent, from, to, no_replace ? AGENT_RENAME_F_NOREPLACE : 0);
}

int guest_remove(int agent, const char *path, bool recursive)
{
    return agent_remove(agent, path, recursive ? AGENT_REMOVE_F_RECURSIVE : 0);
}
