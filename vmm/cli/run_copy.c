/* Parsing --copy-in / --copy-out, and naming a copy-out's file once it is
 * complete; see run_copy.h. */
#include "vmm/cli/run_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <iconv.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/cli/run_copy_tree.h"
#include "vmm/cli/run_ctx.h"
#include "vmm/util/rmtree.h"
#include "vmm/util/tar_pack.h"

/* Hidden names made while parsing, removed at exit if the run never got
 * as far as the parent's finish step (an option or setup error after the
 * --copy-out): only in this process, never in a forked VM process, whose
 * exit must not take a file the parent is about to rename. */
static struct run_copy *made[64];
static unsigned nmade;
static bool forked;

static void on_fork_child(void)
{
    forked = true;
}

static void remove_made(void)
{
    for (unsigned i = 0; i < nmade && !forked; i++)
        if (made[i]->fd >= 0 && made[i]->named)
            unlink(made[i]->tmp);
}

static void note_made(struct run_copy *c)
{
    if (nmade == 0) {
        pthread_atfork(NULL, NULL, on_fork_child);
        atexit(remove_made);
    }
    if (nmade < sizeof(made) / sizeof(made[0]))
        made[nmade++] = c;
}

/* HOST's directory: "." for a bare name.  malloc'd, NULL on ENOMEM. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* A name in HOST's directory for the copy before it is complete:
 * ".BASE.airlock-XXXXXX" (hidden, and never HOST itself). */
static char *hidden_name(const char *host)
{
    const char *slash = strrchr(host, '/');
    const char *base = slash ? slash + 1 : host;
    size_t dl = slash ? (size_t)(slash - host) + 1 : 0;
    char *t;
    if (asprintf(&t, "%.*s.%s.airlock-XXXXXX", (int)dl, host, base) < 0)
        return NULL;
    return t;
}

/* HOST is an existing folder: the copy goes inside it under GUEST's own
 * name, as `docker cp` does; c->host becomes HOST/NAME. */
static int into_folder(struct run_copy *c)
{
    size_t gl = strlen(c->guest), hl = strlen(c->host);
    while (gl > 1 && c->guest[gl - 1] == '/')
        gl--;
    if (gl >= 2 && !strncmp(c->guest + gl - 2, "/.", 2)) {
        snprintf(c->why, sizeof(c->why), "GUEST/. into the existing folder %.80s would merge "
                 "into it; name a new HOST", c->host);
        return -EINVAL;
    }
    const char *base = c->guest + gl;
    while (base > c->guest && base[-1] != '/')
        base--;
    size_t bl = (size_t)(c->guest + gl - base);
    if (!bl || (bl == 1 && base[0] == '.') || (bl == 2 && !strncmp(base, "..", 2))) {
        snprintf(c->why, sizeof(c->why), "GUEST has no name of its own to take in the existing "
                 "folder %.80s; name a new HOST", c->host);
        return -EINVAL;
    }
    if (asprintf(&c->into, "%s%s%.*s", c->host, hl && c->host[hl - 1] == '/' ? "" : "/", (int)bl,
                 base) < 0) {
        c->into = NULL;
        return -ENOMEM;
    }
    c->host = c->into;
    return 0;
}

/* What can be checked without creating anything, then the unnamed file. */
static int open_copy_out(struct run_copy *c)
{
    struct stat st;
    if (stat(c->host, &st) == 0 && S_ISDIR(st.st_mode)) {
        int e = into_folder(c);
        if (e)
            return e;
    }
    size_t len = strlen(c->host);
    if (len == 0 || c->host[len - 1] == '/')
        return -EISDIR; /* "dir/" that does not exist names no file to write */
    if (stat(c->host, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(c->why, sizeof(c->why), "%.120s is a folder already (a copy-out replaces a "
                     "file but never merges into a folder)", c->host);
            return -EEXIST;
        }
        if (!S_ISREG(st.st_mode))
            return -EINVAL;
        c->onto_file = true;
    }
    char *dir = dir_of(c->host);
    c->tmp = hidden_name(c->host);
    if (!dir || !c->tmp) {
        free(dir);
        return -ENOMEM;
    }
    int e = 0;
    if (stat(dir, &st) < 0)
        e = -errno;
    else if (!S_ISDIR(st.st_mode))
        e = -ENOTDIR;
    else if (access(dir, W_OK | X_OK) < 0)
        e = -errno;
    if (!e) {
        /* read and write: a folder's tar is read back by the parent */
        c->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
        if (c->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
            /* No O_TMPFILE on this filesystem: a hidden name, mode as
             * open(O_CREAT, 0644) would give it under our umask. */
            c->fd = mkostemp(c->tmp, O_CLOEXEC);
            if (c->fd >= 0) {
                mode_t um = umask(0);
                umask(um);
                fchmod(c->fd, 0644 & ~um);
                c->named = true;
                note_made(c);
            }
        }
        if (c->fd < 0)
            e = -errno;
    }
    free(dir);
    if (e)
        return e;
    /* The VM process says "complete" here; the parent reads it after
     * the status (a pipe write and read in between orders the two). */
    void *p = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -errno;
    c->done = p;
    return 0;
}

