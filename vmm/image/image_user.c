/* User names to numbers from the image's own files; see image_user.h. */
#include "vmm/image/image_user.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/open_resolve.h"
#include "vmm/util/parse.h"

/* The image's file, symlinks resolved inside the tree (as the guest
 * would); NULL when it is missing, not a regular file or too big. */
static FILE *image_file(int root, const char *rel)
{
    int fd = open_resolve(root, rel, O_RDONLY, RESOLVE_IN_ROOT);
    struct stat st;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > IMAGE_USER_FILE_MAX) {
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f)
        close(fd);
    return f;
}

static bool number(const char *s, uint32_t *out)
{
    uint64_t v;
    if (parse_uint(s, 0xfffffffe, &v))
        return false;
    *out = (uint32_t)v;
    return true;
}

/* By name (name != NULL) or by uid: 1 with the entry's uid and gid. */
static int passwd_find(int root, const char *name, uint32_t id, uint32_t *uid, uint32_t *gid)
{
    FILE *f = image_file(root, "etc/passwd");
    int found = 0;
    struct passwd *pw;
    while (f && !found && (pw = fgetpwent(f)))
        if (name ? !strcmp(pw->pw_name, name) : pw->pw_uid == id) {
            *uid = pw->pw_uid;
            *gid = pw->pw_gid;
            found = 1;
        }
    if (f)
        fclose(f);
    return found;
}

static int group_find(int root, const char *name, uint32_t *gid)
{
    FILE *f = image_file(root, "etc/group");
    int found = 0;
    struct group *gr;
    while (f && !found && (gr = fgetgrent(f)))
        if (!strcmp(gr->gr_name, name)) {
            *gid = gr->gr_gid;
            found = 1;
        }
    if (f)
        fclose(f);
    return found;
}

int image_user_resolve(int root, const char *user, uint32_t *uid, uint32_t *gid, char *why,
                       size_t cap)
{
    char u[256];
    if (snprintf(u, sizeof(u), "%s", user) >= (int)sizeof(u) || !u[0])
        return snprintf(why, cap, "User '%.64s': want NAME or UID, then :GROUP or :GID", user), -1;
    char *group = strchr(u, ':');
    if (group)
        *group++ = '\0';
    uint32_t pw_gid = 0;
    if (number(u, uid))
        passwd_find(root, NULL, *uid, uid, &pw_gid); /* not there: group 0 */
    else if (!passwd_find(root, u, 0, uid, &pw_gid))
        return snprintf(why, cap, "User '%.64s': '%.64s' is not in the image's /etc/passwd", user,
                        u), -1;
    *gid = pw_gid;
    if (group && !number(group, gid) && !group_find(root, group, gid))
        return snprintf(why, cap, "User '%.64s': group '%.64s' is not in the image's /etc/group",
                        user, group), -1;
    return 0;
}
