/* A tar member's name, cleaned; see tar_name.h. */
#include "vmm/util/tar_name.h"

#include <limits.h>
#include <string.h>

int tar_name_clean(const char *name, char *out, size_t cap, const char **why)
{
    while (name[0] == '.' && name[1] == '/')
        name += 2;
    if (!strcmp(name, ".") || !name[0])
        return 0;
    if (name[0] == '/') {
        *why = "an absolute name";
        return -1;
    }
    size_t len = strlen(name);
    if (name[len - 1] == '/')
        len--;
    if (len + 1 > cap) {
        *why = "a name too long for its destination";
        return -1;
    }
    memcpy(out, name, len);
    out[len] = '\0';
    for (char *c = out; c;) {
        char *slash = strchr(c, '/');
        size_t n = slash ? (size_t)(slash - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.')) {
            *why = "an empty or '.' component inside the name";
            return -1;
        }
        if (n == 2 && c[0] == '.' && c[1] == '.') {
            *why = "a '..' component";
            return -1;
        }
        if (n > NAME_MAX) {
            *why = "a component over 255 bytes";
            return -1;
        }
        c = slash ? slash + 1 : NULL;
    }
    return 1;
}
