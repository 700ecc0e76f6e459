/* Staging folder to ext4; see rootfs_disk.h. */
#include "vmm/image/rootfs_disk.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/image/e2fs_tool.h"
#include "vmm/util/printable.h"

int rootfs_owners_add(void *owners, const struct layer_owner *o)
{
    struct rootfs_owners *l = owners;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        struct rootfs_owner *v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    struct rootfs_owner *e = &l->v[l->n];
    *e = (struct rootfs_owner){.uid = o->uid, .gid = o->gid, .mode = o->mode};
    e->path = strdup(o->path);
    if (o->caps && o->caps_len && (e->caps = malloc(o->caps_len))) {
        memcpy(e->caps, o->caps, o->caps_len);
        e->caps_len = o->caps_len;
    }
    if (!e->path || (o->caps && o->caps_len && !e->caps)) {
        free(e->path);
        free(e->caps);
        return -ENOMEM;
    }
    l->n++;
    return 0;
}

void rootfs_owners_free(struct rootfs_owners *o)
{
    for (size_t i = 0; i < o->n; i++) {
        free(o->v[i].path);
        free(o->v[i].caps);
    }
    free(o->v);
    memset(o, 0, sizeof(*o));
}

/* ---- the tree's size, and its folders' ---- */

static uint64_t tree_bytes, tree_inodes;
/* The entries seen so far in the folder being walked at each level (nftw
 * walks depth first: a folder's entries are all seen before its next
 * sibling); a path of PATH_MAX has fewer levels. */
static unsigned folder_entries[PATH_MAX / 2 + 2];
static size_t walk_root_len;
static unsigned walk_max_entries;
static char walk_why[400];

static int count(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    tree_bytes += (uint64_t)st->st_blocks * 512;
    tree_inodes++;
    size_t level = (size_t)ftw->level;
    if (level + 1 >= sizeof(folder_entries) / sizeof(folder_entries[0]))
        return errno = ENAMETOOLONG, -1;
    if (flag == FTW_D)
        folder_entries[level + 1] = 0;
    if (level == 0 || ++folder_entries[level] <= walk_max_entries)
        return 0;
    /* The folder: the path up to the entry's name, from the tree's top. */
    int len = ftw->base - 1 - (int)walk_root_len;
    char folder[PATH_MAX], shown[300];
    snprintf(folder, sizeof(folder), "/%.*s", len > 0 ? len - 1 : 0, path + walk_root_len + 1);
    snprintf(walk_why, sizeof(walk_why),
             "%s: more than %u entries in one folder (mke2fs -d's time grows with the square "
             "of a folder's entries)", printable(folder, shown, sizeof(shown)), walk_max_entries);
    return 1;
}

int rootfs_tree_size(const char *stage, unsigned max_folder_entries, uint64_t *bytes,
                     uint64_t *inodes, char *err, size_t cap)
{
    tree_bytes = tree_inodes = 0;
    walk_root_len = strlen(stage);
    while (walk_root_len > 1 && stage[walk_root_len - 1] == '/')
        walk_root_len--;
    walk_max_entries = max_folder_entries;
    int rc = nftw(stage, count, 64, FTW_PHYS);
    if (rc > 0)
        return snprintf(err, cap, "%s", walk_why), -1;
    if (rc < 0)
        return snprintf(err, cap, "reading the staged tree: %s", strerror(errno)), -1;
    *bytes = tree_bytes;
    *inodes = tree_inodes;
    return 0;
}

/* A debugfs argument: in double quotes, a quote doubled (its parser's
 * escape); a file name of ours. */
static void quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* ---- the owners script, by inode number ---- */

/* debugfs finds an entry named by path by reading each folder on the way
 * whole, so n commands in a folder of n entries cost n squared (20,000:
 * 47 s); named "<ino>", it reads nothing.  The numbers come from `ls -p
 * -r <ino>` of every folder, one debugfs run per depth: linear. */

/* The folders of one depth: their paths from the top ("" for it), their
 * inode numbers. */
struct folders {
    char **path;
    uint32_t *ino;
    size_t n, cap;
};

static int folders_add(struct folders *q, const char *path, uint32_t ino)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        char **p = realloc(q->path, cap * sizeof(*p));
        if (p)
            q->path = p;
        uint32_t *i = p ? realloc(q->ino, cap * sizeof(*i)) : NULL;
        if (!i)
            return -ENOMEM;
        q->ino = i;
        q->cap = cap;
    }
    if (!(q->path[q->n] = strdup(path)))
        return -ENOMEM;
    q->ino[q->n++] = ino;
    return 0;
}

