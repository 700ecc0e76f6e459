/* GET .../archive?path=/ABS: a tar of a guest file or folder
 * (sandbox/archive.h).  First the whole tree is walked (LIST, one folder
 * at a time) and held, bounded, so a missing path, a tree over the limits
 * or a broken answer is a plain error before anything is sent; then the
 * members are written with libarchive (pax, so long names and large files
 * fit) straight into the chunked answer, each file read with FILE_GET. */
#include "sandbox/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/guest_fs.h"
#include "util/printable.h"

struct member {
    char *rel;               /* below the top: "" for the top itself, else "a/b" */
    struct agent_entry e;    /* name unused; target owned */
};

struct walk {
    int agent;
    struct member *v;
    size_t n, cap;
    size_t name_bytes;
    uint64_t bytes;
    int status;              /* a refusal: its HTTP status, with why */
    char why[1200];
};

static void walk_free(struct walk *w)
{
    for (size_t i = 0; i < w->n; i++) {
        free(w->v[i].rel);
        free((char *)w->v[i].e.target);
    }
    free(w->v);
}

static int refuse(struct walk *w, int status, const char *rel, const char *why)
{
    char shown[1000];
    w->status = status;
    snprintf(w->why, sizeof(w->why), "%s: %s", printable(rel, shown, sizeof(shown)), why);
    return -1;
}

/* Keeps one member (rel and target copied); -1 past a limit. */
static int add(struct walk *w, const char *rel, const struct agent_entry *e)
{
    if (w->n == ARCHIVE_GET_MAX_ENTRIES)
        return refuse(w, 413, rel, "more than 100000 members");
    w->name_bytes += strlen(rel) + strlen(e->target) + 2;
    if (w->name_bytes > ARCHIVE_GET_MAX_NAMES)
        return refuse(w, 413, rel, "more than 64 MiB of names");
    if (e->kind == AGENT_ENTRY_FILE && (w->bytes += e->size) > ARCHIVE_GET_MAX_BYTES)
        return refuse(w, 413, rel, "more than 16 GiB of file data");
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        struct member *v = realloc(w->v, cap * sizeof(*v));
        if (!v)
            return refuse(w, 503, rel, "out of memory");
        w->v = v;
        w->cap = cap;
    }
    struct member *m = &w->v[w->n];
    m->e = *e;
    m->e.name = "";
    m->rel = strdup(rel);
    m->e.target = strdup(e->target);
    if (!m->rel || !m->e.target) {
        free(m->rel);
        free((char *)m->e.target);
        return refuse(w, 503, rel, "out of memory");
    }
    w->n++;
    return 0;
}

/* One folder's entries, gathered to be sorted: the tar's order is the
 * names' order, whatever order readdir had. */
struct batch {
    struct walk *w;
    const char *prefix;
    size_t first;            /* where this folder's members begin in w->v */
};

static int gather(void *opaque, const struct agent_entry *e)
{
    struct batch *b = opaque;
    char rel[AGENT_MAX_PATH];
    if ((size_t)snprintf(rel, sizeof(rel), "%s%s%s", b->prefix, b->prefix[0] ? "/" : "", e->name) >=
        sizeof(rel))
        return refuse(b->w, 400, b->prefix, "a name too long to copy out");
    if (e->kind == AGENT_ENTRY_OTHER)
        return 0; /* a device, fifo or socket: left out (FILE_GET cannot read it) */
    return add(b->w, rel, e);
}

static int by_rel(const void *a, const void *b)
{
    return strcmp(((const struct member *)a)->rel, ((const struct member *)b)->rel);
}

