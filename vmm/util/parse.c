#include "vmm/util/parse.h"

#include <errno.h>

int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || !*s)
        return -EINVAL;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -EINVAL;
        unsigned d = (unsigned)(*p - '0');
        if (d > max || v > (max - d) / 10)
            return -ERANGE;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}
