/* The JSON reading oci_config.c does for config.json and process.json
 * (private to vmm/runtime/): the file read whole, the document parsed,
 * and the field checks that name the field when they fail.  Each takes
 * err/cap and, on failure, writes "field: why" there. */
#ifndef AIRLOCK_RUNTIME_OCI_JSON_H
#define AIRLOCK_RUNTIME_OCI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* A file of at most OCI_CONFIG_MAX_BYTES into a fresh buffer, or NULL. */
char *oci_json_slurp(const char *path, size_t *len, char *err, size_t cap);
/* buf[0, len) as a JSON object (duplicate keys refused), or NULL; `what`
 * names the document in err. */
json_t *oci_json_parse_doc(const char *buf, size_t len, const char *what, char *err, size_t cap);
/* A string of length >= 1 without NUL, or NULL. */
const char *oci_json_str_of(const json_t *v);
/* "field: why" into err; returns -1. */
int oci_json_bad(char *err, size_t cap, const char *field, const char *why);
/* An integer field in [min, max]; absent leaves *out.  0 or -1. */
int oci_json_int_field(const json_t *o, const char *key, const char *field, int64_t min, int64_t max,
              int64_t *out, char *err, size_t cap);
/* An array of strings into a fresh NULL-terminated vector of at most max
 * entries (each not empty unless allow_empty).  0 or -1. */
int oci_json_str_array(const json_t *a, const char *field, unsigned max, bool allow_empty,
              const char ***out, unsigned *n, char *err, size_t cap);

#endif