/* The members below folder `dir` (guest path) whose names start `prefix`. */
static int walk_dir(struct walk *w, const char *dir, const char *prefix)
{
    struct batch b = {w, prefix, w->n};
    int rc = agent_list(w->agent, dir, gather, &b);
    if (rc == -1 && w->status)
        return -1;
    if (rc == -ENOENT && prefix[0])
        return 0; /* it went away since its parent was listed */
    if (rc) {
        char shown[1000];
        w->status = guest_fs_status(-rc);
        snprintf(w->why, sizeof(w->why), "%s: %s", printable(dir, shown, sizeof(shown)),
                 w->status == 502 ? "the sandbox's agent sent a broken answer" : strerror(-rc));
        return -1;
    }
    size_t end = w->n;
    qsort(w->v + b.first, end - b.first, sizeof(*w->v), by_rel);
    for (size_t i = b.first; i < end; i++) {
        if (w->v[i].e.kind != AGENT_ENTRY_DIR)
            continue;
        /* w->v moves as it grows: copy what the call needs */
        char sub[AGENT_MAX_PATH], *rel = strdup(w->v[i].rel);
        if (!rel)
            return refuse(w, 503, prefix, "out of memory");
        const char *tail = rel + strlen(prefix) + (prefix[0] ? 1 : 0);
        int too_long = (size_t)snprintf(sub, sizeof(sub), "%s%s%s", dir,
                                        dir[1] ? "/" : "", tail) >= sizeof(sub);
        rc = too_long ? refuse(w, 400, rel, "a path too long to copy out") : walk_dir(w, sub, rel);
        free(rel);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- writing the tar ---- */

struct out {
    struct api_conn *c;
    struct archive *a;
    uint64_t got;
};

static la_ssize_t to_client(struct archive *a, void *opaque, const void *buf, size_t len)
{
    (void)a;
    struct out *o = opaque;
    api_chunked_write(o->c, buf, len);
    return o->c->broken ? -1 : (la_ssize_t)len;
}

static int file_data(void *opaque, const void *buf, size_t len)
{
    struct out *o = opaque;
    o->got += len;
    return archive_write_data(o->a, buf, len) == (la_ssize_t)len ? 0 : -EIO;
}

/* Writes member m; 0, or -1 when the tar cannot be completed. */
static int write_member(struct out *o, struct walk *w, const struct member *m, const char *path,
                        const char *top)
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
    /* WARN: a name that is not text in the daemon's C locale goes out
     * byte for byte (pax hdrcharset=BINARY), as it should */
    int rc = archive_write_header(o->a, e) >= ARCHIVE_WARN ? 0 : -1;
    archive_entry_free(e);
    if (rc || m->e.kind != AGENT_ENTRY_FILE)
        return rc;
    o->got = 0;
    /* a file that grew past, or shrank below, its listed size cannot
     * make the member its header announced */
    rc = agent_file_get_to(w->agent, guest, m->e.size, file_data, o);
    return rc || o->got != m->e.size ? -1 : 0;
}

static void stream(struct api_conn *c, struct walk *w, const char *path, const char *top)
{
    struct out o = {c, archive_write_new(), 0};
    if (!o.a || archive_write_set_format_pax_restricted(o.a) != ARCHIVE_OK ||
        archive_write_open(o.a, &o, NULL, to_client, NULL) != ARCHIVE_OK) {
        if (o.a)
            archive_write_free(o.a);
        api_error(c, 503, NULL, "cannot write a tar: %s", strerror(ENOMEM));
        return;
    }
    api_chunked_begin(c, 200, "application/x-tar");
    int rc = 0;
    for (size_t i = 0; i < w->n && !rc && !c->broken; i++)
        rc = write_member(&o, w, &w->v[i], path, top);
    if (!rc && archive_write_close(o.a) == ARCHIVE_OK && !c->broken)
        api_chunked_end(c);
    else
        api_chunked_abort(c);
    archive_write_free(o.a);
}

void archive_get(struct api_conn *c, const struct sandbox *sb)
{
    char path[AGENT_MAX_PATH], target[AGENT_MAX_PATH];
    if (guest_fs_path(c, path))
        return;
    size_t pl = strlen(path);
    while (pl > 1 && path[pl - 1] == '/')
        path[--pl] = '\0';
    const char *top = pl == 1 ? "." : strrchr(path, '/') + 1;
    struct walk w = {.agent = guest_fs_dial(c, sb)};
    if (w.agent < 0)
        return;
    struct agent_entry e;
    int rc = agent_stat(w.agent, path, &e, target);
    if (rc) {
        close(w.agent);
        guest_fs_error(c, path, -rc);
        return;
    }
    if (e.kind == AGENT_ENTRY_OTHER)
        rc = refuse(&w, 400, path, "a device, fifo or socket (not copied)");
    if (!rc)
        rc = add(&w, "", &e);
    if (!rc && e.kind == AGENT_ENTRY_DIR)
        rc = walk_dir(&w, path, "");
    if (rc)
        api_error(c, w.status, "path", "%s", w.why);
    else
        stream(c, &w, path, top);
    close(w.agent);
    walk_free(&w);
}