/* A host folder into a tar in an unnamed temporary file, now: the VM
 * process cannot open the folder's files.  HOST/. packs what it holds. */
static int pack_folder(struct run_copy *c)
{
    size_t len = strlen(c->host);
    c->contents = len >= 2 && !strcmp(c->host + len - 2, "/.");
    char *real = realpath(c->host, NULL), err[600];
    if (!real)
        return -errno;
    const char *name = strrchr(real, '/') + 1;
    int e = 0;
    if (!*name && !c->contents) {
        snprintf(c->why, sizeof(c->why), "the host's root folder (HOST/. copies what a folder "
                 "holds)");
        e = -EINVAL;
    } else if (!(c->top = strdup(*name ? name : "."))) {
        e = -ENOMEM;
    }
    FILE *spool = e ? NULL : tmpfile();
    if (!e && !spool)
        e = -errno;
    if (spool) {
        c->fd = fcntl(fileno(spool), F_DUPFD_CLOEXEC, 0);
        if (c->fd < 0)
            e = -errno;
        fclose(spool);
    }
    if (!e && tar_pack(real, c->top, c->contents, c->fd, err, sizeof(err))) {
        snprintf(c->why, sizeof(c->why), "%s", err);
        e = -EINVAL;
    }
    if (!e && lseek(c->fd, 0, SEEK_SET) < 0)
        e = -errno;
    free(real);
    c->tree = !e;
    return e;
}

/* libarchive turns names to and from UTF-8 with iconv, whose first use
 * reads the C library's gconv configuration from /usr/lib.  Done here,
 * before the jail and the seccomp filters, so the VM process and the
 * waiting parent, which may open no file, find it loaded when they read
 * or write a folder's tar. */
static void load_charsets(void)
{
    static bool loaded;
    if (loaded)
        return;
    loaded = true;
    iconv_t cd = iconv_open("UTF-8", "ANSI_X3.4-1968");
    if (cd != (iconv_t)-1)
        iconv_close(cd);
}

int run_copy_parse(char *arg, bool in, struct run_copy *c)
{
    char *colon = strchr(arg, ':');
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    c->arg = strdup(arg);
    if (!colon || colon == arg || !colon[1] || !c->arg)
        return -EINVAL;
    *colon = 0;
    c->host = in ? arg : colon + 1;
    c->guest = in ? colon + 1 : arg;
    if (c->guest[0] != '/')
        return -EINVAL;
    load_charsets();
    if (!in)
        return open_copy_out(c);
    c->fd = open(c->host, O_RDONLY | O_CLOEXEC);
    if (c->fd < 0)
        return -errno;
    if (fstat(c->fd, &c->st) < 0)
        return -errno;
    if (S_ISREG(c->st.st_mode))
        return 0;
    close(c->fd);
    c->fd = -1;
    return S_ISDIR(c->st.st_mode) ? pack_folder(c) : -EINVAL;
}

void run_copy_release(struct run_copy *c)
{
    for (unsigned i = 0; i < nmade; i++)
        if (made[i] == c)
            made[i] = made[--nmade];
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free((char *)c->arg);
    free(c->tmp);
    free(c->top);
    free(c->into);
    if (c->done)
        munmap((void *)c->done, sizeof(int));
    c->arg = c->tmp = c->top = c->into = NULL;
    c->done = NULL;
}

void run_copy_completed(struct run_copy *c, enum run_copy_done what)
{
    if (c->done)
        __atomic_store_n(c->done, (int)what, __ATOMIC_RELEASE);
}