static void folders_free(struct folders *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->path[i]);
    free(q->path);
    free(q->ino);
    memset(q, 0, sizeof(*q));
}

/* The owners' indices by path: open addressing, one slot per path, its
 * indices chained in order (a later one wins, as the layers do). */
struct owner_index {
    const struct rootfs_owners *o;
    size_t *head, *next, mask;
    uint32_t *ino; /* each owner's inode number, 0 until the walk finds it */
    bool *link;    /* whether that inode is a symlink (the tree's last word) */
};

#define NO_OWNER SIZE_MAX

static const char *owner_path(const struct owner_index *x, size_t i)
{
    const char *p = x->o->v[i].path;
    return p + (p[0] == '/');
}

static size_t *owner_slot(const struct owner_index *x, const char *path)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const char *c = path; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    size_t s = (size_t)h & x->mask;
    while (x->head[s] != NO_OWNER && strcmp(owner_path(x, x->head[s]), path))
        s = (s + 1) & x->mask;
    return &x->head[s];
}

static int owner_index_make(struct owner_index *x, const struct rootfs_owners *o)
{
    size_t slots = 16;
    while (slots < 2 * o->n)
        slots *= 2;
    *x = (struct owner_index){.o = o, .mask = slots - 1};
    x->head = malloc(slots * sizeof(*x->head));
    x->next = malloc((o->n + 1) * sizeof(*x->next));
    x->ino = calloc(o->n + 1, sizeof(*x->ino));
    x->link = calloc(o->n + 1, sizeof(*x->link));
    if (!x->head || !x->next || !x->ino || !x->link)
        return -ENOMEM;
    for (size_t s = 0; s < slots; s++)
        x->head[s] = NO_OWNER;
    for (size_t i = o->n; i-- > 0;) {
        size_t *slot = owner_slot(x, owner_path(x, i));
        x->next[i] = *slot;
        *slot = i;
    }
    return 0;
}

static void owner_index_free(struct owner_index *x)
{
    free(x->head);
    free(x->next);
    free(x->ino);
    free(x->link);
}

struct owners_walk {
    const char *stage, *disk, *work;
    uid_t uid;
    gid_t gid;
    FILE *script;
    struct owner_index ix;
};

/* One entry of a folder's listing, "/INO/MODE/UID/GID/NAME/SIZE/" (a
 * folder's SIZE empty): its number, mode and name (cut in place).  A
 * name has no '/', and no line break (layer_apply and dir_disk refuse
 * control characters): a line that does not parse is an error. */
static int listed(char *line, uint32_t *ino, unsigned long *mode, char **name)
{
    char *c = line + 1, *end;
    unsigned long v = strtoul(c, &end, 10);
    if (end == c || *end != '/' || v == 0 || v > UINT32_MAX)
        return -1;
    *ino = (uint32_t)v;
    *mode = strtoul(c = end + 1, &end, 8);
    if (end == c || *end != '/')
        return -1;
    for (int k = 0; k < 2; k++) /* uid, gid */
        if (!(end = strchr(end + 1, '/')))
            return -1;
    *name = end + 1;
    if (!(end = strchr(*name, '/')) || end == *name)
        return -1;
    *end = '\0';
    return 0;
}

/* A child of the folder `dir` as listed: to the disk's one owner if the
 * staged copy is not theirs, each owner entry naming it given its
 * number, a folder queued for the next depth. */
static int child(struct owners_walk *w, const char *dir, uint32_t ino, unsigned long mode,
                 const char *name, struct folders *next)
{
    if (!strcmp(name, ".") || !strcmp(name, ".."))
        return 0;
    char rel[PATH_MAX], staged[2 * PATH_MAX];
    if ((size_t)snprintf(rel, sizeof(rel), "%s%s%s", dir, dir[0] ? "/" : "", name) >= sizeof(rel))
        return -ENAMETOOLONG;
    snprintf(staged, sizeof(staged), "%s/%s", w->stage, rel);
    struct stat st;
    /* Not in the tree: mke2fs's lost+found, or a host folder changed
     * since (dir_disk walks it again and starts over). */
    if (lstat(staged, &st) < 0)
        return 0;
    if (st.st_uid != w->uid || st.st_gid != w->gid)
        fprintf(w->script, "sif <%u> uid %lu\nsif <%u> gid %lu\n", ino, (unsigned long)w->uid,
                ino, (unsigned long)w->gid);
    for (size_t i = *owner_slot(&w->ix, rel); i != NO_OWNER; i = w->ix.next[i]) {
        w->ix.ino[i] = ino;
        w->ix.link[i] = (mode & S_IFMT) == S_IFLNK;
    }
    return (mode & S_IFMT) == S_IFDIR ? folders_add(next, rel, ino) : 0;
}

