/* The image store's paths and records; see image_store.h. */
#include "vmm/image/image_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/rmtree.h"

static int make_dir(const char *p)
{
    return mkdir(p, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

int image_store_open(struct image_store *st, char *err, size_t cap)
{
    const char *home = getenv("AIRLOCK_HOME"), *xdg = getenv("XDG_DATA_HOME"), *h = getenv("HOME");
    int n;
    if (home && home[0])
        n = snprintf(st->root, sizeof(st->root), "%s", home);
    else if (geteuid() == 0)
        n = snprintf(st->root, sizeof(st->root), "/var/lib/airlock");
    else if (xdg && xdg[0])
        n = snprintf(st->root, sizeof(st->root), "%s/airlock", xdg);
    else if (h && h[0])
        n = snprintf(st->root, sizeof(st->root), "%s/.local/share/airlock", h);
    else
        return snprintf(err, cap, "no image store: set AIRLOCK_HOME (no HOME)"), -1;
    if (n < 0 || (size_t)n >= sizeof(st->root))
        return snprintf(err, cap, "the image store's path is too long"), -1;
    static const char *const sub[] = {"", "/disks", "/images", "/tmp", "/mounts"};
    for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s%s", st->root, sub[i]);
        /* The store's own parents (~/.local/share) may be missing. */
        if (i == 0 && !home) {
            char q[PATH_MAX];
            snprintf(q, sizeof(q), "%s", p);
            for (char *c = q + 1; *c; c++)
                if (*c == '/') {
                    *c = '\0';
                    make_dir(q);
                    *c = '/';
                }
        }
        int e = make_dir(p);
        if (e)
            return snprintf(err, cap, "the image store %s: %s", p, strerror(-e)), -1;
    }
    return 0;
}

bool image_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > IMAGE_NAME_MAX || name[0] == '.' || name[0] == '-')
        return false;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr("._:@-", *c)))
            return false;
    return true;
}

void image_store_record_path(const struct image_store *st, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/images/%s.json", st->root, name);
}

void image_store_disk_path(const struct image_store *st, const char *id, char *out, size_t cap)
{
    const char *hex = strchr(id, ':');
    snprintf(out, cap, "%s/disks/%s.ext4", st->root, hex ? hex + 1 : id);
}

void image_store_mounts_path(const struct image_store *st, char *out, size_t cap)
{
    snprintf(out, cap, "%s/mounts", st->root);
}

json_t *image_store_get(const struct image_store *st, const char *name, char *err, size_t cap)
{
    char p[PATH_MAX];
    if (!image_name_ok(name))
        return snprintf(err, cap, "'%.140s' is not an image name (letters, digits, . _ : @ -)",
                        name), NULL;
    image_store_record_path(st, name, p, sizeof(p));
    json_error_t je;
    json_t *j = json_load_file(p, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        snprintf(err, cap, access(p, F_OK) ? "no image '%s' (airlock image ls)"
                                           : "image '%s': a broken record", name);
    return j;
}

int image_store_put(const struct image_store *st, const char *name, json_t *rec, char *err,
                    size_t cap)
{
    char p[PATH_MAX], tmp[PATH_MAX + 8];
    image_store_record_path(st, name, p, sizeof(p));
    snprintf(tmp, sizeof(tmp), "%s.new", p);
    if (json_dump_file(rec, tmp, JSON_INDENT(2) | JSON_SORT_KEYS) || rename(tmp, p) < 0) {
        snprintf(err, cap, "writing %s: %s", p, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int image_store_each(const struct image_store *st, image_store_fn *fn, void *ctx)
{
    char dir[PATH_MAX], err[512];
    snprintf(dir, sizeof(dir), "%s/images", st->root);
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n <= 5 || strcmp(e->d_name + n - 5, ".json"))
            continue;
        char name[IMAGE_NAME_MAX + 1];
        snprintf(name, sizeof(name), "%.*s", (int)(n - 5), e->d_name);
        json_t *rec = image_store_get(st, name, err, sizeof(err));
        if (rec)
            rc = fn(name, rec, ctx);
        json_decref(rec);
    }
    closedir(d);
    return rc;
}

struct find_id {
    const char *id;
    json_t *found;
};

static int match_id(const char *name, json_t *rec, void *ctx)
{
    struct find_id *f = ctx;
    (void)name;
    if (strcmp(json_string_value(json_object_get(rec, "id")) ?: "", f->id))
        return 0;
    f->found = json_incref(rec);
    return 1;
}

json_t *image_store_find_id(const struct image_store *st, const char *id)
{
    struct find_id f = {.id = id};
    image_store_each(st, match_id, &f);
    return f.found;
}

/* ---- an import's own folder under tmp/ ---- */

#define WORK_PREFIX "import."

/* Removes the work folders whose import is gone: the kernel drops a
 * folder's flock when the process holding it dies, however it died.
 * Under tmp/'s own exclusive lock, which an import holds shared from
 * making its folder until it has locked it: a folder made but not yet
 * locked is never taken for a dead import's. */
static void sweep(int tfd, const char *tmp)
{
    int dfd = dup(tfd);
    DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    if (flock(tfd, LOCK_EX) == 0) {
        for (struct dirent *e; (e = readdir(d));) {
            if (strncmp(e->d_name, WORK_PREFIX, strlen(WORK_PREFIX)))
                continue;
            int fd = openat(tfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
                char p[PATH_MAX + 300];
                snprintf(p, sizeof(p), "%s/%s", tmp, e->d_name);
                rmtree(p);
            }
            if (fd >= 0)
                close(fd);
        }
        flock(tfd, LOCK_UN);
    }
    closedir(d);
}

int image_store_work(const struct image_store *st, char *out, size_t cap, char *err, size_t ecap)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s/tmp", st->root);
    int tfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (tfd < 0)
        return snprintf(err, ecap, "%s: %s", tmp, strerror(errno)), -1;
    sweep(tfd, tmp);
    int fd = -1, e = 0;
    snprintf(out, cap, "%s/" WORK_PREFIX "XXXXXX", tmp);
    if (flock(tfd, LOCK_SH) < 0 || !mkdtemp(out) ||
        (fd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || flock(fd, LOCK_EX) < 0)
        e = errno;
    close(tfd); /* and its shared lock */
    if (e) {
        if (fd >= 0)
            close(fd);
        rmdir(out);
        return snprintf(err, ecap, "%s: %s", tmp, strerror(e)), -1;
    }
    return fd;
}
