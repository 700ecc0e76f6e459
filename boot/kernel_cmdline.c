/* Inserting airlock's parameters where the guest kernel parses them
 * (boot/kernel_cmdline.h): before init's arguments. */
#include "boot/kernel_cmdline.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* The kernel's isspace() (lib/ctype.c): the ASCII spaces and, as Latin-1
 * has it, 0xa0. */
static bool kspace(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

static size_t skip_spaces(const char *s, size_t i)
{
    while (s[i] && kspace((unsigned char)s[i]))
        i++;
    return i;
}

size_t kcmdline_insert_at(const char *line)
{
    size_t i = skip_spaces(line, 0);
    while (line[i]) {
        size_t start = i;
        bool quoted = false, in_quote = false, equals = false;
        /* next_arg(): a leading quote is not part of the token... */
        if (line[i] == '"') {
            quoted = in_quote = true;
            i++;
        }
        size_t first = i;
        for (; line[i]; i++) {
            if (kspace((unsigned char)line[i]) && !in_quote)
                break;
            /* (next_arg() sees no '=' at the token's first byte) */
            if (line[i] == '=' && i > first)
                equals = true;
            if (line[i] == '"')
                in_quote = !in_quote;
        }
        /* A quote still open at the end: the kernel reads all of the rest
         * as this one token, so anything appended would be inside it. */
        if (in_quote)
            return start;
        size_t len = i - first;
        /* ...nor is a closing one after a leading quote. */
        if (quoted && len && line[i - 1] == '"')
            len--;
        /* parse_args(): "Stop at --", a parameter without a value. */
        if (!equals && len == 2 && line[first] == '-' && line[first + 1] == '-')
            return start;
        i = skip_spaces(line, i);
    }
    return i;
}

int kcmdline_insert(char *out, size_t cap, const char *line, const char *params)
{
    size_t at = kcmdline_insert_at(line), len = strlen(line), plen = strlen(params);
    /* No "--": appended as before, after a space unless the line is
     * empty.  Else params and a space go in front of line[at], which
     * follows a space (or is the line's start). */
    size_t space = len ? 1 : 0;
    if (cap == 0 || len + space + plen >= cap) {
        if (cap)
            out[0] = 0;
        return -E2BIG;
    }
    char *p = out;
    memcpy(p, line, at);
    p += at;
    if (at == len) {
        memcpy(p, " ", space);
        p += space;
    }
    memcpy(p, params, plen);
    p += plen;
    if (at < len) {
        *p++ = ' ';
        memcpy(p, line + at, len - at);
        p += len - at;
    }
    *p = 0;
    return 0;
}

int kcmdline_remove(char *out, size_t cap, const char *full, const char *params)
{
    size_t len = strlen(full), plen = strlen(params);
    if (cap)
        out[0] = 0;
    if (!plen)
        return -ENOENT;
    /* Appended: at the end, after a space unless the line was empty.
     * Inserted: at a token's start, followed by one space. */
    size_t from, to;
    if (len >= plen && !strcmp(full + len - plen, params) &&
        (len == plen || full[len - plen - 1] == ' ')) {
        to = len;
        from = len == plen ? 0 : len - plen - 1;
    } else {
        const char *at = full;
        while ((at = strstr(at, params)) &&
               ((at > full && !kspace((unsigned char)at[-1])) || at[plen] != ' '))
            at++;
        if (!at)
            return -ENOENT;
        from = (size_t)(at - full);
        to = from + plen + 1;
    }
    if (len - (to - from) >= cap)
        return -E2BIG;
    memcpy(out, full, from);
    memcpy(out + from, full + to, len - to + 1);
    return 0;
}