/* Lists the folders of one depth (one debugfs run), queuing the next. */
static int list_depth(struct owners_walk *w, const struct folders *cur, struct folders *next)
{
    char ls[4200], out[4200];
    snprintf(ls, sizeof(ls), "%s/ls", w->work);
    snprintf(out, sizeof(out), "%s/ls.out", w->work);
    FILE *f = fopen(ls, "we");
    if (!f)
        return -errno;
    for (size_t i = 0; i < cur->n; i++)
        fprintf(f, "ls -p -r <%u>\n", cur->ino[i]);
    if (fclose(f))
        return -errno;
    int fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    char *df[] = {"debugfs", "-f", ls, (char *)w->disk, NULL};
    int rc = e2fs_tool_run(df, NULL, fd);
    f = rc ? NULL : fdopen(fd, "re");
    if (!f) {
        close(fd);
        return rc > 0 ? -EIO : rc ? rc : -errno;
    }
    rewind(f);
    char *line = NULL;
    size_t lcap = 0, k = 0;
    const char *dir = NULL;
    ssize_t n;
    /* Each folder's lines follow debugfs's echo of its command, in order. */
    while (!rc && (n = getline(&line, &lcap, f)) > 0) {
        if (line[n - 1] == '\n')
            line[--n] = '\0';
        unsigned long mode;
        uint32_t ino;
        char *name;
        if (!strncmp(line, "debugfs: ls ", 12)) {
            const char *num = strrchr(line, '<');
            if (k >= cur->n || !num || strtoul(num + 1, NULL, 10) != cur->ino[k])
                rc = -EPROTO;
            else
                dir = cur->path[k++];
        } else if (line[0] == '/') {
            rc = !dir || listed(line, &ino, &mode, &name) ? -EPROTO
                                                         : child(w, dir, ino, mode, name, next);
        }
    }
    free(line);
    fclose(f);
    unlink(ls);
    unlink(out);
    return rc ? rc : k == cur->n ? 0 : -EPROTO;
}

