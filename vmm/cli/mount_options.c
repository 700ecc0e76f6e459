/* --mount's value; see mount_options.h. */
#include "vmm/cli/mount_options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "vmm/agent_client/agent_client.h"

static int bad(char *err, size_t errlen, const char *arg, const char *fmt, const char *what)
{
    char why[400];
    snprintf(why, sizeof(why), fmt, what);
    snprintf(err, errlen, "--mount '%.200s': %s", arg, why);
    return -EINVAL;
}

int mount_list_add(struct mount_list *l, const char *arg, bool check_host, char *err,
                   size_t errlen)
{
    if (l->n == MOUNT_MAX)
        return bad(err, errlen, arg, "at most %s mounts", "8");
    struct mount_spec *m = &l->m[l->n];
    memset(m, 0, sizeof(*m));
    m->arg = arg;
    /* HOSTDIR:GUESTDIR[:MODE]: neither folder may hold a ':' */
    const char *c1 = strchr(arg, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    size_t hl = c1 ? (size_t)(c1 - arg) : 0;
    size_t gl = c1 ? (c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1)) : 0;
    if (!c1 || !hl || !gl || (c2 && strchr(c2 + 1, ':')))
        return bad(err, errlen, arg, "want %s", "HOSTDIR:GUESTDIR[:ro|:rw] (no ':' in either)");
    if (hl >= sizeof(m->host))
        return bad(err, errlen, arg, "HOSTDIR is %s", "too long");
    memcpy(m->host, arg, hl);
    if (c2 && strcmp(c2 + 1, "ro") && strcmp(c2 + 1, "rw"))
        return bad(err, errlen, arg, "the mode '%.20s': want ro or rw", c2 + 1);
    m->rw = c2 && !strcmp(c2 + 1, "rw");
    if (!agent_mount_path_ok(c1 + 1, gl)) {
        char shown[128];
        snprintf(shown, sizeof(shown), "%.*s", (int)(gl < 100 ? gl : 100), c1 + 1);
        return bad(err, errlen, arg, "GUESTDIR '%s': want an absolute folder with no empty, '.' "
                   "or '..' part and no '/' at its end, shorter than 1024 bytes, not /, /proc, "
                   "/sys or /dev", shown);
    }
    memcpy(m->guest, c1 + 1, gl); /* agent_mount_path_ok: gl < AGENT_MOUNT_MAX_PATH */
    m->guest[gl] = '\0';
    for (unsigned i = 0; i < l->n; i++)
        if (!strcmp(l->m[i].guest, m->guest))
            return bad(err, errlen, arg, "GUESTDIR %s is mounted twice", m->guest);
    struct stat st;
    if (!check_host) {
        l->n++;
        return 0;
    }
    if (stat(m->host, &st) < 0) {
        snprintf(err, errlen, "--mount '%.200s': HOSTDIR: %s", arg, strerror(errno));
        return -EINVAL;
    }
    if (!S_ISDIR(st.st_mode))
        return bad(err, errlen, arg, "HOSTDIR: %s", "not a folder");
    l->n++;
    return 0;
}
