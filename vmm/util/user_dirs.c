#include "vmm/util/user_dirs.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

void user_dir(enum user_dir kind, char *out, size_t cap)
{
    bool state = kind == USER_DIR_STATE;
    const char *xdg = getenv(state ? "XDG_STATE_HOME" : "XDG_CACHE_HOME"), *home = getenv("HOME");
    if (geteuid() == 0)
        snprintf(out, cap, "%s", state ? "/var/lib/airlock" : "/var/cache/airlock");
    else if (xdg && *xdg == '/')
        snprintf(out, cap, "%s/airlock", xdg);
    else
        snprintf(out, cap, "%s/%s/airlock", home && *home ? home : "/tmp",
                 state ? ".local/state" : ".cache");
}

int make_dirs(const char *path, mode_t mode)
{
    char p[PATH_MAX + 32];
    if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
        return -ENAMETOOLONG;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, mode) < 0 && errno != EEXIST)
            return -errno;
        *s = '/';
    }
    return mkdir(p, mode) < 0 && errno != EEXIST ? -errno : 0;
}
