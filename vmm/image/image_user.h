/* An image config's User ("name", "uid", "name:group", "uid:gid", any
 * mix) as numbers, the way `docker run` reads it: names are looked up in
 * the image's own /etc/passwd and /etc/group; a user without a group gets
 * its passwd entry's group, or 0 when a numeric uid has no entry.  Done
 * once, at import, from the staged tree: the guest has no resolver of
 * ours, and the image's files are hostile (symlinks are followed only
 * inside the tree; each file is read up to IMAGE_USER_FILE_MAX). */
#ifndef AIRLOCK_IMAGE_IMAGE_USER_H
#define AIRLOCK_IMAGE_IMAGE_USER_H

#include <stddef.h>
#include <stdint.h>

#define IMAGE_USER_FILE_MAX (4u << 20)

/* root: the staged tree.  0, or -1 with why ("user 'app' is not in the
 * image's /etc/passwd"). */
int image_user_resolve(int root, const char *user, uint32_t *uid, uint32_t *gid, char *why,
                       size_t cap);

#endif
