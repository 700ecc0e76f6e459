#include "vmm/http/http_query.h"

#include <string.h>

static int hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int query_param(const char *target, const char *name, char *out, size_t cap)
{
    const char *q = strchr(target, '?');
    size_t nlen = strlen(name);
    while (q) {
        q++;
        if (!strncmp(q, name, nlen) && q[nlen] == '=') {
            const char *v = q + nlen + 1;
            size_t n = 0;
            for (; *v && *v != '&'; v++) {
                int ch = (unsigned char)*v;
                if (ch == '%') {
                    int hi = hex(v[1]), lo = hi < 0 ? -1 : hex(v[2]);
                    if (lo < 0)
                        return -1;
                    ch = hi * 16 + lo;
                    v += 2;
                } else if (ch == '+') {
                    ch = ' ';
                }
                if (ch == 0 || n + 1 >= cap)
                    return -1;
                out[n++] = (char)ch;
            }
            out[n] = '\0';
            return 1;
        }
        q = strchr(q, '&');
    }
    return 0;
}

int query_bool(const char *target, const char *name, bool *out)
{
    char v[8];
    int q = query_param(target, name, v, sizeof(v));
    if (q <= 0)
        return q;
    if (!strcmp(v, "true") || !strcmp(v, "1"))
        *out = true;
    else if (!strcmp(v, "false") || !strcmp(v, "0"))
        *out = false;
    else
        return -1;
    return 1;
}
