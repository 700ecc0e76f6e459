/* --mount-root; see mount_roots.h. */
#include "vmm/sandbox/mount_roots.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/open_resolve.h"

int mount_roots_add(struct mount_roots *r, const char *dir, char *err, size_t cap)
{
    if (r->n == MOUNT_ROOTS_MAX)
        return snprintf(err, cap, "--mount-root: at most %d", MOUNT_ROOTS_MAX), -1;
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    if (dir[0] != '/' || len >= sizeof(r->path[0]))
        return snprintf(err, cap, "--mount-root %.300s: want an absolute folder", dir), -1;
    unsigned i = r->n;
    memcpy(r->path[i], dir, len);
    r->path[i][len] = '\0';
    int fd = open(r->path[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || !realpath(r->path[i], r->real[i])) {
        snprintf(err, cap, "--mount-root %.300s: %s", dir, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    r->fd[i] = fd;
    r->n++;
    return 0;
}

/* source's part below root ("" for root itself), or NULL when it is not
 * beneath root's text. */
static const char *below(const char *root, const char *source)
{
    size_t n = strlen(root);
    if (!strcmp(root, "/"))
        return source + 1;
    if (strncmp(source, root, n) || (source[n] && source[n] != '/'))
        return NULL;
    return source[n] ? source + n + 1 : "";
}

static bool has_dotdot(const char *p)
{
    for (const char *s = p; (s = strstr(s, "..")); s += 2)
        if ((s == p || s[-1] == '/') && (!s[2] || s[2] == '/'))
            return true;
    return false;
}

int mount_roots_resolve(const struct mount_roots *r, bool tcp, const char *source, char *out,
                        size_t cap, char *err, size_t errcap)
{
    if (!r->n) {
        if (tcp)
            return snprintf(err, errcap, "no mounts over TCP: start the daemon with "
                            "--mount-root DIR to allow folders under DIR"), 403;
        snprintf(out, cap, "%s", source);
        return 0;
    }
    if (has_dotdot(source))
        return snprintf(err, errcap, "source '%.200s': no '..' part", source), 400;
    for (unsigned i = 0; i < r->n; i++) {
        const char *rel = below(r->path[i], source);
        if (!rel)
            rel = below(r->real[i], source);
        if (!rel)
            continue;
        int fd = open_resolve(r->fd[i], rel, O_PATH | O_DIRECTORY, RESOLVE_BENEATH);
        if (fd == -EXDEV || fd == -ELOOP)
            return snprintf(err, errcap, "source '%.200s': a link on its way leads out of "
                            "--mount-root %.200s", source, r->path[i]), 403;
        if (fd < 0)
            return snprintf(err, errcap, "source '%.200s': %s", source,
                            fd == -ENOTDIR ? "not a folder" : strerror(-fd)), 400;
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(proc, out, cap - 1);
        close(fd);
        if (n <= 0 || (size_t)n >= cap - 1)
            return snprintf(err, errcap, "source '%.200s': cannot name it", source), 400;
        out[n] = '\0';
        if (strchr(out, ':'))
            return snprintf(err, errcap, "source '%.200s' is %.200s, which holds a ':'", source,
                            out), 400;
        return 0;
    }
    size_t k = (size_t)snprintf(err, errcap, "source '%.200s' is not under a --mount-root (", source);
    for (unsigned i = 0; i < r->n && k < errcap; i++)
        k += (size_t)snprintf(err + k, errcap - k, "%s%.200s", i ? ", " : "", r->path[i]);
    if (k < errcap)
        snprintf(err + k, errcap - k, ")");
    return 403;
}
