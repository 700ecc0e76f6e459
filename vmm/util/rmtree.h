/* Removes a folder tree this process made (a staging or unpack folder),
 * children first; a symlink in it is removed, never followed. */
#ifndef AIRLOCK_UTIL_RMTREE_H
#define AIRLOCK_UTIL_RMTREE_H

/* 0, or -1 with errno from the first entry that could not go. */
int rmtree(const char *path);

#endif
