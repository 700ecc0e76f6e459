/* A container's folder and status; see container_state.h. */
#include "vmm/runtime/container_state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/parse.h"
#include "vmm/util/rmtree.h"

bool container_id_ok(const char *id)
{
    size_t n = strlen(id);
    if (!n || n > CONTAINER_ID_MAX || !strcmp(id, ".") || !strcmp(id, ".."))
        return false;
    for (const char *p = id; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("_+.-", *p)))
            return false;
    return true;
}

void container_path(const struct container *c, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", c->dir, name);
}

static int set_dir(const char *root, const char *id, struct container *c)
{
    memset(c, 0, sizeof(*c));
    if (!container_id_ok(id))
        return -EINVAL;
    snprintf(c->id, sizeof(c->id), "%s", id);
    if (snprintf(c->dir, sizeof(c->dir), "%s/%s", root, id) >= (int)sizeof(c->dir))
        return -ENAMETOOLONG;
    return 0;
}

/* The recorded pid and its start time, when state.json has them. */
static void read_pid(struct container *c)
{
    json_t *pid = json_object_get(c->state, "pid"), *start = json_object_get(c->state, "pid_start");
    if (json_is_integer(pid) && json_integer_value(pid) > 0 && json_integer_value(pid) < INT32_MAX &&
        json_is_integer(start)) {
        c->pid = (pid_t)json_integer_value(pid);
        c->pid_start = (uint64_t)json_integer_value(start);
    }
}

int container_open(const char *root, const char *id, struct container *c)
{
    int e = set_dir(root, id, c);
    if (e)
        return e == -EINVAL ? -ENOENT : e;
    struct stat st;
    if (stat(c->dir, &st) < 0)
        return -errno;
    char p[PATH_MAX + 16];
    container_path(c, "state.json", p, sizeof(p));
    json_error_t je;
    c->state = json_load_file(p, JSON_REJECT_DUPLICATES, &je);
    if (c->state && !json_is_object(c->state)) {
        json_decref(c->state);
        c->state = NULL;
    }
    read_pid(c);
    return 0;
}

void container_close(struct container *c)
{
    json_decref(c->state);
    c->state = NULL;
}

int container_make(const char *root, const char *id, struct container *c)
{
    int e = set_dir(root, id, c);
    if (e)
        return e;
    /* --root as the caller names it, made with its parents as runc does
     * (Docker names one under a folder nobody made yet) */
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s", root);
    for (char *s = p + 1;; s++) {
        if (*s && *s != '/')
            continue;
        char keep = *s;
        *s = '\0';
        if (mkdir(p, 0700) < 0 && errno != EEXIST)
            return -errno;
        if (!(*s = keep))
            break;
    }
    if (mkdir(c->dir, 0700) < 0)
        return -errno;
    container_path(c, "execs", p, sizeof(p));
    if (mkdir(p, 0700) < 0)
        return -errno;
    return 0;
}

int container_save(const struct container *c)
{
    char p[PATH_MAX + 16], tmp[PATH_MAX + 16];
    container_path(c, "state.json", p, sizeof(p));
    container_path(c, ".state.json.tmp", tmp, sizeof(tmp));
    if (json_dump_file(c->state, tmp, JSON_COMPACT) < 0)
        return -EIO;
    if (rename(tmp, p) < 0) {
        int e = errno;
        unlink(tmp);
        return -e;
    }
    return 0;
}

static bool exists(const struct container *c, const char *name)
{
    char p[PATH_MAX + 16];
    container_path(c, name, p, sizeof(p));
    return access(p, F_OK) == 0;
}

enum container_status container_status(const struct container *c)
{
    if (!c->state || !c->pid)
        return c->state ? CONTAINER_STOPPED : CONTAINER_CREATING;
    if (proc_start_time(c->pid) != c->pid_start)
        return CONTAINER_STOPPED;
    if (exists(c, "start"))
        return CONTAINER_CREATED;
    return exists(c, "paused") ? CONTAINER_PAUSED : CONTAINER_RUNNING;
}

const char *container_status_name(enum container_status s)
{
    static const char *const names[] = {"creating", "created", "running", "paused", "stopped"};
    return names[s];
}

json_t *container_state_json(const struct container *c)
{
    enum container_status s = container_status(c);
    json_t *st = c->state;
    json_t *ann = json_object_get(st, "annotations");
    return json_pack("{s:s, s:s, s:s, s:i, s:O, s:O, s:O, s:O}", "ociVersion", "1.0.2", "id",
                     c->id, "status", container_status_name(s), "pid",
                     s == CONTAINER_STOPPED || s == CONTAINER_CREATING ? 0 : (int)c->pid, "bundle",
                     json_object_get(st, "bundle") ? json_object_get(st, "bundle") : json_null(),
                     "rootfs", json_object_get(st, "rootfs") ? json_object_get(st, "rootfs")
                                                             : json_null(),
                     "created", json_object_get(st, "created") ? json_object_get(st, "created")
                                                               : json_null(),
                     "annotations", ann ? ann : json_null());
}

int container_add_exec(const struct container *c, pid_t pid)
{
    char p[PATH_MAX + 32], line[32];
    snprintf(p, sizeof(p), "%s/execs/%d", c->dir, (int)pid);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int n = snprintf(line, sizeof(line), "%llu\n", (unsigned long long)proc_start_time(pid));
    ssize_t w = write(fd, line, (size_t)n);
    close(fd);
    return w == n ? 0 : -EIO;
}

void container_drop_exec(const struct container *c, pid_t pid)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof(p), "%s/execs/%d", c->dir, (int)pid);
    unlink(p);
}

unsigned container_execs(const struct container *c, pid_t *pids, unsigned cap)
{
    char p[PATH_MAX + 16];
    container_path(c, "execs", p, sizeof(p));
    DIR *d = opendir(p);
    unsigned n = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        uint64_t v, start = 0;
        if (parse_uint(de->d_name, INT32_MAX, &v))
            continue;
        char f[PATH_MAX + 300], line[32] = "";
        snprintf(f, sizeof(f), "%s/%s", p, de->d_name);
        int fd = open(f, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            ssize_t r = read(fd, line, sizeof(line) - 1);
            line[r > 0 ? r : 0] = '\0';
            close(fd);
            start = strtoull(line, NULL, 10);
        }
        if (!start || proc_start_time((pid_t)v) != start) {
            unlink(f); /* that stand-in is gone */
            continue;
        }
        if (n < cap)
            pids[n++] = (pid_t)v;
    }
    if (d)
        closedir(d);
    return n;
}

void container_remove(const struct container *c)
{
    if (c->dir[0])
        rmtree(c->dir);
}
