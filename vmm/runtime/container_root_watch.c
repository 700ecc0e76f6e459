/* A container's root folder's later writes copied into its VM; see
 * container_root_watch.h.  One thread reads the fanotify events and puts
 * each file through one agent connection, kept open between files. */
#include "vmm/runtime/container_root_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/runtime/container_vm.h"
#include "vmm/sandbox/vm_proc.h"

#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif

struct container_root_watch {
    char sock[PATH_MAX];
    char root[PATH_MAX];
    size_t root_len;
    int fan, wake; /* the fanotify group; an eventfd: stop */
    int conn;      /* the agent, or -1 */
    pthread_t thread;
};

/* The guest path of a host file written through the overlay, into out:
 * the longest tail of the path the kernel reports that names this very
 * file (device and inode, st) beneath the root folder.  The path is as
 * the writer's mount namespace sees it: the root folder's own path for a
 * write through its mount here; docker-untar's pivots into the overlay
 * in a namespace of its own, where it starts at the root folder, or above
 * it when that namespace's root is not ours (a chroot).  0, or -1 when
 * it is gone (" (deleted)") or not beneath the root folder. */
static int guest_path(const struct container_root_watch *w, int fd, const struct stat *st,
                      char *out, size_t cap)
{
    char link[32], seen[PATH_MAX], full[PATH_MAX * 2];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, seen, sizeof(seen) - 1);
    if (n <= 0 || (size_t)n == sizeof(seen) - 1 || seen[0] != '/')
        return -1;
    seen[n] = '\0';
    if ((size_t)n > 10 && !strcmp(seen + n - 10, " (deleted)"))
        return -1;
    for (const char *p = seen; p; p = strchr(p + 1, '/')) {
        struct stat at;
        snprintf(full, sizeof(full), "%s%s", w->root, p);
        if (!lstat(full, &at) && at.st_dev == st->st_dev && at.st_ino == st->st_ino &&
            strlen(p) < cap) {
            memcpy(out, p, strlen(p) + 1);
            return 0;
        }
    }
    return -1;
}

/* One written file into the guest: 0, or -errno (the connection is
 * dropped then, and the next file dials again). */
static int put_one(struct container_root_watch *w, int fd)
{
    char path[PATH_MAX];
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || guest_path(w, fd, &st, path, sizeof(path)))
        return 0;
    if (w->conn < 0 && (w->conn = vm_proc_dial(w->sock)) < 0)
        return w->conn;
    int e = container_vm_put(w->conn, path, fd, &st);
    if (!e && (st.st_uid || st.st_gid))
        e = agent_chown(w->conn, path, st.st_uid, st.st_gid);
    if (e) {
        fprintf(stderr, "airlock-runtime: %s written on the host did not reach the container: %s\n",
                path, strerror(-e));
        close(w->conn);
        w->conn = -1;
    }
    return e;
}

static void *watch_main(void *arg)
{
    struct container_root_watch *w = arg;
    /* aligned as the kernel's records are */
    struct fanotify_event_metadata ev[4096 / sizeof(struct fanotify_event_metadata)];
    for (;;) {
        struct pollfd p[2] = {{.fd = w->fan, .events = POLLIN}, {.fd = w->wake, .events = POLLIN}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[1].revents)
            break;
        ssize_t n = read(w->fan, ev, sizeof(ev));
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0)
            break;
        struct fanotify_event_metadata *m = ev;
        for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
            if (m->vers != FANOTIFY_METADATA_VERSION)
                return NULL;
            if (m->fd >= 0) {
                put_one(w, m->fd);
                close(m->fd);
            }
        }
    }
    return NULL;
}

int container_root_watch_start(const char *sock, const char *root,
                               struct container_root_watch **out)
{
    struct statfs sf;
    *out = NULL;
    if (statfs(root, &sf) < 0 || sf.f_type != OVERLAYFS_SUPER_MAGIC)
        return 0;
    struct container_root_watch *w = calloc(1, sizeof(*w));
    if (!w)
        return -ENOMEM;
    snprintf(w->sock, sizeof(w->sock), "%s", sock);
    w->root_len = (size_t)snprintf(w->root, sizeof(w->root), "%s", root);
    while (w->root_len > 1 && w->root[w->root_len - 1] == '/')
        w->root[--w->root_len] = '\0';
    w->conn = -1;
    w->wake = eventfd(0, EFD_CLOEXEC);
    w->fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK,
                           O_RDONLY | O_LARGEFILE | O_CLOEXEC);
    int rc = w->wake < 0 || w->fan < 0 ||
                     fanotify_mark(w->fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_CLOSE_WRITE,
                                   AT_FDCWD, w->root) < 0
                 ? -errno
                 : 0;
    if (!rc) {
        /* The stand-in passes signals on from its main thread only. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        rc = -pthread_create(&w->thread, NULL, watch_main, w);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (rc) {
        if (w->fan >= 0)
            close(w->fan);
        if (w->wake >= 0)
            close(w->wake);
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void container_root_watch_stop(struct container_root_watch *w)
{
    if (!w)
        return;
    uint64_t one = 1;
    ssize_t n = write(w->wake, &one, sizeof(one));
    (void)n;
    pthread_join(w->thread, NULL);
    if (w->conn >= 0)
        close(w->conn);
    close(w->fan);
    close(w->wake);
    free(w);
}
