/* --mount's value; see mount_options.h. */
#include "vmm/cli/mount_options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "vmm/agent_client/agent_client.h"

static int bad_flag(char *err, size_t errlen, const char *flag, const char *arg, const char *fmt,
                    const char *what)
{
    char why[400];
    snprintf(why, sizeof(why), fmt, what);
    snprintf(err, errlen, "%s '%.200s': %s", flag, arg, why);
    return -EINVAL;
}

static int bad(char *err, size_t errlen, const char *arg, const char *fmt, const char *what)
{
    return bad_flag(err, errlen, "--mount", arg, fmt, what);
}

/* SOURCE:GUESTDIR[:MODE], as both flags take it (SOURCE is HOSTDIR or
 * NAME): the next entry of l filled but not counted yet.  `mode_rw`: the
 * mode when none is given. */
static int split(struct mount_list *l, const char *flag, const char *arg, const char *source,
                 bool mode_rw, char *err, size_t errlen)
{
    if (l->n == MOUNT_MAX)
        return bad_flag(err, errlen, flag, arg, "at most %s mounts and volumes", "8");
    struct mount_spec *m = &l->m[l->n];
    memset(m, 0, sizeof(*m));
    m->arg = arg;
    m->flag = flag;
    /* SOURCE:GUESTDIR[:MODE]: neither may hold a ':' */
    const char *c1 = strchr(arg, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    size_t hl = c1 ? (size_t)(c1 - arg) : 0;
    size_t gl = c1 ? (c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1)) : 0;
    char want[64];
    snprintf(want, sizeof(want), "%s:GUESTDIR[:ro|:rw] (no ':' in either)", source);
    if (!c1 || !hl || !gl || (c2 && strchr(c2 + 1, ':')))
        return bad_flag(err, errlen, flag, arg, "want %s", want);
    if (hl >= sizeof(m->host))
        return bad_flag(err, errlen, flag, arg, "%s is too long", source);
    memcpy(m->host, arg, hl);
    if (c2 && strcmp(c2 + 1, "ro") && strcmp(c2 + 1, "rw"))
        return bad_flag(err, errlen, flag, arg, "the mode '%.20s': want ro or rw", c2 + 1);
    m->rw = c2 ? !strcmp(c2 + 1, "rw") : mode_rw;
    if (!agent_mount_path_ok(c1 + 1, gl)) {
        char shown[128];
        snprintf(shown, sizeof(shown), "%.*s", (int)(gl < 100 ? gl : 100), c1 + 1);
        return bad_flag(err, errlen, flag, arg, "GUESTDIR '%s': want an absolute folder with no "
                        "empty, '.' or '..' part and no '/' at its end, shorter than 1024 bytes, "
                        "not /, /proc, /sys or /dev", shown);
    }
    memcpy(m->guest, c1 + 1, gl); /* agent_mount_path_ok: gl < AGENT_MOUNT_MAX_PATH */
    m->guest[gl] = '\0';
    for (unsigned i = 0; i < l->n; i++)
        if (!strcmp(l->m[i].guest, m->guest))
            return bad_flag(err, errlen, flag, arg, "GUESTDIR %s is mounted twice", m->guest);
    return 0;
}

int mount_list_add_volume(struct mount_list *l, const char *arg, char *err, size_t errlen)
{
    int e = split(l, "--volume", arg, "NAME", true, err, errlen);
    if (e)
        return e;
    struct mount_spec *m = &l->m[l->n];
    if (!volume_name_ok(m->host, strlen(m->host)))
        return bad_flag(err, errlen, "--volume", arg, "NAME '%.80s': want a letter or digit, then "
                        "up to 63 letters, digits, '_', '.' or '-'", m->host);
    for (unsigned i = 0; i < l->n; i++)
        if (l->m[i].volume && !strcmp(l->m[i].name, m->host))
            return bad_flag(err, errlen, "--volume", arg, "the volume %s is given twice", m->host);
    m->volume = true;
    memcpy(m->name, m->host, strlen(m->host) + 1); /* volume_name_ok: it fits */
    l->n++;
    return 0;
}

int mount_list_add(struct mount_list *l, const char *arg, bool check_host, char *err,
                   size_t errlen)
{
    int e = split(l, "--mount", arg, "HOSTDIR", false, err, errlen);
    if (e)
        return e;
    struct mount_spec *m = &l->m[l->n];
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

unsigned mount_list_owner(const struct mount_list *l, unsigned i)
{
    const struct mount_spec *m = &l->m[i];
    if (m->volume)
        return i;
    for (unsigned j = 0; j < i; j++)
        if (!l->m[j].volume && l->m[j].rw == m->rw && !strcmp(l->m[j].host, m->host))
            return j;
    return i;
}

unsigned mount_list_disks(const struct mount_list *l)
{
    unsigned n = 0;
    for (unsigned i = 0; i < l->n; i++)
        n += mount_list_owner(l, i) == i;
    return n;
}
