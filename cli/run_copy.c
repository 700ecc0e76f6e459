/* Parsing --copy-in / --copy-out, and naming a copy-out's file once it is
 * complete; see run_copy.h. */
#include "cli/run_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* What can be checked without creating anything, then the unnamed file. */
static int open_copy_out(struct run_copy *c)
{
    struct stat st;
    size_t len = strlen(c->host);
    if (len == 0 || c->host[len - 1] == '/')
        return -EISDIR; /* "dir/" names no file to write */
    if (stat(c->host, &st) == 0 && !S_ISREG(st.st_mode))
        return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
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
        c->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
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

int run_copy_parse(char *arg, bool in, struct run_copy *c)
{
    char *colon = strchr(arg, ':');
    c->fd = -1;
    c->tmp = NULL;
    c->named = false;
    c->done = NULL;
    c->arg = strdup(arg);
    if (!colon || colon == arg || !colon[1] || !c->arg)
        return -EINVAL;
    *colon = 0;
    c->host = in ? arg : colon + 1;
    c->guest = in ? colon + 1 : arg;
    if (c->guest[0] != '/')
        return -EINVAL;
    if (!in)
        return open_copy_out(c);
    c->fd = open(c->host, O_RDONLY | O_CLOEXEC);
    if (c->fd < 0)
        return -errno;
    if (fstat(c->fd, &c->st) < 0)
        return -errno;
    return S_ISREG(c->st.st_mode) ? 0 : -EINVAL;
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
    if (c->done)
        munmap((void *)c->done, sizeof(int));
    c->arg = c->tmp = NULL;
    c->done = NULL;
}

void run_copy_completed(struct run_copy *c)
{
    if (c->done)
        __atomic_store_n(c->done, 1, __ATOMIC_RELEASE);
}

/* Links the unnamed file into HOST's directory under the hidden name.
 * Runs in the waiting parent under its seccomp filter: no allocation, no
 * getpid; a name taken (EEXIST) is tried again with other letters. */
static int link_unnamed(struct run_copy *c)
{
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", c->fd);
    char *x = c->tmp + strlen(c->tmp) - 6;
    uint64_t v = (uint64_t)(uintptr_t)c * 0x9e3779b97f4a7c15ull ^ (uint64_t)c->fd;
    for (int tries = 0; tries < 16; tries++) {
        for (int i = 0; i < 6; i++, v /= 36)
            x[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[v % 36];
        v = v * 6364136223846793005ull + 1442695040888963407ull;
        if (linkat(AT_FDCWD, proc, AT_FDCWD, c->tmp, AT_SYMLINK_FOLLOW) == 0) {
            c->named = true;
            return 0;
        }
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

int run_copy_finish(struct run_copy *c)
{
    if (c->fd < 0)
        return 0;
    int e = 0;
    if (c->done && __atomic_load_n(c->done, __ATOMIC_ACQUIRE)) {
        if (!c->named)
            e = link_unnamed(c);
        if (!e && rename(c->tmp, c->host) < 0)
            e = -errno;
        if (!e)
            c->named = false;
    }
    if (c->named) /* not complete, or not renamed: HOST stays as it was */
        unlink(c->tmp);
    c->named = false;
    close(c->fd);
    c->fd = -1;
    if (e) {
        char line[PATH_MAX + 128];
        int n = snprintf(line, sizeof(line), "airlock: --copy-out %s: %s\n", c->arg, strerror(-e));
        if (n > 0)
            (void)!write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
    }
    return e;
}
