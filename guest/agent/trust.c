/* CREDENTIALS (proto.h): the host's credential broker keeps the secrets;
 * every command in the guest sees placeholders in its env instead, and
 * must trust the CA of the host proxy that swaps them in on the way out.
 * The state lives in files under AGENT_TRUST_DIR, not in the agent's
 * memory: each connection is its own process, and the EXEC that reads it
 * comes on another.  Each file is written whole beside its place and
 * renamed over it, so an EXEC sees the old file or the new, never half of
 * one.  All of it goes with the VM: the root is a copy-on-write disk or an
 * initramfs, and the folder may be a tmpfs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/agent.h"

/* The trust store Debian, Ubuntu and Alpine programs read, Go's
 * crypto/x509 among them (it ignores SSL_CERT_FILE's siblings): the PEM
 * is appended to it. */
#define SYS_STORE "/etc/ssl/certs/ca-certificates.crt"
/* Its content before the first CREDENTIALS, so a second one or a clear
 * starts from the image's own. */
#define PRISTINE AGENT_TRUST_DIR "/ca-certificates.orig"
/* Where the image keeps its CA bundle, first found first (Debian, Fedora,
 * SUSE, Alpine and the BSD-style path). */
static const char *const image_bundles[] = {SYS_STORE, "/etc/pki/tls/certs/ca-bundle.crt",
                                            "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem"};
/* The env file never holds more: the entries and AGENT_TRUST_VARS. */
#define ENV_FILE_MAX (AGENT_CRED_MAX_ENV_BYTES + 512)

/* ---- writing a file whole ---- */

/* One piece of a file: len bytes at p, or (fd >= 0) the rest of a file. */
struct part {
    const char *p;
    size_t len;
    int fd;
};

struct out {
    int fd;
    size_t total;
    int last; /* the last byte written */
};

static int put(struct out *o, const char *p, size_t len)
{
    if (!len)
        return 0;
    int rc = agent_write_all(o->fd, p, len);
    o->total += len;
    o->last = (unsigned char)p[len - 1];
    return rc;
}

static int put_part(struct out *o, const struct part *p)
{
    if (p->fd < 0)
        return put(o, p->p, p->len);
    static char b[64 * 1024];
    for (;;) {
        ssize_t n = read(p->fd, b, sizeof(b));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n ? -errno : 0;
        int rc = put(o, b, (size_t)n);
        if (rc)
            return rc;
    }
}

/* Makes path anew from parts[0, n): written to a temp file beside it,
 * given mode (and uid/gid unless -1), renamed over it.  `text`: the parts
 * are PEM files, so each starts on a line of its own and the file ends
 * with a newline.  0 or -errno (path is then untouched). */
static int write_file(const char *path, const struct part *parts, unsigned n, int text,
                      mode_t mode, uid_t uid, gid_t gid)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.airlock-new", path) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    unlink(tmp); /* left by an agent that died half-way */
    struct out o = {.fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)};
    if (o.fd < 0)
        return -errno;
    int rc = 0;
    for (unsigned i = 0; i < n && !rc; i++) {
        if (text && o.total && o.last != '\n')
            rc = put(&o, "\n", 1);
        if (!rc)
            rc = put_part(&o, &parts[i]);
    }
    if (!rc && text && o.total && o.last != '\n')
        rc = put(&o, "\n", 1);
    if (!rc && ((uid != (uid_t)-1 && fchown(o.fd, uid, gid)) || fchmod(o.fd, mode)))
        rc = -errno;
    if (close(o.fd) && !rc)
        rc = -errno;
    if (!rc && rename(tmp, path))
        rc = -errno;
    if (rc)
        unlink(tmp);
    return rc;
}

static int remove_file(const char *path)
{
    return unlink(path) && errno != ENOENT ? -errno : 0;
}

/* ---- the folder ---- */

static int empty_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(d)))
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

static int tmpfs_on(const char *dir)
{
    return mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=16m")
               ? -errno : 0;
}

/* AGENT_TRUST_DIR as a folder of the agent's (root's, 0755) that it can
 * write, locked for this request: its fd, or -errno.  On a writable root
 * (a copy-on-write disk, an initramfs) it is made there; where it cannot
 * be written (a read-only disk) a small tmpfs is mounted on it, or on /run
 * when not even the folder can be made and /run holds nothing (as a
 * system's /run is a tmpfs anyway). */