/* The owners' commands, in the layers' order, by inode number. */
static int owner_commands(struct owners_walk *w, const char *caps_dir)
{
    const struct rootfs_owners *o = w->ix.o;
    for (size_t i = 0; i < o->n; i++) {
        const struct rootfs_owner *e = &o->v[i];
        uint32_t ino = w->ix.ino[i];
        if (!ino)
            continue; /* a later layer removed it */
        const char *fields[3] = {"uid", "gid", "mode"};
        unsigned long vals[3] = {e->uid, e->gid, (unsigned long)e->mode};
        for (int k = 0; k < 3; k++)
            if (k < 2 || !w->ix.link[i]) /* a symlink's mode means nothing */
                fprintf(w->script, k == 2 ? "sif <%u> %s 0%lo\n" : "sif <%u> %s %lu\n", ino,
                        fields[k], vals[k]);
        if (e->caps) {
            char cf[4200];
            snprintf(cf, sizeof(cf), "%s/%zu", caps_dir, i);
            int fd = open(cf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            bool ok = fd >= 0 && write(fd, e->caps, e->caps_len) == (ssize_t)e->caps_len;
            if (fd >= 0)
                close(fd);
            if (!ok)
                return -EIO;
            fputs("ea_set -f ", w->script);
            quoted(w->script, cf);
            fprintf(w->script, " <%u> security.capability\n", ino);
        }
    }
    return 0;
}

/* mke2fs copies each entry's owner as the staging folder has it (ours,
 * not run as root): each entry first becomes the disk's one owner (root
 * for an image), then the layers' owners follow. */
static int write_script(const char *stage, const struct rootfs_owners *o, const char *disk,
                        uid_t uid, gid_t gid, const char *script, const char *work)
{
    struct owners_walk w = {.stage = stage, .disk = disk, .work = work, .uid = uid, .gid = gid};
    struct folders cur = {0}, next = {0};
    int rc = owner_index_make(&w.ix, o);
    if (!rc && !(w.script = fopen(script, "we")))
        rc = -errno;
    if (!rc)
        rc = folders_add(&cur, "", 2); /* EXT2_ROOT_INO */
    while (!rc && cur.n) {
        rc = list_depth(&w, &cur, &next);
        folders_free(&cur);
        cur = next;
        memset(&next, 0, sizeof(next));
    }
    if (!rc)
        rc = owner_commands(&w, work);
    if (w.script && fclose(w.script) && !rc)
        rc = -errno;
    folders_free(&cur);
    folders_free(&next);
    owner_index_free(&w.ix);
    return rc;
}

int rootfs_disk_make(const char *stage, const struct rootfs_owners *owners, const char *out,
                     unsigned headroom_mib, char *err, size_t cap)
{
    return rootfs_disk_make_owned(stage, owners, out, 0, 0, headroom_mib, err, cap);
}

/* With owners NULL, no owners script: mke2fs -d's copy stands as made. */
static int make_disk(const char *stage, const struct rootfs_owners *owners, const char *out,
                     uid_t uid, gid_t gid, unsigned headroom_mib, char *err, size_t cap)
{
    uint64_t data, entries;
    if (rootfs_tree_size(stage, ROOTFS_MAX_FOLDER_ENTRIES, &data, &entries, err, cap))
        return -1;
    /* Room for the data, its metadata and the journal, then the headroom. */
    uint64_t kib = (data + data / 8 + entries * 4096) / 1024 +
                   ((uint64_t)headroom_mib + 32) * 1024;
    char size[32], inodes[32], work[4096], script[4200], log_path[4200], root_owner[48];
    snprintf(root_owner, sizeof(root_owner), "root_owner=%lu:%lu", (unsigned long)uid,
             (unsigned long)gid);
    snprintf(size, sizeof(size), "%lluk", (unsigned long long)kib);
    snprintf(inodes, sizeof(inodes), "%llu", (unsigned long long)(entries + entries / 4 + 4096));
    snprintf(work, sizeof(work), "%s.work.XXXXXX", out);
    if (!mkdtemp(work)) {
        snprintf(err, cap, "a work folder beside %s: %s", out, strerror(errno));
        return -1;
    }
    snprintf(script, sizeof(script), "%s/debugfs", work);
    snprintf(log_path, sizeof(log_path), "%s/log", work);
    int log = open(log_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = log < 0 ? -errno : 0;
    const char *step = "the log";
    unlink(out);
    if (!rc) {
        step = "mke2fs";
        /* 4 KiB blocks at every size (mke2fs picks 1 KiB below 512 MiB):
         * the guest's page size and the copy-on-write cluster
         * (devices/disk.h), so no metadata write needs a copy-up read. */
        char *mk[] = {"mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096", "-m", "0", "-N", inodes,
                      "-E", root_owner, "-d", (char *)stage, (char *)out, size, NULL};
        rc = e2fs_tool_run(mk, NULL, log);
    }
    if (!rc && owners) {
        step = "the owners script";
        rc = write_script(stage, owners, out, uid, gid, script, work);
    }
    if (!rc && owners) {
        step = "debugfs";
        char *df[] = {"debugfs", "-w", "-f", script, (char *)out, NULL};
        rc = e2fs_tool_run(df, NULL, log);
    }
    if (!rc) {
        step = "e2fsck";
        char *ck[] = {"e2fsck", "-fn", (char *)out, NULL};
        rc = e2fs_tool_run(ck, NULL, log);
    }
    if (rc) {
        char line[300] = "";
        if (log >= 0)
            e2fs_tool_last_line(log, line, sizeof(line));
        snprintf(err, cap, "%s: %s", step,
                 rc < 0 ? strerror(-rc) : line[0] ? line : "failed");
        unlink(out);
    }
    if (log >= 0)
        close(log);
    /* The work folder holds flat files only. */
    for (size_t i = 0; owners && i < owners->n; i++) {
        char cf[4200];
        snprintf(cf, sizeof(cf), "%s/%zu", work, i);
        unlink(cf);
    }
    unlink(script);
    unlink(log_path);
    rmdir(work);
    return rc ? -1 : 0;
}

int rootfs_disk_make_owned(const char *stage, const struct rootfs_owners *owners, const char *out,
                           uid_t uid, gid_t gid, unsigned headroom_mib, char *err, size_t cap)
{
    return make_disk(stage, owners, out, uid, gid, headroom_mib, err, cap);
}

int rootfs_disk_make_kept(const char *stage, const char *out, unsigned headroom_mib, char *err,
                          size_t cap)
{
    struct stat st;
    if (stat(stage, &st) < 0) {
        snprintf(err, cap, "%s: %s", stage, strerror(errno));
        return -1;
    }
    return make_disk(stage, NULL, out, st.st_uid, st.st_gid, headroom_mib, err, cap);
}
