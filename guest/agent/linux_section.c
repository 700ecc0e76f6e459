/* EXEC's linux section (proto.h, AGENT_EXEC_F_LINUX): an OCI config's
 * tmpfs mounts, linux.devices, rootfsPropagation, sysctl, readonlyPaths and
 * maskedPaths and root.readonly, applied in a new container's mount
 * namespace (the command's child, after agent_pidns_dev made its /dev),
 * in the order runc applies them; process.oomScoreAdj is child_run's
 * (exec.c).  A path that is not there is skipped, as runc skips it. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "guest/agent/agent.h"

/* path's folders made when missing (agent_mkdirs), its last name too
 * with `self`. */
static int folders_for(const char *path, bool self)
{
    char dir[AGENT_LNX_MAX_PATH];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!self && slash == dir)
        return 0; /* in / */
    if (!self)
        *slash = '\0';
    return agent_mkdirs(dir);
}

static int make_device(const struct agent_device *d)
{
    int rc = folders_for(d->path, false);
    if (rc)
        return rc;
    if (mknod(d->path, d->mode, makedev(d->major, d->minor)))
        return errno == EEXIST ? 0 : errno; /* runc keeps one already there */
    /* Owner, then the mode past the umask (chown clears set-id bits). */
    return chown(d->path, d->uid, d->gid) || chmod(d->path, d->mode & 07777) ? errno : 0;
}

_Static_assert(AGENT_LNX_TMPFS_FLAGS == (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC |
                                         MS_SYNCHRONOUS | MS_DIRSYNC | MS_NOATIME |
                                         MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME),
               "proto.h's tmpfs flags are Linux's");

static unsigned long propagation_flags(uint32_t prop)
{
    static const unsigned long flags[] = {
        [AGENT_LNX_PROP_SHARED] = MS_SHARED,
        [AGENT_LNX_PROP_SLAVE] = MS_SLAVE,
        [AGENT_LNX_PROP_PRIVATE] = MS_PRIVATE,
        [AGENT_LNX_PROP_UNBINDABLE] = MS_UNBINDABLE,
        [AGENT_LNX_PROP_RSHARED] = MS_REC | MS_SHARED,
        [AGENT_LNX_PROP_RSLAVE] = MS_REC | MS_SLAVE,
        [AGENT_LNX_PROP_RPRIVATE] = MS_REC | MS_PRIVATE,
        [AGENT_LNX_PROP_RUNBINDABLE] = MS_REC | MS_UNBINDABLE,
    };
    return flags[prop];
}

/* /proc/sys/KEY (dots as slashes) gets VALUE. */
static int write_sysctl(const struct agent_sysctl *s)
{
    char path[sizeof("/proc/sys/") + AGENT_LNX_MAX_KEY];
    snprintf(path, sizeof(path), "/proc/sys/%s", s->key);
    for (char *c = path + sizeof("/proc/sys/") - 1; *c; c++)
        if (*c == '.')
            *c = '/';
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno;
    size_t len = strlen(s->value);
    ssize_t n = write(fd, s->value, len);
    int rc = n < 0 ? errno : (size_t)n != len ? EIO : 0;
    close(fd);
    return rc;
}

/* The flags a remount must keep (a bind remount sets them all anew). */
static unsigned long kept_flags(const char *path)
{
    struct statvfs st;
    unsigned long keep = 0;
    if (statvfs(path, &st))
        return 0;
    if (st.f_flag & ST_NOSUID)
        keep |= MS_NOSUID;
    if (st.f_flag & ST_NODEV)
        keep |= MS_NODEV;
    if (st.f_flag & ST_NOEXEC)
        keep |= MS_NOEXEC;
    if (st.f_flag & ST_NOATIME)
        keep |= MS_NOATIME;
    if (st.f_flag & ST_NODIRATIME)
        keep |= MS_NODIRATIME;
    if (st.f_flag & ST_RELATIME)
        keep |= MS_RELATIME;
    return keep;
}

static int remount_ro(const char *path)
{
    return mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | kept_flags(path), NULL)
               ? errno
               : 0;
}

/* A read-only path: bound onto itself, then that bind made read-only. */
static int readonly_path(const char *path)
{
    if (mount(path, path, NULL, MS_BIND | MS_REC, NULL))
        return errno == ENOENT ? 0 : errno;
    return remount_ro(path);
}

/* A masked path: a folder under an empty read-only tmpfs, anything else
 * under /dev/null. */
static int mask_path(const char *path)
{
    struct stat st;
    if (stat(path, &st))
        return errno == ENOENT ? 0 : errno;
    if (S_ISDIR(st.st_mode))
        return mount("tmpfs", path, "tmpfs", MS_RDONLY, NULL) ? errno : 0;
    return mount("/dev/null", path, NULL, MS_BIND, NULL) ? errno : 0;
}

/* A tmpfs mount of the config's, its folder made first (an image may
 * lack it); then its propagation. */
static int make_tmpfs(const struct agent_tmpfs *t)
{
    int rc = folders_for(t->target, true);
    if (rc)
        return rc;
    if (mount("tmpfs", t->target, "tmpfs", t->flags, *t->options ? t->options : NULL))
        return errno;
    if (t->propagation && mount(NULL, t->target, NULL, propagation_flags(t->propagation), NULL))
        return errno;
    return 0;
}

int agent_lnx_apply(const struct agent_exec_req *r)
{
    int rc = 0;
    if (!(r->flags & AGENT_EXEC_F_LINUX))
        return 0;
    for (uint32_t i = 0; i < r->ntmpfs && !rc; i++)
        rc = make_tmpfs(&r->tmpfs[i]);
    for (uint32_t i = 0; i < r->ndevices && !rc; i++)
        rc = make_device(&r->devices[i]);
    if (!rc && r->propagation && mount(NULL, "/", NULL, propagation_flags(r->propagation), NULL))
        rc = errno;
    for (uint32_t i = 0; i < r->nsysctl && !rc; i++)
        rc = write_sysctl(&r->sysctl[i]);
    for (uint32_t i = 0; i < r->nreadonly && !rc; i++)
        rc = readonly_path(r->readonly[i]);
    for (uint32_t i = 0; i < r->nmasked && !rc; i++)
        rc = mask_path(r->masked[i]);
    if (!rc && (r->lnx_flags & AGENT_LNX_F_ROOT_RO))
        rc = remount_ro("/");
    return rc;
}
