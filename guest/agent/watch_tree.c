/* The folders a WATCH watches: inotify names them by watch descriptor,
 * the host by path, and a folder renamed inside the watch keeps its wd
 * (inotify follows the inode) while its path changes.  A sorted array:
 * wds grow as the kernel hands them out, so an insert is nearly always an
 * append, a lookup a binary search. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>

#include "guest/agent/watch.h"

/* The index of wd, or where it would go (*found false). */
static size_t find(const struct wtree *t, int wd, bool *found)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->e[mid].wd < wd)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < t->n && t->e[lo].wd == wd;
    return lo;
}

const char *wtree_path(const struct wtree *t, int wd)
{
    bool found;
    size_t i = find(t, wd, &found);
    return found ? t->e[i].path : NULL;
}

int wtree_set(struct wtree *t, int wd, const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return -ENOMEM;
    bool found;
    size_t i = find(t, wd, &found);
    if (found) { /* the same folder reached by another path (a bind mount) */
        free(t->e[i].path);
        t->e[i].path = copy;
        return 0;
    }
    if (t->n >= AGENT_WATCH_MAX_DIRS) {
        free(copy);
        return -ENOSPC;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        struct wtree_ent *e = realloc(t->e, cap * sizeof(*e));
        if (!e) {
            free(copy);
            return -ENOMEM;
        }
        t->e = e;
        t->cap = cap;
    }
    memmove(t->e + i + 1, t->e + i, (t->n - i) * sizeof(*t->e));
    t->e[i] = (struct wtree_ent){wd, copy};
    t->n++;
    return 0;
}

static void drop_at(struct wtree *t, size_t i)
{
    free(t->e[i].path);
    memmove(t->e + i, t->e + i + 1, (t->n - i - 1) * sizeof(*t->e));
    t->n--;
}

void wtree_drop(struct wtree *t, int wd)
{
    bool found;
    size_t i = find(t, wd, &found);
    if (found)
        drop_at(t, i);
}

/* Whether path is dir or beneath it; *rest is what follows dir. */
static bool at_or_under(const char *path, const char *dir, const char **rest)
{
    size_t n = strlen(dir);
    if (strncmp(path, dir, n) || (path[n] && path[n] != '/'))
        return false;
    *rest = path + n;
    return true;
}

size_t wtree_move(struct wtree *t, int ino, const char *from, const char *to)
{
    size_t lost = 0;
    for (size_t i = 0; i < t->n;) {
        const char *rest;
        if (!at_or_under(t->e[i].path, from, &rest)) {
            i++;
            continue;
        }
        char *moved = NULL;
        if (strlen(to) + strlen(rest) < AGENT_MAX_PATH && asprintf(&moved, "%s%s", to, rest) < 0)
            moved = NULL;
        if (!moved) { /* too long to name, or no memory: no longer watched */
            inotify_rm_watch(ino, t->e[i].wd);
            drop_at(t, i);
            lost++;
            continue;
        }
        free(t->e[i].path);
        t->e[i++].path = moved;
    }
    return lost;
}

void wtree_cut(struct wtree *t, int ino, const char *path)
{
    for (size_t i = 0; i < t->n;) {
        const char *rest;
        if (at_or_under(t->e[i].path, path, &rest)) {
            inotify_rm_watch(ino, t->e[i].wd);
            drop_at(t, i);
        } else {
            i++;
        }
    }
}

void wtree_free(struct wtree *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->e[i].path);
    free(t->e);
    *t = (struct wtree){0};
}

int wtree_join(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, AGENT_MAX_PATH, "%s/%s", strcmp(dir, "/") ? dir : "", name);
    return n < 0 || n >= AGENT_MAX_PATH ? -ENAMETOOLONG : 0;
}
