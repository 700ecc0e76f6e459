/* A tar member's name from an archive airlock does not trust (an upload
 * into a sandbox, an image layer), checked and cleaned into out (cap
 * bytes): leading "./" and one trailing '/' go; an empty, "." or ".."
 * component anywhere else, a leading '/', a component over NAME_MAX (255)
 * bytes or a name that does not fit cap are refused.  1 clean, 0 the root
 * itself ("." or "./": nothing to write), -1 refused with *why. */
#ifndef AIRLOCK_UTIL_TAR_NAME_H
#define AIRLOCK_UTIL_TAR_NAME_H

#include <stddef.h>

int tar_name_clean(const char *name, char *out, size_t cap, const char **why);

#endif
