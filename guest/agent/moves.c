/* RENAME, REMOVE, CHOWN (proto.h, since version 11): a path moved, removed
 * (a folder with what it holds), or given an owner.  Each answers DONE or
 * one ERROR naming the errno.  A recursive remove walks by fds, each
 * folder opened beneath its parent with no symlink followed, so a link
 * planted in the tree is removed, never the tree it points at. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/agent.h"

static int done(struct aconn *c, int e)
{
    return e ? aconn_send_error(c, e, AGENT_OP_FILE) : aconn_send(c, AGENT_DONE, NULL, 0);
}

/* "/" and its spellings ("//", "/."...) are never moved or removed. */
static int is_root(const char *path)
{
    struct stat a, b;
    return !stat(path, &a) && !stat("/", &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
           S_ISDIR(a.st_mode) && !lstat(path, &a) && S_ISDIR(a.st_mode);
}

int agent_do_rename(struct aconn *c, const struct agent_msg *m)
{
    if (is_root(m->u.rename.from) || is_root(m->u.rename.to))
        return done(c, EBUSY);
    unsigned flags = m->u.rename.flags & AGENT_RENAME_F_NOREPLACE ? RENAME_NOREPLACE : 0;
    return done(c, renameat2(AT_FDCWD, m->u.rename.from, AT_FDCWD, m->u.rename.to, flags)
                       ? errno : 0);
}

/* Empties the folder `fd` (closed here), depth folders below the top. */
static int empty_dir(int fd, unsigned depth)
{
    if (depth > AGENT_REMOVE_MAX_DEPTH) {
        close(fd);
        return ELOOP;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return e;
    }
    int e = 0;
    struct dirent *de;
    while (!e && (errno = 0, de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (!unlinkat(dirfd(d), de->d_name, 0))
            continue;
        if (errno == ENOENT)
            continue;
        if (errno != EISDIR && errno != EPERM) { /* EPERM: a folder, on some kernels */
            e = errno;
            break;
        }
        int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) {
            e = errno == ENOENT ? 0 : errno;
            continue;
        }
        e = empty_dir(sub, depth + 1);
        if (!e && unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) && errno != ENOENT)
            e = errno;
        if (!e) /* the folder shrank under readdir: read it again from the start */
            rewinddir(d);
    }
    if (!e && errno && !de)
        e = errno;
    closedir(d);
    return e;
}

int agent_do_remove(struct aconn *c, const struct agent_msg *m)
{
    const char *path = m->u.remove.path;
    if (is_root(path))
        return done(c, EBUSY);
    struct stat st;
    if (lstat(path, &st))
        return done(c, errno);
    if (!S_ISDIR(st.st_mode))
        return done(c, unlink(path) ? errno : 0);
    if (!rmdir(path))
        return done(c, 0);
    if ((errno != ENOTEMPTY && errno != EEXIST) || !(m->u.remove.flags & AGENT_REMOVE_F_RECURSIVE))
        return done(c, errno);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return done(c, errno);
    int e = empty_dir(fd, 1);
    if (!e && rmdir(path))
        e = errno;
    return done(c, e);
}

int agent_do_chown(struct aconn *c, const struct agent_msg *m)
{
    return done(c, fchownat(AT_FDCWD, m->u.chown.path, m->u.chown.uid, m->u.chown.gid,
                            AT_SYMLINK_NOFOLLOW) ? errno : 0);
}
