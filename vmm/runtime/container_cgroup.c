/* A container's cgroup; see container_cgroup.h. */
#include "vmm/runtime/container_cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "vmm/jail/cgroup.h"
#include "vmm/runtime/runtime_log.h"

/* A name of the path may not be empty, "." or "..", nor hold control bytes. */
static bool clean_part(const char *s, size_t n)
{
    if (!n || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20)
            return false;
    return true;
}

static int cgroupfs_path(const char *path, char *out, size_t cap)
{
    size_t n = (size_t)snprintf(out, cap, "%s", CGROUP_ROOT);
    const char *p = path;
    while (*p == '/')
        p++;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (!clean_part(p, len) || n + len + 2 > cap)
            return -1;
        out[n++] = '/';
        memcpy(out + n, p, len);
        n += len;
        out[n] = '\0';
        p += len;
        while (*p == '/')
            p++;
    }
    return strcmp(out, CGROUP_ROOT) ? 0 : -1;
}

/* "a-b-c.slice" -> "a.slice/a-b.slice/a-b-c.slice"; "-.slice" is the root. */
static int slice_path(const char *slice, char *out, size_t cap)
{
    size_t sl = strlen(slice);
    out[0] = '\0';
    if (!strcmp(slice, "-.slice"))
        return 0;
    if (sl < 7 || strcmp(slice + sl - 6, ".slice") || strchr(slice, '/'))
        return -1;
    size_t base = sl - 6, n = 0;
    for (size_t i = 0; i <= base; i++) {
        if (i < base && slice[i] != '-')
            continue;
        if (i == 0 || slice[i - 1] == '-')
            return -1; /* "-a", "a--b" */
        int w = snprintf(out + n, cap - n, "%s%.*s.slice", n ? "/" : "", (int)i, slice);
        if (w < 0 || (size_t)w >= cap - n)
            return -1;
        n += (size_t)w;
    }
    return 0;
}

int container_cgroup_path(const char *path, bool systemd, char *out, size_t cap, char *err,
                          size_t errcap)
{
    const char *c1 = strchr(path, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (systemd || (c2 && !strchr(c2 + 1, ':') && path[0] != '/')) {
        char slice[256], sp[PATH_MAX], rel[PATH_MAX];
        if (!c2 || (size_t)(c1 - path) >= sizeof(slice))
            return snprintf(err, errcap, "linux.cgroupsPath %.200s: want slice:prefix:name",
                            path), -1;
        snprintf(slice, sizeof(slice), "%.*s", (int)(c1 - path), path);
        if (!slice[0])
            snprintf(slice, sizeof(slice), "system.slice");
        const char *prefix = c1 + 1, *name = c2 + 1;
        int pl = (int)(c2 - prefix);
        if (slice_path(slice, sp, sizeof(sp)) || !*name ||
            snprintf(rel, sizeof(rel), "%s/%.*s%s%s%s", sp, pl, prefix, pl ? "-" : "", name,
                     strstr(name, ".slice") ? "" : ".scope") >= (int)sizeof(rel) ||
            cgroupfs_path(rel, out, cap))
            return snprintf(err, errcap, "linux.cgroupsPath %.200s: not a systemd cgroup", path),
                   -1;
        return 0;
    }
    if (cgroupfs_path(path, out, cap))
        return snprintf(err, errcap, "linux.cgroupsPath %.200s: want a path of names", path), -1;
    return 0;
}

/* mkdir -p from the root, delegating the controllers down to dir, whose
 * own are its parent's to enable: dir holds processes (the stand-ins
 * and the VM), and cgroup v2 lets no folder with processes give its
 * controllers to child folders. */
static int make_delegated(const char *dir, char *err, size_t cap)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s", dir);
    size_t root_len = strlen(CGROUP_ROOT);
    for (char *s = p + root_len;; s = strchr(s + 1, '/')) {
        char keep = s ? *s : '\0';
        if (s)
            *s = '\0';
        if (strlen(p) > root_len && mkdir(p, 0755) < 0 && errno != EEXIST)
            return snprintf(err, cap, "mkdir %.300s: %s", p, strerror(errno)), -1;
        if (!s)
            return 0;
        if (cgroup_delegate(p, err, cap))
            return -1;
        *s = keep;
    }
}

