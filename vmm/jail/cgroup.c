#include "vmm/jail/cgroup.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define CGROUP_PERIOD_US 100000 /* cpu.max's default period */
#define REMOVE_TRIES 400        /* x 25 ms: how long a VM may take to end */

void cgroup_name(struct cgroup *cg, const char *parent, pid_t owner)
{
    snprintf(cg->parent, sizeof(cg->parent), "%s", parent ? parent : CGROUP_PARENT);
    snprintf(cg->dir, sizeof(cg->dir), "%s/vm-%d", cg->parent, (int)owner);
}

void cgroup_join_name(struct cgroup *cg, const char *dir)
{
    snprintf(cg->dir, sizeof(cg->dir), "%s", dir);
    cg->parent[0] = '\0';
    cg->join = true;
}

int cgroup_write(const char *dir, const char *name, const char *value)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, value, strlen(value));
    int e = n < 0 ? -errno : 0;
    close(fd);
    return e;
}

/* Controllers reach a cgroup only when every ancestor delegates them
 * (cgroup-v2.rst, "Top-down Constraint").  Already enabled is fine. */
int cgroup_delegate(const char *dir, char *why, size_t whylen)
{
    static const char *const ctl[] = {"+memory", "+cpu", "+pids"};
    for (unsigned i = 0; i < 3; i++) {
        int e = cgroup_write(dir, "cgroup.subtree_control", ctl[i]);
        if (e) {
            snprintf(why, whylen, "%s/cgroup.subtree_control %s: %s", dir, ctl[i], strerror(-e));
            return e;
        }
    }
    return 0;
}

static int set_limits(const struct cgroup *cg, const struct cgroup_limits *lim, char *why,
                      size_t whylen)
{
    char mem[32], cpu[40], pids[16];
    snprintf(mem, sizeof(mem), "%llu", (unsigned long long)lim->memory_max);
    if (lim->cpu_pct)
        snprintf(cpu, sizeof(cpu), "%llu %u", (unsigned long long)lim->cpu_pct * CGROUP_PERIOD_US / 100,
                 CGROUP_PERIOD_US);
    else
        snprintf(cpu, sizeof(cpu), "max %u", CGROUP_PERIOD_US);
    snprintf(pids, sizeof(pids), "%u", lim->pids_max);
    const char *const files[] = {"memory.max", "cpu.max", "pids.max"};
    const char *const values[] = {mem, cpu, pids};
    for (unsigned i = 0; i < 3; i++) {
        int e = cgroup_write(cg->dir, files[i], values[i]);
        if (e) {
            snprintf(why, whylen, "%s/%s: %s", cg->dir, files[i], strerror(-e));
            return e;
        }
    }
    /* Guest RAM pushed to swap would make memory.max a soft limit. Not
     * every host has swap accounting: then there is no swap to fear. */
    cgroup_write(cg->dir, "memory.swap.max", "0");
    return 0;
}

int cgroup_enter(const struct cgroup *cg, const struct cgroup_limits *lim, char *why,
                 size_t whylen)
{
    struct statfs sf;
    if (statfs(CGROUP_ROOT, &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC) {
        snprintf(why, whylen, "%s is not a cgroup2 mount", CGROUP_ROOT);
        return -ENOTSUP;
    }
    int e = 0;
    if (cg->join) {
        if ((e = cgroup_write(cg->dir, "cgroup.procs", "0")))
            snprintf(why, whylen, "%s/cgroup.procs: %s", cg->dir, strerror(-e));
        return e;
    }
    bool own_parent = !strcmp(cg->parent, CGROUP_PARENT);
    if (own_parent && mkdir(CGROUP_PARENT, 0755) < 0 && errno != EEXIST) {
        e = -errno;
        snprintf(why, whylen, "mkdir %s: %s", CGROUP_PARENT, strerror(errno));
        return e;
    }
    /* A --cgroup-parent's ancestors are its maker's to delegate. */
    if ((own_parent && (e = cgroup_delegate(CGROUP_ROOT, why, whylen))) ||
        (e = cgroup_delegate(cg->parent, why, whylen)))
        return e;
    if (mkdir(cg->dir, 0755) < 0) {
        e = -errno;
        snprintf(why, whylen, "mkdir %s: %s", cg->dir, strerror(errno));
        return e;
    }
    if (!(e = set_limits(cg, lim, why, whylen)) &&
        (e = cgroup_write(cg->dir, "cgroup.procs", "0")))
        snprintf(why, whylen, "%s/cgroup.procs: %s", cg->dir, strerror(-e));
    if (e)
        rmdir(cg->dir);
    return e;
}

static void remove_retrying(const char *dir)
{
    struct timespec pause = {.tv_nsec = 25 * 1000 * 1000};
    for (unsigned i = 0; i < REMOVE_TRIES; i++) {
        if (rmdir(dir) == 0 || errno != EBUSY)
            return;
        nanosleep(&pause, NULL);
    }
}

void cgroup_remove(const struct cgroup *cg, bool vm_gone)
{
    struct stat st;
    if (!cg->dir[0] || cg->join || stat(cg->dir, &st) < 0)
        return; /* never created (no cgroup v2 here, or an early error), or not ours */
    if (vm_gone) {
        remove_retrying(cg->dir);
        return;
    }
    /* The caller exits now, with the VM process still tearing down (see
     * detach.h): the helper waits for it, holding none of our fds so no
     * one reading our output waits for the helper. */
    pid_t pid = fork();
    if (pid == 0) {
        close_range(0, ~0U, 0);
        remove_retrying(cg->dir);
        _exit(0);
    }
}
