/* The volume store; see volume_store.h. */
#include "vmm/volume/volume_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmm/image/e2fs_tool.h"
#include "vmm/util/proc_start.h"
#include "vmm/util/user_dirs.h"

int volume_store_open(struct volume_store *vs, const char *state_dir, char *err, size_t cap)
{
    int n = snprintf(vs->dir, sizeof(vs->dir), "%s/%s", state_dir, VOLUME_STORE_DIR);
    if (n < 0 || (size_t)n >= sizeof(vs->dir)) {
        snprintf(err, cap, "the state folder %.300s: its path is too long", state_dir);
        return -1;
    }
    /* a --disk spec ends its path at a ',' (the VM takes the disk so) */
    if (strchr(vs->dir, ',')) {
        snprintf(err, cap, "the state folder %.300s holds a ','; give one without", state_dir);
        return -1;
    }
    int e = make_dirs(vs->dir, 0700);
    if (e) {
        snprintf(err, cap, "cannot make %.300s: %s", vs->dir, strerror(-e));
        return -1;
    }
    return 0;
}

void volume_disk_path(const struct volume_store *vs, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s.ext4", vs->dir, name);
}

static void record_path(const struct volume_store *vs, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s.json", vs->dir, name);
}

int volume_store_lock(const struct volume_store *vs, bool excl)
{
    int fd = open(vs->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    while (flock(fd, excl ? LOCK_EX : LOCK_SH) < 0)
        if (errno != EINTR) {
            int e = errno;
            close(fd);
            return -e;
        }
    return fd;
}

void volume_store_unlock(int lock_fd)
{
    if (lock_fd >= 0)
        close(lock_fd); /* the lock goes with the last fd of its open file */
}

bool volume_holder_alive(const struct volume_holder *h)
{
    return h->sandbox[0] || (h->pid > 0 && proc_start_time((pid_t)h->pid) == h->pid_start);
}

/* ---- the record's JSON ---- */

json_t *volume_rec_json(const struct volume_rec *rec)
{
    json_t *hs = json_array();
    for (unsigned i = 0; i < rec->nholders; i++) {
        const struct volume_holder *h = &rec->h[i];
        json_t *o = h->sandbox[0] ? json_pack("{ss}", "sandbox", h->sandbox)
                                  : json_pack("{sI}", "pid", (json_int_t)h->pid);
        json_object_set_new(o, "readonly", json_boolean(h->readonly));
        json_array_append_new(hs, o);
    }
    return json_pack("{ss sI sI sI so}", "name", rec->name, "size_mib", (json_int_t)rec->size_mib,
                     "used_bytes", (json_int_t)rec->used_bytes, "created_ms",
                     (json_int_t)rec->created_ms, "holders", hs);
}

/* The file's JSON: the API's, with each run holder's start time. */
static json_t *file_json(const struct volume_rec *rec)
{
    json_t *o = volume_rec_json(rec);
    json_object_del(o, "used_bytes");
    json_t *hs = json_object_get(o, "holders");
    for (unsigned i = 0; i < rec->nholders; i++)
        if (!rec->h[i].sandbox[0])
            json_object_set_new(json_array_get(hs, i), "pid_start",
                                json_integer((json_int_t)rec->h[i].pid_start));
    return o;
}

/* A record's JSON back (a record file's, or an API answer's), every field
 * checked: a damaged file must not name a file or a sandbox it should
 * not, and an answer read from a socket is not trusted either. */
int volume_rec_from_json(json_t *o, struct volume_rec *rec)
{
    memset(rec, 0, sizeof(*rec));
    json_t *hs = json_object_get(o, "holders");
    const char *n = json_string_value(json_object_get(o, "name"));
    json_int_t size = json_integer_value(json_object_get(o, "size_mib"));
    json_int_t used = json_integer_value(json_object_get(o, "used_bytes"));
    if (!n || !volume_name_ok(n, strlen(n)) || size < VOLUME_SIZE_MIN_MIB ||
        size > VOLUME_SIZE_MAX_MIB || used < 0 || !json_is_array(hs) ||
        json_array_size(hs) > VOLUME_HOLDERS_MAX)
        return -EIO;
    snprintf(rec->name, sizeof(rec->name), "%s", n);
    rec->size_mib = (uint32_t)size;
    rec->used_bytes = (uint64_t)used; /* only an answer has it: a file's is its disk's */
    rec->created_ms = json_integer_value(json_object_get(o, "created_ms"));
    size_t i;
    json_t *h;
    json_array_foreach(hs, i, h) {
        struct volume_holder *v = &rec->h[rec->nholders];
        const char *sb = json_string_value(json_object_get(h, "sandbox"));
        json_t *ro = json_object_get(h, "readonly");
        if (!json_is_boolean(ro))
            return -EIO;
        v->readonly = json_is_true(ro);
        if (sb) {
            if (!*sb || strlen(sb) >= sizeof(v->sandbox) || strchr(sb, '/'))
                return -EIO;
            snprintf(v->sandbox, sizeof(v->sandbox), "%s", sb);
        } else {
            v->pid = (long)json_integer_value(json_object_get(h, "pid"));
            v->pid_start = (unsigned long long)json_integer_value(json_object_get(h, "pid_start"));
            if (v->pid <= 0)
                return -EIO;
        }
        rec->nholders++;
    }
    return 0;
}

int volume_store_read(const struct volume_store *vs, const char *name, struct volume_rec *rec)
{
    char p[PATH_MAX], disk[PATH_MAX];
    if (!volume_name_ok(name, strlen(name)))
        return -ENOENT;
    record_path(vs, name, p, sizeof(p));
    int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? -ENOENT : -EIO;
    struct stat st;
    json_t *o = NULL;
    if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size <= VOLUME_RECORD_MAX)
        o = json_loadfd(fd, JSON_REJECT_DUPLICATES, NULL);
    close(fd);
    int rc = o ? volume_rec_from_json(o, rec) : -EIO;
    if (!rc && strcmp(rec->name, name))
        rc = -EIO;
    json_decref(o);
    volume_disk_path(vs, name, disk, sizeof(disk));
    if (!rc && !stat(disk, &st))
        rec->used_bytes = (uint64_t)st.st_blocks * 512;
    return rc;
}