int container_cgroup_update(const char *dir, const struct oci_config *c, char *err, size_t cap)
{
    char v[64];
    if (c->cpu_quota != -1 || c->cpu_period) {
        uint64_t period = c->cpu_period ? c->cpu_period : 100000;
        if (c->cpu_quota > 0)
            snprintf(v, sizeof(v), "%lld %llu", (long long)c->cpu_quota,
                     (unsigned long long)period);
        else
            snprintf(v, sizeof(v), "max %llu", (unsigned long long)period);
        int e = cgroup_write(dir, "cpu.max", v);
        if (e)
            return snprintf(err, cap, "%.300s/cpu.max: %s", dir, strerror(-e)), -1;
    }
    return 0;
}

int container_cgroup_make(const char *path, bool systemd, unsigned mem_mib, char *out, size_t cap,
                          char *err, size_t errcap)
{
    struct statfs sf;
    if (container_cgroup_path(path, systemd, out, cap, err, errcap))
        return -1;
    if (statfs(CGROUP_ROOT, &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC) {
        runtime_warn("%s is not a cgroup2 mount: the container gets no cgroup", CGROUP_ROOT);
        out[0] = '\0';
        return 0;
    }
    char mem[32];
    /* The guest's RAM, the monitor's overhead, and the stand-ins' few MiB. */
    snprintf(mem, sizeof(mem), "%llu",
             ((unsigned long long)mem_mib << 20) + 2 * CGROUP_MONITOR_OVERHEAD);
    int e;
    if (make_delegated(out, err, errcap))
        return -1;
    if ((e = cgroup_write(out, "memory.max", mem))) {
        snprintf(err, errcap, "%.300s/memory.max: %s", out, strerror(-e));
        return -1;
    }
    /* Guest RAM pushed to swap would make memory.max a soft limit (not
     * every host has swap accounting: then there is no swap to fear). */
    cgroup_write(out, "memory.swap.max", "0");
    return 0;
}

int container_cgroup_join(const char *dir, char *err, size_t cap)
{
    int e = cgroup_write(dir, "cgroup.procs", "0");
    if (e)
        snprintf(err, cap, "%.300s/cgroup.procs: %s", dir, strerror(-e));
    return e;
}

int container_cgroup_freeze(const char *dir, bool frozen)
{
    return cgroup_write(dir, "cgroup.freeze", frozen ? "1" : "0");
}

/* The pids of one folder's cgroup.procs, then of its child folders. */
static unsigned collect(const char *dir, int *pids, unsigned n, unsigned cap, int depth)
{
    char p[PATH_MAX + 32], line[32];
    snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
    FILE *f = fopen(p, "re");
    while (f && fgets(line, sizeof(line), f))
        if (n < cap)
            pids[n++] = atoi(line);
    if (f)
        fclose(f);
    DIR *d = depth < 4 ? opendir(dir) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (de->d_type == DT_DIR && de->d_name[0] != '.') {
            snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
            n = collect(p, pids, n, cap, depth + 1);
        }
    if (d)
        closedir(d);
    return n;
}

unsigned container_cgroup_pids(const char *dir, int *pids, unsigned cap)
{
    return dir[0] ? collect(dir, pids, 0, cap, 0) : 0;
}

/* Children first; a folder still busy is retried for up to 5 s. */
static void remove_tree(const char *dir, int depth)
{
    char p[PATH_MAX + 32];
    DIR *d = depth < 4 ? opendir(dir) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (de->d_type == DT_DIR && de->d_name[0] != '.') {
            snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
            remove_tree(p, depth + 1);
        }
    if (d)
        closedir(d);
    struct timespec pause = {.tv_nsec = 25 * 1000 * 1000};
    for (int i = 0; i < 200 && rmdir(dir) < 0 && errno == EBUSY; i++)
        nanosleep(&pause, NULL);
}

void container_cgroup_remove(const char *dir)
{
    if (dir && dir[0])
        remove_tree(dir, 0);
}
