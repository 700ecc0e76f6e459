#include "vmm/util/printable.h"

#include <stdio.h>
#include <string.h>

const char *printable(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[5];
        int k = ch >= 0x20 && ch < 0x7f && ch != '\\' ? snprintf(esc, sizeof(esc), "%c", ch)
                                                      : snprintf(esc, sizeof(esc), "\\x%02x", ch);
        if (n + (size_t)k + 4 > cap) { /* room for "..." and the NUL */
            snprintf(out + n, cap - n, "%s", cap - n > 3 ? "..." : "");
            return out;
        }
        memcpy(out + n, esc, (size_t)k);
        n += (size_t)k;
    }
    out[n] = '\0';
    return out;
}

const char *size_text(unsigned long long n, char *out, size_t cap)
{
    if (n && !(n & ((1ull << 30) - 1)))
        snprintf(out, cap, "%llu GiB", n >> 30);
    else if (n && !(n & ((1ull << 20) - 1)))
        snprintf(out, cap, "%llu MiB", n >> 20);
    else
        snprintf(out, cap, "%llu bytes", n);
    return out;
}
