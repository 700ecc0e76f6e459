#include "guest/agent/beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The folder `rel` beneath `dir` with no symlink and no "..": an O_PATH
 * fd, or -1 with errno. */
static int beneath(int dir, const char *rel)
{
    /* glibc 2.36 has no openat2 wrapper; the guest kernel (6.1) has the call */
    struct open_how how = {
        .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    return (int)syscall(SYS_openat2, dir, rel, &how, sizeof(how));
}

int agent_at_open(struct agent_at *at, const char *path, uint32_t root_len)
{
    at->dirfd = AT_FDCWD;
    at->name = path;
    at->beneath = root_len != 0;
    if (!root_len)
        return 0;
    snprintf(at->buf, sizeof(at->buf), "%s", path);
    char *rel = at->buf + root_len;
    char *slash = strrchr(rel, '/');
    const char *last = slash ? slash + 1 : rel;
    if (!*last || !strcmp(last, ".") || !strcmp(last, ".."))
        return -EINVAL;
    at->buf[root_len - 1] = '\0'; /* the root, without its '/' ("" is "/") */
    int root = open(at->buf[0] ? at->buf : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return -errno;
    if (!slash) {
        at->dirfd = root;
        at->name = last;
        return 0;
    }
    *slash = '\0';
    int dir = beneath(root, rel);
    int e = errno;
    close(root);
    if (dir < 0)
        return -e;
    at->dirfd = dir;
    at->name = last;
    return 0;
}

void agent_at_close(struct agent_at *at)
{
    if (at->dirfd >= 0)
        close(at->dirfd);
    at->dirfd = AT_FDCWD;
}

int agent_at_clear(const struct agent_at *at)
{
    if (!at->beneath)
        return 0;
    /* a folder stays (EISDIR): the create that follows then says EEXIST */
    if (unlinkat(at->dirfd, at->name, 0) && errno != ENOENT && errno != EISDIR)
        return -errno;
    return 0;
}

int agent_mkdirs_beneath(const char *path)
{
    char buf[AGENT_MAX_PATH];
    if (path[0] != '/' || snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
        return -EINVAL;
    int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return -errno;
    char *save = NULL;
    for (char *c = strtok_r(buf + 1, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        /* ".." beneath would be refused (EXDEV) too; said here plainly */
        if (!strcmp(c, ".") || !strcmp(c, "..")) {
            close(dir);
            return -EINVAL;
        }
        /* an existing name (a folder, or a link: refused below) is fine */
        if (mkdirat(dir, c, 0755) < 0 && errno != EEXIST) {
            int e = errno;
            close(dir);
            return -e;
        }
        int next = beneath(dir, c);
        int e = errno;
        close(dir);
        if (next < 0)
            return -e;
        dir = next;
    }
    return dir;
}
