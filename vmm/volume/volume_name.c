/* Volume names and sizes; see volume_name.h. */
#include "vmm/volume/volume_name.h"

#include <errno.h>

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool volume_name_ok(const char *name, size_t len)
{
    if (!name || !len || len > VOLUME_NAME_MAX || !alnum(name[0]))
        return false;
    for (size_t i = 1; i < len; i++)
        if (!alnum(name[i]) && name[i] != '_' && name[i] != '.' && name[i] != '-')
            return false;
    return true;
}

int volume_size_parse(const char *text, uint32_t *mib)
{
    uint64_t v = 0;
    if (!text || !*text)
        return -EINVAL;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9' || p - text >= 8) /* 8 digits pass the bound already */
            return -EINVAL;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v < VOLUME_SIZE_MIN_MIB || v > VOLUME_SIZE_MAX_MIB)
        return -EINVAL;
    *mib = (uint32_t)v;
    return 0;
}
