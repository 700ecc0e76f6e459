/* The JSON reading config.json and process.json share (oci_config.c
 * calls it; nothing here calls back); see oci_json.h. */
#include "vmm/runtime/oci_json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/runtime/oci_config.h"

/* A file of at most OCI_CONFIG_MAX_BYTES into a fresh buffer. */
char *oci_json_slurp(const char *path, size_t *len, char *err, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, cap, "%.300s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > OCI_CONFIG_MAX_BYTES) {
        snprintf(err, cap, "%.300s: not a regular file of at most %u MiB", path,
                 OCI_CONFIG_MAX_BYTES >> 20);
        close(fd);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t n = 0;
    while (buf && n < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (!buf || n != (size_t)st.st_size) {
        snprintf(err, cap, "%.300s: cannot read it", path);
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

json_t *oci_json_parse_doc(const char *buf, size_t len, const char *what, char *err, size_t cap)
{
    json_error_t je;
    if (len > OCI_CONFIG_MAX_BYTES) {
        snprintf(err, cap, "%s: larger than %u MiB", what, OCI_CONFIG_MAX_BYTES >> 20);
        return NULL;
    }
    json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        snprintf(err, cap, "%s: not JSON (line %d: %.200s)", what, je.line, je.text);
    else if (!json_is_object(j)) {
        snprintf(err, cap, "%s: not a JSON object", what);
        json_decref(j);
        j = NULL;
    }
    return j;
}

/* A string of length >= 1 without NUL (jansson allows embedded NULs). */
const char *oci_json_str_of(const json_t *v)
{
    if (!json_is_string(v) || !json_string_length(v) ||
        strlen(json_string_value(v)) != json_string_length(v))
        return NULL;
    return json_string_value(v);
}

int oci_json_bad(char *err, size_t cap, const char *field, const char *why)
{
    snprintf(err, cap, "%s: %s", field, why);
    return -1;
}

/* An integer field in [min, max]; absent leaves *out. */
int oci_json_int_field(const json_t *o, const char *key, const char *field, int64_t min, int64_t max,
              int64_t *out, char *err, size_t cap)
{
    const json_t *v = json_object_get(o, key);
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        char why[96];
        snprintf(why, sizeof(why), "want an integer from %lld to %lld", (long long)min,
                 (long long)max);
        return oci_json_bad(err, cap, field, why);
    }
    *out = json_integer_value(v);
    return 0;
}

/* An array of strings into a fresh NULL-terminated vector of at most max
 * entries (each string not empty unless allow_empty). */
int oci_json_str_array(const json_t *a, const char *field, unsigned max, bool allow_empty,
              const char ***out, unsigned *n, char *err, size_t cap)
{
    *out = NULL;
    *n = 0;
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a))
        return oci_json_bad(err, cap, field, "want an array of strings");
    if (json_array_size(a) > max) {
        char why[64];
        snprintf(why, sizeof(why), "more than %u entries", max);
        return oci_json_bad(err, cap, field, why);
    }
    const char **v = calloc(json_array_size(a) + 1, sizeof(*v));
    if (!v)
        return oci_json_bad(err, cap, field, "out of memory");
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        const char *s = json_is_string(e) && strlen(json_string_value(e)) == json_string_length(e)
                            ? json_string_value(e)
                            : NULL;
        if (!s || (!allow_empty && !*s)) {
            free(v);
            return oci_json_bad(err, cap, field, "want strings without NUL bytes");
        }
        v[i] = s;
    }
    *out = v;
    *n = (unsigned)json_array_size(a);
    return 0;
}
