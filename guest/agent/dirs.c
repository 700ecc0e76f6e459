/* STAT, LIST, MKDIR, SYMLINK (proto.h): what the host needs to copy a
 * folder in or out one entry at a time; the tar itself is made and read
 * on the host, so the agent stays small.  Each answers ENTRY or DONE, or
 * one ERROR naming the errno. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/agent.h"
#include "guest/agent/beneath.h"

/* Sends one ENTRY for name (in dirfd) as lstat sees it; a name that went
 * away meanwhile is skipped (0). */
static int send_entry(struct aconn *c, int dirfd, const char *name, const char *as)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
        return errno == ENOENT ? 0 : -errno;
    static char target[AGENT_MAX_PATH];
    target[0] = '\0';
    struct agent_entry e = {
        .kind = S_ISREG(st.st_mode) ? AGENT_ENTRY_FILE : S_ISDIR(st.st_mode) ? AGENT_ENTRY_DIR
              : S_ISLNK(st.st_mode) ? AGENT_ENTRY_SYMLINK : AGENT_ENTRY_OTHER,
        .mode = st.st_mode & 07777,
        .size = (uint64_t)st.st_size,
        .mtime = st.st_mtim.tv_sec,
        .uid = st.st_uid,
        .gid = st.st_gid,
        .name = as,
        .target = target,
    };
    if (e.kind == AGENT_ENTRY_SYMLINK) {
        ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);
        if (n <= 0)
            return n == 0 || errno == ENOENT ? 0 : -errno;
        target[n] = '\0';
    }
    static uint8_t f[AGENT_HDR_SIZE + AGENT_ENTRY_FIXED + AGENT_MAX_NAME + 1 + AGENT_MAX_PATH];
    ssize_t n = agent_encode_entry(f, sizeof(f), &e);
    if (n < 0) /* a target of AGENT_MAX_PATH - 1 bytes cut short: unlisted */
        return 0;
    return agent_send_all(c->rd.fd, f, (size_t)n);
}

int agent_do_stat(struct aconn *c, const struct agent_msg *m)
{
    struct stat st;
    /* lstat first: a missing path is an ERROR, not a skipped entry */
    if (lstat(m->u.file_get.path, &st))
        return aconn_send_error(c, errno, AGENT_OP_FILE);
    int rc = send_entry(c, AT_FDCWD, m->u.file_get.path, "");
    return rc < 0 && rc != -EPIPE && rc != -ECONNRESET ? aconn_send_error(c, -rc, AGENT_OP_FILE)
                                                       : rc;
}

int agent_do_list(struct aconn *c, const struct agent_msg *m)
{
    DIR *d = opendir(m->u.file_get.path);
    if (!d)
        return aconn_send_error(c, errno, AGENT_OP_FILE);
    int rc = 0;
    struct dirent *de;
    while (!rc && (errno = 0, de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        rc = send_entry(c, dirfd(d), de->d_name, de->d_name);
    }
    int e = rc ? 0 : errno; /* readdir's own failure */
    closedir(d);
    if (rc == -EPIPE || rc == -ECONNRESET)
        return rc;
    if (rc || e)
        return aconn_send_error(c, rc ? -rc : e, AGENT_OP_FILE);
    return aconn_send(c, AGENT_DONE, NULL, 0);
}

/* mkdir, where an existing folder is fine (and keeps its mode). */
static int make_dir(const struct agent_at *at, mode_t mode)
{
    if (mkdirat(at->dirfd, at->name, mode) == 0) {
        /* the umask is not the host's intent */
        int fd = openat(at->dirfd, at->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int rc = fd < 0 || fchmod(fd, mode) ? errno : 0;
        if (fd >= 0)
            close(fd);
        return rc;
    }
    if (errno != EEXIST)
        return errno;
    struct stat st;
    /* beneath a root a link to a folder is not one (it would be followed) */
    if (fstatat(at->dirfd, at->name, &st, at->beneath ? AT_SYMLINK_NOFOLLOW : 0))
        return errno;
    return S_ISDIR(st.st_mode) ? 0 : EEXIST;
}

int agent_do_mkdir(struct aconn *c, const struct agent_msg *m)
{
    static struct agent_at at;
    int e = -agent_at_open(&at, m->u.mkdir.path, m->u.mkdir.root_len);
    if (!e)
        e = make_dir(&at, m->u.mkdir.mode & 07777);
    agent_at_close(&at);
    return e ? aconn_send_error(c, e, AGENT_OP_FILE) : aconn_send(c, AGENT_DONE, NULL, 0);
}

int agent_do_symlink(struct aconn *c, const struct agent_msg *m)
{
    static struct agent_at at;
    int e = -agent_at_open(&at, m->u.symlink.path, m->u.symlink.root_len);
    if (!e)
        e = -agent_at_clear(&at);
    if (!e && symlinkat(m->u.symlink.target, at.dirfd, at.name))
        e = errno;
    agent_at_close(&at);
    return e ? aconn_send_error(c, e, AGENT_OP_FILE) : aconn_send(c, AGENT_DONE, NULL, 0);
}