/* A hidden name in HOST's folder for `op` ("XXXXXX" in name[] replaced
 * by letters until op does not say EEXIST).  Runs in the waiting parent
 * under its seccomp filter: no allocation, no getpid, no getrandom. */
static int hidden_try(const struct run_copy *c, char *name, int (*op)(const char *name, void *arg),
                      void *arg)
{
    char *x = name + strlen(name) - 6;
    uint64_t v = (uint64_t)(uintptr_t)c * 0x9e3779b97f4a7c15ull ^ (uint64_t)c->fd ^
                 (uint64_t)(uintptr_t)name;
    for (int tries = 0; tries < 16; tries++) {
        for (int i = 0; i < 6; i++, v /= 36)
            x[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[v % 36];
        v = v * 6364136223846793005ull + 1442695040888963407ull;
        if (op(name, arg) == 0)
            return 0;
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

static int link_op(const char *name, void *arg)
{
    return linkat(AT_FDCWD, arg, AT_FDCWD, name, AT_SYMLINK_FOLLOW);
}

static int mkdir_op(const char *name, void *arg)
{
    (void)arg;
    return mkdirat(AT_FDCWD, name, 0700);
}

/* Links the unnamed file into HOST's directory under the hidden name. */
static int link_unnamed(struct run_copy *c)
{
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", c->fd);
    int e = hidden_try(c, c->tmp, link_op, proc);
    c->named = !e;
    return e;
}

/* The bounds of what the parent unpacks: a tar of at most the guest's
 * members and data with their headers (a pax header and a ustar one of
 * at most 12 KiB each member, long names and link targets included). */
static const struct run_copy_tree_limits tree_limits = {
    .tar = {RUN_COPY_TREE_MAX_ENTRIES, RUN_COPY_OUT_MAX},
    .max_archive = RUN_COPY_OUT_MAX + RUN_COPY_TREE_MAX_ENTRIES * 12288ull,
    .max_names = RUN_COPY_TREE_MAX_NAMES,
};

/* A folder's tar, unpacked into a hidden staging folder beside HOST and
 * renamed to HOST (never over anything); the staging folder goes either
 * way.  0, or -errno with err. */
static int name_tree(struct run_copy *c, char *err, size_t errlen)
{
    char stage[PATH_MAX];
    if ((size_t)snprintf(stage, sizeof(stage), "%s", c->tmp) >= sizeof(stage))
        return -ENAMETOOLONG;
    int e = hidden_try(c, stage, mkdir_op, NULL);
    if (e)
        return e;
    int sfd = open(stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sfd < 0)
        e = -errno;
    else if (run_copy_tree_unpack(c->fd, sfd, strlen(stage), &tree_limits, err, errlen))
        e = -EINVAL;
    else if (renameat2(sfd, RUN_COPY_TREE_TOP, AT_FDCWD, c->host, RENAME_NOREPLACE) < 0)
        e = -errno;
    if (e == -EEXIST)
        snprintf(err, errlen, "%s", c->onto_file ? "cannot copy a folder onto a file"
                                                 : "HOST appeared meanwhile (a folder replaces nothing)");
    if (sfd >= 0)
        close(sfd);
    rmtree(stage);
    return e;
}

int run_copy_finish(struct run_copy *c)
{
    if (c->fd < 0)
        return 0;
    int e = 0, what = c->done ? __atomic_load_n(c->done, __ATOMIC_ACQUIRE) : RUN_COPY_PENDING;
    char why[1024] = "";
    if (what == RUN_COPY_FILE) {
        if (!c->named)
            e = link_unnamed(c);
        if (!e && rename(c->tmp, c->host) < 0)
            e = -errno;
        if (!e)
            c->named = false;
    } else if (what == RUN_COPY_TREE) {
        e = name_tree(c, why, sizeof(why));
    }
    if (c->named) /* not complete, not renamed, or a folder's tar: HOST stays as it was */
        unlink(c->tmp);
    c->named = false;
    close(c->fd);
    c->fd = -1;
    if (e) {
        char line[PATH_MAX + 1280];
        int n = snprintf(line, sizeof(line), "airlock: --copy-out %s: %s\n", c->arg,
                         why[0] ? why : strerror(-e));
        if (n > 0)
            (void)!write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
    }
    return e;
}
