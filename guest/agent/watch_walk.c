/* A recursive WATCH's folders: inotify watches one folder per watch
 * descriptor, so each subfolder gets one, and each made or moved in later.
 * A folder is opened once, beneath its parent's fd with no symlink
 * followed, and watched and read through that fd (/proc/self/fd/N), so
 * what is watched and what is read are the same folder whatever is
 * renamed meanwhile; names a rename made stale are set right by the
 * rename's own event, which comes after them.  Depth first over open
 * folders: the fds held are the depth, bounded by WALK_DEPTH. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "guest/agent/watch.h"

/* Folders open at once in a walk; one deeper than this is watched but not
 * read (an OVERFLOW names it).  Far beyond a real tree, well inside the
 * agent's RLIMIT_NOFILE. */
#define WALK_DEPTH 128

/* Kernel filesystems whose files change without inotify events: a
 * recursive watch does not walk into them. */
static bool pseudo_fs(int fd)
{
    struct statfs s;
    return fstatfs(fd, &s) == 0 &&
           (s.f_type == PROC_SUPER_MAGIC || s.f_type == SYSFS_MAGIC ||
            s.f_type == DEBUGFS_MAGIC || s.f_type == TRACEFS_MAGIC ||
            s.f_type == CGROUP_SUPER_MAGIC || s.f_type == CGROUP2_SUPER_MAGIC);
}

/* The watch of the folder open at fd, named path: 1 when it is new, 0
 * when the folder was watched already, -1 when it is not watched (a
 * pseudo filesystem, or a limit: an OVERFLOW names it). */
static int watch_fd(struct watch *w, int fd, const char *path)
{
    if (pseudo_fs(fd))
        return -1;
    char proc[32];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    int wd = inotify_add_watch(w->ino, proc, WATCH_DIR_MASK | IN_MASK_CREATE);
    if (wd < 0 && errno == ENOENT) /* no /proc: by name, the last one not followed */
        wd = inotify_add_watch(w->ino, path, WATCH_DIR_MASK | IN_MASK_CREATE | IN_DONT_FOLLOW);
    if (wd < 0 && errno == EEXIST)
        return 0;
    if (wd >= 0 && wtree_set(&w->tree, wd, path) == 0)
        return 1;
    if (wd >= 0)
        inotify_rm_watch(w->ino, wd);
    watch_push(w, AGENT_EVENT_OVERFLOW, false, path, NULL);
    return -1;
}

/* Whether name in dirfd is a folder (not a link to one). */
static bool is_dir(int dirfd, const struct dirent *de)
{
    if (de->d_type != DT_UNKNOWN)
        return de->d_type == DT_DIR;
    struct stat st;
    return fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* Whether an open failed because the folder is gone or is not one (its
 * removal or replacement is an event of its own). */
static bool gone(int e)
{
    return e == ENOENT || e == ENOTDIR || e == ELOOP;
}

struct frame {
    DIR *d;
    size_t len;  /* of its path, in the walk's buffer */
    bool fresh;  /* its watch is new: what it holds is news */
};

/* Opens the folder at fd (taken) as the walk's next frame: false when it
 * is not to be read. */
static bool enter(struct watch *w, struct frame *f, int fd, const char *path, bool known,
                  int depth)
{
    int added = watch_fd(w, fd, path);
    if (added < 0 || (added == 0 && !known)) {
        close(fd);
        return false;
    }
    if (depth == WALK_DEPTH) {
        watch_push(w, AGENT_EVENT_OVERFLOW, false, path, NULL); /* watched, never read */
        close(fd);
        return false;
    }
    f->d = fdopendir(fd);
    if (!f->d) {
        close(fd);
        watch_push(w, AGENT_EVENT_OVERFLOW, false, path, NULL);
        return false;
    }
    f->len = strlen(path);
    f->fresh = added == 1;
    return true;
}

void watch_walk(struct watch *w, const char *top, bool report, bool known)
{
    static struct frame st[WALK_DEPTH];
    static char path[AGENT_MAX_PATH];
    snprintf(path, sizeof(path), "%s", top);
    /* the root may be reached through a symlink; nothing below it is */
    int nofollow = strcmp(top, w->root) ? O_NOFOLLOW : 0;
    int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC | nofollow);
    if (fd < 0) {
        if (!gone(errno))
            watch_push(w, AGENT_EVENT_OVERFLOW, false, top, NULL);
        return;
    }
    int depth = enter(w, &st[0], fd, path, known, 0) ? 1 : 0;
    while (depth) {
        struct frame *f = &st[depth - 1];
        path[f->len] = 0;
        errno = 0;
        struct dirent *de = readdir(f->d);
        if (!de) {
            if (errno)
                watch_push(w, AGENT_EVENT_OVERFLOW, false, path, NULL);
            closedir(f->d);
            depth--;
            continue;
        }
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char dir[AGENT_MAX_PATH];
        memcpy(dir, path, f->len + 1);
        if (wtree_join(path, dir, de->d_name)) {
            watch_push(w, AGENT_EVENT_OVERFLOW, false, dir, NULL);
            continue;
        }
        bool sub = is_dir(dirfd(f->d), de);
        if (report && f->fresh)
            watch_push(w, AGENT_EVENT_CREATE, sub, path, NULL);
        if (!sub)
            continue;
        fd = openat(dirfd(f->d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            if (!gone(errno))
                watch_push(w, AGENT_EVENT_OVERFLOW, false, path, NULL);
            continue;
        }
        if (enter(w, &st[depth], fd, path, known, depth))
            depth++;
    }
}
