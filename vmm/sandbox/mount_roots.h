/* `airlock serve --mount-root DIR` (repeatable; docs/mounts.md): the
 * folders under which an API client's "mounts" sources must lie.  With
 * none, a client on the Unix socket may name any folder the daemon can
 * read (whoever reaches that socket is the daemon's user already) and a
 * client over TCP none.  A source is resolved beneath its root's open fd
 * (openat2 RESOLVE_BENEATH: neither ".." nor a symlink may lead out of
 * it), and what the VM is given is the folder's own path as the kernel
 * names the fd that resolution opened, so no link in the client's text is
 * followed later.  (A host user who may write under a root could still
 * swap a folder on that path for a link before the VM's copy reads it:
 * the roots are folders such users do not share.) */
#ifndef AIRLOCK_SANDBOX_MOUNT_ROOTS_H
#define AIRLOCK_SANDBOX_MOUNT_ROOTS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define MOUNT_ROOTS_MAX 16

struct mount_roots {
    unsigned n;
    int fd[MOUNT_ROOTS_MAX];             /* O_PATH, O_DIRECTORY */
    char path[MOUNT_ROOTS_MAX][PATH_MAX]; /* as given, without a '/' at its end */
    char real[MOUNT_ROOTS_MAX][PATH_MAX]; /* its realpath */
};

/* At start: DIR opened and kept.  0, or -1 with err naming it. */
int mount_roots_add(struct mount_roots *r, const char *dir, char *err, size_t cap);

/* A client's source (absolute, no ':', checked before) as the VM is to
 * get it, into out.  0; 400 (no such folder, not a folder, a ".." part),
 * or 403 (outside every root, a link leading out, or TCP with no roots)
 * with err saying why. */
int mount_roots_resolve(const struct mount_roots *r, bool tcp, const char *source, char *out,
                        size_t cap, char *err, size_t errcap);

#endif
