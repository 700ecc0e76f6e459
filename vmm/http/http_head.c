/* The lexical rules every HTTP/1.1 head here follows (see http_head.h). */
#include "vmm/http/http_head.h"

#include <string.h>
#include <strings.h>

bool http_is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

bool http_is_token(struct span s)
{
    if (s.n == 0)
        return false;
    for (size_t i = 0; i < s.n; i++)
        if (!http_is_tchar((unsigned char)s.p[i]))
            return false;
    return true;
}

bool http_is_value_byte(unsigned char c)
{
    return (c >= 0x20 || c == '\t') && c != 0x7f;
}

bool http_value_ok(struct span v)
{
    for (size_t i = 0; i < v.n; i++)
        if (!http_is_value_byte((unsigned char)v.p[i]))
            return false;
    return true;
}

bool http_span_is(struct span s, const char *lit)
{
    return s.n == strlen(lit) && strncasecmp(s.p, lit, s.n) == 0;
}

bool http_span_split(struct span s, char c, struct span *before, struct span *after)
{
    const char *at = memchr(s.p, c, s.n);
    if (!at)
        return false;
    *before = (struct span){s.p, (size_t)(at - s.p)};
    *after = (struct span){at + 1, s.n - before->n - 1};
    return true;
}

struct span http_trim_ows(struct span s)
{
    while (s.n && (s.p[0] == ' ' || s.p[0] == '\t')) {
        s.p++;
        s.n--;
    }
    while (s.n && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t'))
        s.n--;
    return s;
}

bool http_list_next(struct span *list, struct span *item)
{
    struct span rest;
    if (!list->p) /* used up, or no list at all */
        return false;
    if (http_span_split(*list, ',', item, &rest)) {
        *list = rest; /* "a," goes on to an empty element */
    } else {
        *item = *list;
        *list = (struct span){NULL, 0};
    }
    *item = http_trim_ows(*item);
    return true;
}

bool http_list_has(struct span list, const char *want)
{
    struct span item;
    while (http_list_next(&list, &item))
        if (http_span_is(item, want))
            return true;
    return false;
}

/* A CR in the last scanned byte is judged when its successor arrives, and
 * only successors inside the scanned window count, so a longer feed of the
 * same stream never turns 0 or a verdict into another verdict. */
int http_head_end(const char *buf, size_t len, size_t max, size_t *head_len)
{
    size_t scan = len < max ? len : max;
    for (size_t i = 0; i < scan; i++) {
        char c = buf[i];
        if (c == '\0')
            return HTTP_HEAD_BAD;
        if (c == '\r' && i + 1 < scan && buf[i + 1] != '\n')
            return HTTP_HEAD_BAD;
        if (c != '\n')
            continue;
        if (i == 0 || buf[i - 1] != '\r')
            return HTTP_HEAD_BAD;
        if (i >= 3 && buf[i - 2] == '\n') { /* buf[i-3] is '\r': checked above */
            *head_len = i + 1;
            return 1;
        }
    }
    return len >= max ? HTTP_HEAD_TOO_LARGE : 0;
}

struct span http_first_line(const char *head, size_t head_len)
{
    const char *cr = memchr(head, '\r', head_len);
    return (struct span){head, (size_t)(cr - head)};
}

int http_version(struct span v, int *minor)
{
    if (v.n != 8 || memcmp(v.p, "HTTP/", 5) != 0 || v.p[6] != '.' || v.p[5] < '0' ||
        v.p[5] > '9' || v.p[7] < '0' || v.p[7] > '9')
        return HTTP_HEAD_BAD;
    if (v.p[5] != '1' || (v.p[7] != '0' && v.p[7] != '1'))
        return HTTP_HEAD_VERSION;
    *minor = v.p[7] - '0';
    return 0;
}

int http_content_length(struct span value, struct span *seen)
{
    if (value.n == 0 || value.n > 18)
        return HTTP_HEAD_BAD;
    for (size_t i = 0; i < value.n; i++)
        if (value.p[i] < '0' || value.p[i] > '9')
            return HTTP_HEAD_BAD;
    if (seen->n && (seen->n != value.n || memcmp(seen->p, value.p, value.n)))
        return HTTP_HEAD_BAD;
    *seen = value;
    return 0;
}

uint64_t http_digits_value(struct span digits)
{
    uint64_t v = 0;
    for (size_t i = 0; i < digits.n; i++) /* <= 18 digits: fits */
        v = v * 10 + (uint64_t)(digits.p[i] - '0');
    return v;
}

/* A CR inside [start, end) always precedes LF (http_head_end). */
int http_field_next(const char *head, size_t end, size_t *pos, struct span *line,
                    struct span *name, struct span *value)
{
    if (*pos >= end)
        return 0;
    const char *cr = memchr(head + *pos, '\r', end - *pos);
    if (!cr || cr == head + *pos) /* cannot happen: CRLFCRLF ends the head */
        return HTTP_HEAD_BAD;
    *line = (struct span){head + *pos, (size_t)(cr - (head + *pos))};
    if (line->p[0] == ' ' || line->p[0] == '\t') /* obs-fold (RFC 9112 5.2) */
        return HTTP_HEAD_BAD;
    /* A token name also means no whitespace before the colon (RFC 9112 5.1). */
    if (!http_span_split(*line, ':', name, value) || !http_is_token(*name) ||
        !http_value_ok(*value))
        return HTTP_HEAD_BAD;
    *value = http_trim_ows(*value);
    *pos += line->n + 2;
    return 1;
}

int http_fields(const char *head, size_t start, size_t end, http_field_fn fn, void *arg)
{
    size_t pos = start;
    struct span line, name, value;
    int rc;
    while ((rc = http_field_next(head, end, &pos, &line, &name, &value)) == 1)
        if ((rc = fn(arg, line, name, value)))
            return rc;
    return rc;
}