/* path's folder fsync'ed: a rename in it is on disk. */
static int sync_dir(const struct volume_store *vs)
{
    int fd = open(vs->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

int volume_store_write(const struct volume_store *vs, const struct volume_rec *rec)
{
    char p[PATH_MAX], tmp[PATH_MAX];
    record_path(vs, rec->name, p, sizeof(p));
    snprintf(tmp, sizeof(tmp), "%s/.%s.json.tmp", vs->dir, rec->name);
    json_t *o = file_json(rec);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        return -ENOMEM;
    int rc = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    size_t len = strlen(text);
    if (fd < 0)
        rc = -errno;
    else if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 || fsync(fd) < 0)
        rc = errno ? -errno : -EIO;
    if (fd >= 0 && close(fd) < 0 && !rc)
        rc = -errno;
    free(text);
    if (!rc && rename(tmp, p) < 0)
        rc = -errno;
    if (rc)
        unlink(tmp);
    return rc ? rc : sync_dir(vs);
}

/* ---- create, get, list, remove ---- */

/* mke2fs on the sized file; its last line in err when it fails. */
static int make_fs(const char *path, char *err, size_t cap)
{
    int log = memfd_create("mke2fs", MFD_CLOEXEC);
    if (log < 0)
        return snprintf(err, cap, "cannot make a log for mke2fs: %s", strerror(errno)), -errno;
    /* root_owner: the volume's top belongs to the user commands run as
     * (65534), who may write it; -m 0: no blocks kept for root, the
     * whole size is the guest's; lazy init: a 1 TiB volume is made in
     * seconds (the guest's kernel zeroes its inode tables later). */
    char *argv[] = {"mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096", "-m", "0", "-E",
                    "root_owner=65534:65534,lazy_itable_init=1,lazy_journal_init=1",
                    (char *)path, NULL};
    int rc = e2fs_tool_run(argv, NULL, log);
    if (rc) {
        char line[300];
        e2fs_tool_last_line(log, line, sizeof(line));
        if (rc < 0)
            snprintf(err, cap, "cannot run mke2fs: %s", strerror(-rc));
        else
            snprintf(err, cap, "mke2fs failed (status %d): %s", rc, line);
    }
    close(log);
    return rc ? -EIO : 0;
}

int volume_create(const struct volume_store *vs, const char *name, uint32_t size_mib,
                  struct volume_rec *rec, char *err, size_t cap)
{
    char disk[PATH_MAX], tmp[PATH_MAX];
    err[0] = '\0';
    if (!volume_name_ok(name, strlen(name)) || size_mib < VOLUME_SIZE_MIN_MIB ||
        size_mib > VOLUME_SIZE_MAX_MIB)
        return snprintf(err, cap, "a bad name or size"), -EINVAL;
    /* The lock for all of it: two creates of one name must not both make
     * a disk (mke2fs with lazy init takes a second or two at most). */
    int lk = volume_store_lock(vs, true);
    if (lk < 0)
        return snprintf(err, cap, "cannot lock %s: %s", vs->dir, strerror(-lk)), lk;
    int rc = volume_store_read(vs, name, rec);
    if (rc != -ENOENT) {
        volume_store_unlock(lk);
        if (!rc || rc == -EIO)
            snprintf(err, cap, "a volume named '%s' exists", name);
        return -EEXIST;
    }
    volume_disk_path(vs, name, disk, sizeof(disk));
    snprintf(tmp, sizeof(tmp), "%s/.%s.ext4.tmp", vs->dir, name);
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    rc = fd < 0 ? -errno : 0;
    if (!rc && ftruncate(fd, (off_t)size_mib << 20) < 0)
        rc = -errno;
    if (fd >= 0)
        close(fd);
    if (rc)
        snprintf(err, cap, "cannot make %s: %s", tmp, strerror(-rc));
    else
        rc = make_fs(tmp, err, cap);
    if (!rc && ((fd = open(tmp, O_RDONLY | O_CLOEXEC)) < 0 || fsync(fd) < 0))
        rc = -errno, snprintf(err, cap, "cannot sync %s: %s", tmp, strerror(errno));
    if (fd >= 0)
        close(fd);
    /* the disk first, then its record: a record always has its disk */
    if (!rc && rename(tmp, disk) < 0)
        rc = -errno, snprintf(err, cap, "cannot rename it to %s: %s", disk, strerror(errno));
    if (!rc) {
        memset(rec, 0, sizeof(*rec));
        snprintf(rec->name, sizeof(rec->name), "%s", name);
        rec->size_mib = size_mib;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        rec->created_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        if ((rc = volume_store_write(vs, rec)))
            snprintf(err, cap, "cannot write its record: %s", strerror(-rc));
        else
            rc = volume_store_read(vs, name, rec); /* with used_bytes */
    }
    if (rc) {
        unlink(tmp);
        unlink(disk);
    }
    volume_store_unlock(lk);
    return rc;
}

/* Leaves out the holders that are gone. */
static void live_only(struct volume_rec *rec)
{
    unsigned k = 0;
    for (unsigned i = 0; i < rec->nholders; i++)
        if (volume_holder_alive(&rec->h[i]))
            rec->h[k++] = rec->h[i];
    rec->nholders = k;
}

int volume_get(const struct volume_store *vs, const char *name, struct volume_rec *rec)
{
    int lk = volume_store_lock(vs, false);
    if (lk < 0)
        return lk;
    int rc = volume_store_read(vs, name, rec);
    volume_store_unlock(lk);
    if (!rc)
        live_only(rec);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int volume_names(const struct volume_store *vs, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(vs->dir);
    if (!d)
        return -errno;
    char **v = calloc(VOLUME_LIST_MAX, sizeof(*v));
    struct dirent *e;
    while (v && *n < VOLUME_LIST_MAX && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        /* NAME.json; the temporaries start with '.', which no name does */
        if (len <= 5 || strcmp(e->d_name + len - 5, ".json") ||
            !volume_name_ok(e->d_name, len - 5))
            continue;
        if (!(v[*n] = strndup(e->d_name, len - 5)))
            break;
        (*n)++;
    }
    closedir(d);
    if (!v)
        return -ENOMEM;
    qsort(v, *n, sizeof(*v), by_name);
    *names = v;
    return 0;
}

int volume_remove(const struct volume_store *vs, const char *name, struct volume_rec *rec)
{
    char p[PATH_MAX];
    int lk = volume_store_lock(vs, true);
    if (lk < 0)
        return lk;
    int rc = volume_store_read(vs, name, rec);
    if (!rc) {
        live_only(rec);
        if (rec->nholders)
            rc = -EBUSY;
    }
    /* A damaged record goes too: the volume cannot be attached anyway. */
    if (!rc || rc == -EIO) {
        record_path(vs, name, p, sizeof(p));
        rc = unlink(p) < 0 ? -errno : 0;
        volume_disk_path(vs, name, p, sizeof(p));
        if (!rc)
            unlink(p);
        sync_dir(vs);
    }
    volume_store_unlock(lk);
    return rc;
}