static int trust_dir(void)
{
    if (mkdir("/run", 0755) && errno != EEXIST)
        return -errno;
    if (mkdir(AGENT_TRUST_DIR, 0755) && errno != EEXIST) {
        int e = errno;
        if (e != EROFS || !empty_dir("/run") || tmpfs_on("/run"))
            return -e;
        if (mkdir(AGENT_TRUST_DIR, 0755))
            return -errno;
    }
    struct stat st;
    if (lstat(AGENT_TRUST_DIR, &st))
        return -errno;
    if (!S_ISDIR(st.st_mode))
        return -ENOTDIR;
    if (access(AGENT_TRUST_DIR, W_OK)) {
        int rc = errno == EROFS ? tmpfs_on(AGENT_TRUST_DIR) : -errno;
        if (rc)
            return rc;
        if (lstat(AGENT_TRUST_DIR, &st))
            return -errno;
    }
    /* Made before us by a command as another user: the agent's now, and
     * writable by no one else. */
    if (st.st_uid != geteuid() && lchown(AGENT_TRUST_DIR, geteuid(), getegid()))
        return -errno;
    if ((st.st_mode & 07777) != 0755 && chmod(AGENT_TRUST_DIR, 0755))
        return -errno;
    int fd = open(AGENT_TRUST_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (flock(fd, LOCK_EX)) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/* ---- the image's CAs ---- */

/* The image's own CA bundle as it was before any CREDENTIALS: an fd, or
 * -1 when it has none. */
static int open_image_bundle(void)
{
    int fd = open(PRISTINE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    for (size_t i = 0; fd < 0 && i < sizeof(image_bundles) / sizeof(image_bundles[0]); i++) {
        fd = open(image_bundles[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        struct stat st;
        if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
            close(fd);
            fd = -1;
        }
    }
    return fd;
}

/* The image's trust store, when it has one: its file (a symlink's target:
 * the link stays) in real, and 1; else 0. */
static int sys_store(char *real, struct stat *st)
{
    return realpath(SYS_STORE, real) && !stat(real, st) && S_ISREG(st->st_mode);
}

/* The store becomes its pristine content, then the PEM.  The pristine
 * copy is made first: an install cut short is redone from it. */
static int sys_install(const char *pem, size_t pem_len)
{
    char real[PATH_MAX];
    struct stat st;
    if (!sys_store(real, &st))
        return 0;
    int orig = open(PRISTINE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (orig < 0) {
        if (errno != ENOENT)
            return -errno;
        struct part p = {.fd = open(real, O_RDONLY | O_CLOEXEC)};
        if (p.fd < 0)
            return -errno;
        int rc = write_file(PRISTINE, &p, 1, 0, st.st_mode & 07777, st.st_uid, st.st_gid);
        close(p.fd);
        if (rc)
            return rc;
        if ((orig = open(PRISTINE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
            return -errno;
    }
    struct part p[2] = {{.fd = orig}, {.p = pem, .len = pem_len, .fd = -1}};
    int rc = write_file(real, p, 2, 1, st.st_mode & 07777, st.st_uid, st.st_gid);
    close(orig);
    return rc;
}

/* The store gets its pristine content back (with its mode and owner). */
static int sys_restore(void)
{
    int orig = open(PRISTINE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (orig < 0)
        return errno == ENOENT ? 0 : -errno;
    char real[PATH_MAX];
    struct stat st, cur;
    struct part p = {.fd = orig};
    int rc = fstat(orig, &st) ? -errno : 0;
    /* A store removed since is not made again. */
    if (!rc && sys_store(real, &cur))
        rc = write_file(real, &p, 1, 0, st.st_mode & 07777, st.st_uid, st.st_gid);
    close(orig);
    return rc ? rc : remove_file(PRISTINE);
}

/* ---- the env ---- */

/* The entries, NUL-terminated one after another, then (with a CA) the
 * variables that point TLS clients at it, but for one the entries name. */
static int write_env(const struct agent_cred *c, int with_ca)
{
    static const char *const vars[] = AGENT_TRUST_VARS;
    struct part p[AGENT_CRED_MAX_ENVS + sizeof(vars) / sizeof(vars[0])];
    unsigned n = 0;
    for (uint32_t i = 0; i < c->envc; i++)
        p[n++] = (struct part){.p = c->env[i], .len = strlen(c->env[i]) + 1, .fd = -1};
    for (size_t v = 0; with_ca && v < sizeof(vars) / sizeof(vars[0]); v++) {
        uint32_t i = 0;
        while (i < c->envc && !agent_cred_same_name(c->env[i], vars[v]))
            i++;
        if (i == c->envc)
            p[n++] = (struct part){.p = vars[v], .len = strlen(vars[v]) + 1, .fd = -1};
    }
    return write_file(AGENT_TRUST_ENV, p, n, 0, 0600, (uid_t)-1, (gid_t)-1);
}

/* With a PEM: the CA's files and the store first, then the env that
 * points commands at them. */
static int install(const struct agent_cred *c)
{
    struct part pem = {.p = c->pem, .len = c->pem_len, .fd = -1};
    int rc = write_file(AGENT_TRUST_CA, &pem, 1, 0, 0644, (uid_t)-1, (gid_t)-1);
    if (!rc) {
        /* Read before sys_install changes the store (its first time). */
        struct part b[2] = {{.p = "", .fd = open_image_bundle()}, pem};
        rc = write_file(AGENT_TRUST_BUNDLE, b, 2, 1, 0644, (uid_t)-1, (gid_t)-1);
        if (b[0].fd >= 0)
            close(b[0].fd);
    }
    if (!rc)
        rc = sys_install(c->pem, c->pem_len);
    return rc ? rc : write_env(c, 1);
}

/* Without: the env first, so no command is pointed at a CA that is going. */
static int uninstall(const struct agent_cred *c)
{
    int rc = c->envc ? write_env(c, 0) : remove_file(AGENT_TRUST_ENV);
    if (!rc)
        rc = sys_restore();
    if (!rc)
        rc = remove_file(AGENT_TRUST_BUNDLE);
    return rc ? rc : remove_file(AGENT_TRUST_CA);
}

static int trust_apply(const struct agent_cred *c)
{
    int dirfd;
    if (!c->envc && !c->pem_len) {
        /* A clear: where nothing was installed there is nothing to do. */
        dirfd = open(AGENT_TRUST_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dirfd < 0)
            return errno == ENOENT ? 0 : -errno;
        if (flock(dirfd, LOCK_EX)) {
            int e = errno;
            close(dirfd);
            return -e;
        }
    } else if ((dirfd = trust_dir()) < 0) {
        return dirfd;
    }
    int rc = c->pem_len ? install(c) : uninstall(c);
    close(dirfd); /* and the lock with it */
    return rc;
}

int agent_do_credentials(struct aconn *c, const struct agent_msg *m)
{
    static const char *env[AGENT_CRED_MAX_ENVS + 1];
    struct agent_cred cr;
    if (agent_cred_parse(m->payload, m->len, &cr, env))
        return aconn_send_error(c, EPROTO, AGENT_OP_PROTO) ? -EPIPE : -EPROTO;
    int rc = trust_apply(&cr);
    if (rc < 0 && (getpid() == 1 || getppid() == 1))
        fprintf(stderr, "airlock-agent: credentials: %s\n", strerror(-rc));
    return rc < 0 ? aconn_send_error(c, -rc, AGENT_OP_FILE) : aconn_send(c, AGENT_DONE, NULL, 0);
}

/* ---- every EXEC ---- */

/* Whether one of envp[0, n) has e's NAME ("NAME=" its first bytes). */
static int has_name(const char *const *envp, uint32_t n, const char *e)
{
    size_t l = (size_t)(strchr(e, '=') - e) + 1;
    for (uint32_t i = 0; i < n; i++)
        if (!strncmp(envp[i], e, l))
            return 1;
    return 0;
}

int agent_trust_env(const char **envp, uint32_t *envc)
{
    static char buf[ENV_FILE_MAX];
    int fd = open(AGENT_TRUST_ENV, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
    /* Written by the agent, readable by no one else: else not the agent's. */
    struct stat st;
    int rc = fstat(fd, &st) ? -errno : 0;
    if (!rc && (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)))
        rc = -EPERM;
    size_t len = 0;
    while (!rc) {
        ssize_t n = read(fd, buf + len, sizeof(buf) - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n ? -errno : 0;
            break;
        }
        if ((len += (size_t)n) == sizeof(buf))
            rc = -E2BIG;
    }
    close(fd);
    uint32_t own = *envc, n = own;
    size_t bytes = 0;
    for (uint32_t i = 0; i < own; i++)
        bytes += strlen(envp[i]) + 1;
    for (size_t off = 0; !rc && off < len;) {
        const char *e = buf + off;
        const char *nul = memchr(e, 0, len - off);
        if (!nul || !agent_cred_entry_ok(e, (size_t)(nul - e)))
            return -EINVAL;
        size_t l = (size_t)(nul - e) + 1;
        off += l;
        /* The request's own variable wins: a command sees each name once. */
        if (has_name(envp, own, e))
            continue;
        if (n >= AGENT_MAX_ENVS || bytes + l > AGENT_MAX_ENV_BYTES)
            return -E2BIG;
        envp[n++] = e;
        bytes += l;
    }
    if (rc)
        return rc;
    envp[n] = NULL;
    *envc = n;
    return 0;
}
