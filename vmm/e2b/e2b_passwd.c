#include "vmm/e2b/e2b_user.h"

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vmm/util/base64.h"

int e2b_passwd_find(const char *bytes, size_t n, const char *name, uint32_t uid, struct e2b_user *u)
{
    if (!n)
        return -1;
    FILE *f = fmemopen((void *)bytes, n, "r");
    if (!f)
        return -1;
    struct passwd *pw;
    int rc = -1;
    while ((pw = fgetpwent(f))) {
        if (name ? strcmp(pw->pw_name, name) : pw->pw_uid != uid)
            continue;
        if (strlen(pw->pw_name) > E2B_USER_NAME_MAX || !pw->pw_dir || pw->pw_dir[0] != '/' ||
            strlen(pw->pw_dir) >= sizeof(u->home))
            break; /* an entry we cannot use is no entry */
        snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
        u->uid = pw->pw_uid;
        u->gid = pw->pw_gid;
        snprintf(u->home, sizeof(u->home), "%s", pw->pw_dir);
        rc = 0;
        break;
    }
    fclose(f);
    return rc;
}

/* The name from "Basic base64(NAME:)"; 0 none given, 1 found, -1 malformed. */
int e2b_basic_name(const char *auth, char name[E2B_USER_NAME_MAX + 1])
{
    if (!auth[0])
        return 0;
    if (strncasecmp(auth, "Basic ", 6))
        return -1;
    size_t len;
    unsigned char *raw = base64_decode(auth + 6, &len);
    if (!raw)
        return -1;
    unsigned char *colon = memchr(raw, ':', len);
    size_t n = colon ? (size_t)(colon - raw) : len;
    int rc = n && n <= E2B_USER_NAME_MAX && !memchr(raw, '\0', n) ? 1 : -1;
    if (rc == 1) {
        memcpy(name, raw, n);
        name[n] = '\0';
        for (size_t i = 0; i < n; i++) /* a name's letters (POSIX portable, and '$') */
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-$", name[i]))
                rc = -1;
    }
    free(raw);
    return rc;
}

int e2b_user_path(const struct e2b_user *u, const char *path, char *out, size_t cap)
{
    int n = path[0] == '/' ? snprintf(out, cap, "%s", path)
                           : snprintf(out, cap, "%s%s%s", u->home,
                                      strcmp(u->home, "/") ? "/" : "", path);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

const char *e2b_uid_name(const struct e2b_names *n, uint32_t uid, char *buf, size_t cap)
{
    struct e2b_user u;
    if (!e2b_passwd_find(n->passwd, n->pn, NULL, uid, &u))
        snprintf(buf, cap, "%s", u.name);
    else
        snprintf(buf, cap, "%u", uid);
    return buf;
}

const char *e2b_gid_name(const struct e2b_names *n, uint32_t gid, char *buf, size_t cap)
{
    snprintf(buf, cap, "%u", gid);
    if (!n->gn)
        return buf;
    FILE *f = fmemopen(n->group, n->gn, "r");
    if (!f)
        return buf;
    struct group *gr;
    while ((gr = fgetgrent(f)))
        if (gr->gr_gid == gid && gr->gr_name && strlen(gr->gr_name) <= E2B_USER_NAME_MAX) {
            snprintf(buf, cap, "%s", gr->gr_name);
            break;
        }
    fclose(f);
    return buf;
}
