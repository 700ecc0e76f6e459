#include "vmm/e2b/proto_json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmm/util/base64.h"

json_t *pj_field(const json_t *o, const char *camel, const char *snake)
{
    if (!json_is_object(o))
        return NULL;
    json_t *v = json_object_get(o, camel);
    if ((!v || json_is_null(v)) && snake)
        v = json_object_get(o, snake);
    return v && !json_is_null(v) ? v : NULL;
}

int pj_uint32(const json_t *v, uint32_t dflt, uint32_t *out)
{
    if (!v) {
        *out = dflt;
        return 0;
    }
    long long n;
    if (json_is_integer(v)) {
        n = json_integer_value(v);
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        errno = 0;
        n = strtoll(s, &end, 10);
        if (errno || end == s || *end || strspn(s, "0123456789") != strlen(s))
            return -1;
    } else {
        return -1;
    }
    if (n < 0 || n > UINT32_MAX)
        return -1;
    *out = (uint32_t)n;
    return 0;
}

const char *pj_string(const json_t *v, bool *bad)
{
    if (!v)
        return NULL;
    if (!json_is_string(v) || memchr(json_string_value(v), '\0', json_string_length(v))) {
        *bad = true;
        return NULL;
    }
    return json_string_value(v);
}

bool pj_bool(const json_t *v, bool dflt, bool *bad)
{
    if (!v)
        return dflt;
    if (!json_is_boolean(v)) {
        *bad = true;
        return dflt;
    }
    return json_is_true(v);
}

int pj_enum(const json_t *v, const char *const *names, const int *values, size_t n, int *out)
{
    if (!v) {
        *out = values[0];
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if ((json_is_string(v) && !strcmp(json_string_value(v), names[i])) ||
            (json_is_integer(v) && json_integer_value(v) == values[i])) {
            *out = values[i];
            return 0;
        }
    return -1;
}

json_t *pj_string_map(const json_t *v, bool *bad)
{
    if (!v)
        return NULL;
    if (!json_is_object(v)) {
        *bad = true;
        return NULL;
    }
    const char *k;
    json_t *e;
    json_object_foreach((json_t *)v, k, e) if (!json_is_string(e)) {
        *bad = true;
        return NULL;
    }
    return (json_t *)v;
}

unsigned char *pj_bytes(const json_t *v, size_t *len, bool *bad)
{
    *len = 0;
    if (!v)
        return NULL;
    if (!json_is_string(v)) {
        *bad = true;
        return NULL;
    }
    size_t n = json_string_length(v);
    if (!n)
        return calloc(1, 1);
    /* URL-safe letters and missing padding into the one form the codec reads. */
    char *t = malloc(n + 4);
    if (!t) {
        *bad = true;
        return NULL;
    }
    const char *s = json_string_value(v);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        t[k++] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
    while (k % 4)
        t[k++] = '=';
    t[k] = '\0';
    unsigned char *out = base64_decode(t, len);
    free(t);
    if (!out)
        *bad = true;
    return out;
}

json_t *pj_bytes_new(const void *p, size_t n)
{
    char *s = base64_encode(p, n);
    json_t *j = s ? json_string(s) : NULL;
    free(s);
    return j;
}

json_t *pj_int64_new(int64_t v)
{
    char s[24];
    snprintf(s, sizeof(s), "%" PRId64, v);
    return json_string(s);
}

json_t *pj_timestamp_new(int64_t unix_ms)
{
    time_t t = (time_t)(unix_ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char s[48];
    size_t n = strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(s + n, sizeof(s) - n, ".%03dZ", (int)(unix_ms % 1000));
    return json_string(s);
}

int pj_timestamp_parse(const char *s, int64_t *unix_ms)
{
    struct tm tm = {0};
    const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p || strlen(s) < 19 || s[4] != '-' || s[10] != 'T')
        return -1;
    int64_t ms = 0;
    if (*p == '.') { /* up to nanoseconds: milliseconds kept */
        int digits = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 3)
                ms = ms * 10 + (*p - '0');
        if (!digits || digits > 9)
            return -1;
        for (; digits < 3; digits++)
            ms *= 10;
    }
    int64_t offset_s = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if ((*p == '+' || *p == '-') && p[1] >= '0' && p[1] <= '2' && p[2] >= '0' &&
               p[2] <= '9' && p[3] == ':' && p[4] >= '0' && p[4] <= '5' && p[5] >= '0' &&
               p[5] <= '9') {
        int h = (p[1] - '0') * 10 + (p[2] - '0'), m = (p[4] - '0') * 10 + (p[5] - '0');
        if (h > 23)
            return -1;
        offset_s = (*p == '-' ? -1 : 1) * (h * 3600 + m * 60);
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    time_t t = timegm(&tm);
    if (t == (time_t)-1 && !(tm.tm_year == 69 && tm.tm_mon == 11 && tm.tm_mday == 31))
        return -1;
    *unix_ms = ((int64_t)t - offset_s) * 1000 + ms;
    return 0;
}
