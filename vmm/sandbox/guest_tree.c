/* A guest tree walked, then written as a tar; see guest_tree.h. */
#include "vmm/sandbox/guest_tree.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/util/printable.h"

struct guest_tree_member {
    char *rel;               /* below the top: "" for the top itself, else "a/b" */
    struct agent_entry e;    /* name unused; target owned */
};

void guest_tree_free(struct guest_tree *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].rel);
        free((char *)t->v[i].e.target);
    }
    free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}

/* Sets t->err and t->why ("REL: WHY"); returns -1. */
static int refuse(struct guest_tree *t, int err, const char *rel, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int refuse(struct guest_tree *t, int err, const char *rel, const char *fmt, ...)
{
    char shown[1000], why[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    t->err = err;
    snprintf(t->why, sizeof(t->why), "%s: %s", printable(rel, shown, sizeof(shown)), why);
    return -1;
}

/* The agent's failure about guest path `path`; returns -1. */
static int agent_failed(struct guest_tree *t, const char *path, int rc)
{
    return refuse(t, -rc, path, "%s",
                  rc == -EPROTO ? "the agent sent a broken answer" : strerror(-rc));
}

/* Keeps one member (rel and target copied); -1 past a limit. */
static int add(struct guest_tree *t, const char *rel, const struct agent_entry *e)
{
    const struct guest_tree_limits *lim = t->lim;
    if (t->n >= lim->max_entries)
        return refuse(t, EFBIG, rel, "more than %llu members", (unsigned long long)lim->max_entries);
    t->name_bytes += strlen(rel) + strlen(e->target) + 2;
    char size[40];
    if (t->name_bytes > lim->max_names)
        return refuse(t, EFBIG, rel, "more than %s of names",
                      size_text(lim->max_names, size, sizeof(size)));
    if (e->kind == AGENT_ENTRY_FILE && (t->bytes += e->size) > lim->max_bytes)
        return refuse(t, EFBIG, rel, "more than %s of file data",
                      size_text(lim->max_bytes, size, sizeof(size)));
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        struct guest_tree_member *v = realloc(t->v, cap * sizeof(*v));
        if (!v)
            return refuse(t, ENOMEM, rel, "out of memory");
        t->v = v;
        t->cap = cap;
    }
    struct guest_tree_member *m = &t->v[t->n];
    m->e = *e;
    m->e.name = "";
    m->rel = strdup(rel);
    m->e.target = strdup(e->target);
    if (!m->rel || !m->e.target) {
        free(m->rel);
        free((char *)m->e.target);
        return refuse(t, ENOMEM, rel, "out of memory");
    }
    t->n++;
    return 0;
}

/* One folder's entries, gathered to be sorted: the tar's order is the
 * names' order, whatever order readdir had. */
struct batch {
    struct guest_tree *t;
    const char *prefix;
    size_t first;            /* where this folder's members begin in t->v */
};

static int gather(void *opaque, const struct agent_entry *e)
{
    struct batch *b = opaque;
    char rel[AGENT_MAX_PATH];
    if ((size_t)snprintf(rel, sizeof(rel), "%s%s%s", b->prefix, b->prefix[0] ? "/" : "", e->name) >=
        sizeof(rel))
        return refuse(b->t, ENAMETOOLONG, b->prefix, "a name too long to copy out");
    if (e->kind == AGENT_ENTRY_OTHER)
        return 0; /* a device, fifo or socket: left out (FILE_GET cannot read it) */
    return add(b->t, rel, e);
}

static int by_rel(const void *a, const void *b)
{
    return strcmp(((const struct guest_tree_member *)a)->rel,
                  ((const struct guest_tree_member *)b)->rel);
}

/* The members below folder `dir` (guest path) whose names start `prefix`. */
static int walk_dir(struct guest_tree *t, const char *dir, const char *prefix)
{
    struct batch b = {t, prefix, t->n};
    int rc = agent_list(t->agent, dir, gather, &b);
    if (rc == -1 && t->err)
        return -1;
    if (rc == -ENOENT && prefix[0])
        return 0; /* it went away since its parent was listed */
    if (rc)
        return agent_failed(t, dir, rc);
    size_t end = t->n;
    qsort(t->v + b.first, end - b.first, sizeof(*t->v), by_rel);
    for (size_t i = b.first; i < end; i++) {
        if (t->v[i].e.kind != AGENT_ENTRY_DIR)
            continue;
        /* t->v moves as it grows: copy what the call needs */
        char sub[AGENT_MAX_PATH], *rel = strdup(t->v[i].rel);
        if (!rel)
            return refuse(t, ENOMEM, prefix, "out of memory");
        const char *tail = rel + strlen(prefix) + (prefix[0] ? 1 : 0);
        int too_long = (size_t)snprintf(sub, sizeof(sub), "%s%s%s", dir,
                                        dir[1] ? "/" : "", tail) >= sizeof(sub);
        rc = too_long ? refuse(t, ENAMETOOLONG, rel, "a path too long to copy out")
                      : walk_dir(t, sub, rel);
        free(rel);
        if (rc)
            return rc;
    }
    return 0;
}

int guest_tree_walk(struct guest_tree *t, int agent, const char *path,
                    const struct guest_tree_limits *lim)
{
    char target[AGENT_MAX_PATH];
    memset(t, 0, sizeof(*t));
    t->agent = agent;
    t->lim = lim;
    int rc = agent_stat(agent, path, &t->top, target);
    if (rc)
        return agent_failed(t, path, rc);
    if (t->top.kind == AGENT_ENTRY_OTHER)
        return refuse(t, EINVAL, path, "a device, fifo or socket (not copied)");
    if (add(t, "", &t->top))
        return -1;
    t->top.target = "";
    return t->top.kind == AGENT_ENTRY_DIR ? walk_dir(t, path, "") : 0;
}

/* ---- writing the tar ---- */

struct out {
    struct archive *a;
    guest_tree_out_fn *fn;
    void *opaque;
    uint64_t got;
    int failed;  /* nothing more goes out (the tar's end that freeing it writes, too) */
};

static la_ssize_t to_out(struct archive *a, void *opaque, const void *buf, size_t len)
{
    (void)a;
    struct out *o = opaque;
    if (!o->failed && o->fn(o->opaque, buf, len))
        o->failed = 1;
    return o->failed ? -1 : (la_ssize_t)len;
}

static int file_data(void *opaque, const void *buf, size_t len)
{
    struct out *o = opaque;
    o->got += len;
    return archive_write_data(o->a, buf, len) == (la_ssize_t)len ? 0 : -EIO;
}

/* Writes member m; 0, or -1 when the tar cannot be completed. */
static int write_member(struct out *o, struct guest_tree *t, const struct guest_tree_member *m,
                        const char *path, const char *top)
{
    char name[2 * AGENT_MAX_PATH], guest[2 * AGENT_MAX_PATH];
    snprintf(name, sizeof(name), "%s%s%s", top, m->rel[0] ? "/" : "", m->rel);
    snprintf(guest, sizeof(guest), "%s%s%s", path, m->rel[0] && path[1] ? "/" : "", m->rel);
    struct archive_entry *e = archive_entry_new();
    if (!e)
        return -1;
    archive_entry_set_pathname(e, name);
    archive_entry_set_perm(e, m->e.mode);
    archive_entry_set_mtime(e, m->e.mtime, 0);
    archive_entry_set_uid(e, 0);
    archive_entry_set_gid(e, 0);
    if (m->e.kind == AGENT_ENTRY_DIR) {
        archive_entry_set_filetype(e, AE_IFDIR);
    } else if (m->e.kind == AGENT_ENTRY_SYMLINK) {
        archive_entry_set_filetype(e, AE_IFLNK);
        archive_entry_set_symlink(e, m->e.target);
    } else {
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_size(e, (la_int64_t)m->e.size);
    }
    /* WARN: a name that is not text in our C locale goes out byte for
     * byte (pax hdrcharset=BINARY), as it should */
    int rc = archive_write_header(o->a, e) >= ARCHIVE_WARN ? 0 : -1;
    archive_entry_free(e);
    if (rc || m->e.kind != AGENT_ENTRY_FILE)
        return rc;
    o->got = 0;
    /* a file that grew past, or shrank below, its listed size cannot
     * make the member its header announced */
    rc = agent_file_get_to(t->agent, guest, m->e.size, file_data, o);
    return rc || o->got != m->e.size ? -1 : 0;
}

int guest_tree_write(struct guest_tree *t, const char *path, const char *top,
                     guest_tree_out_fn *out, void *opaque)
{
    struct out o = {archive_write_new(), out, opaque, 0, 0};
    if (!o.a || archive_write_set_format_pax_restricted(o.a) != ARCHIVE_OK ||
        archive_write_open(o.a, &o, NULL, to_out, NULL) != ARCHIVE_OK) {
        if (o.a)
            archive_write_free(o.a);
        return -ENOMEM;
    }
    int rc = 0;
    for (size_t i = 0; i < t->n && !rc; i++)
        rc = write_member(&o, t, &t->v[i], path, top);
    if (!rc && archive_write_close(o.a) != ARCHIVE_OK)
        rc = -1;
    o.failed |= rc;
    archive_write_free(o.a);
    return rc ? -EIO : 0;
}
