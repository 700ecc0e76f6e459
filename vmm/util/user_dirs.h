/* Where airlock keeps its files for whoever runs it: the system's folders
 * as root (/var/cache/airlock, /var/lib/airlock), else the XDG base
 * directories ($XDG_CACHE_HOME, $XDG_STATE_HOME when absolute, as the
 * specification asks, else their defaults under $HOME). */
#ifndef AIRLOCK_UTIL_USER_DIRS_H
#define AIRLOCK_UTIL_USER_DIRS_H

#include <stddef.h>
#include <sys/types.h>

enum user_dir {
    USER_DIR_CACHE, /* what can be made again (the pool's snapshots) */
    USER_DIR_STATE, /* what must outlive the process (paused sandboxes, volumes) */
};

void user_dir(enum user_dir kind, char *out, size_t cap);

/* mkdir -p: every missing folder of path made with mode.  0 or -errno. */
int make_dirs(const char *path, mode_t mode);

#endif
