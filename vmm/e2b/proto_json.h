/* protobuf's JSON mapping (protobuf.dev/programming-guides/json), the
 * parts E2B's envd messages use, read from a client and written back:
 * a field by its lowerCamelCase name or its proto name (a parser takes
 * both), 32-bit integers as numbers or decimal strings, 64-bit ones
 * written as strings, bytes as base64 (standard or URL-safe, padded or
 * not), enums by name or number, timestamps in RFC 3339.  A value of the
 * wrong type is refused, never guessed. */
#ifndef AIRLOCK_E2B_PROTO_JSON_H
#define AIRLOCK_E2B_PROTO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* o's field `camel` or `snake` (NULL when neither, or when o is not an
 * object; null counts as absent, as the mapping says). */
json_t *pj_field(const json_t *o, const char *camel, const char *snake);

/* A uint32: 0 with *out (absent: dflt), -1 when of the wrong type or
 * out of range. */
int pj_uint32(const json_t *v, uint32_t dflt, uint32_t *out);
/* A string: NULL when absent; *bad set when present but not a string. */
const char *pj_string(const json_t *v, bool *bad);
/* A bool: dflt when absent; *bad when not a bool. */
bool pj_bool(const json_t *v, bool dflt, bool *bad);
/* An enum given by name (names[i] is value values[i]) or number: 0 with
 * *out (absent: the first value), -1 for a name or number not listed. */
int pj_enum(const json_t *v, const char *const *names, const int *values, size_t n, int *out);
/* A map<string,string> (an object of strings): the object, NULL when
 * absent; *bad when not one. */
json_t *pj_string_map(const json_t *v, bool *bad);

/* Bytes: a malloc'd buffer with *len (absent: NULL and 0, not bad); *bad
 * when not base64. */
unsigned char *pj_bytes(const json_t *v, size_t *len, bool *bad);
/* Bytes as standard, padded base64 (NULL when out of memory). */
json_t *pj_bytes_new(const void *p, size_t n);
/* An int64 as the mapping writes it: a decimal string. */
json_t *pj_int64_new(int64_t v);
/* A google.protobuf.Timestamp: "2026-12-06T22:39:04.123Z" (UTC). */
json_t *pj_timestamp_new(int64_t unix_ms);
/* RFC 3339 text ("2026-12-06T22:39:04Z", fractions and a +hh:mm offset
 * allowed) into ms since the epoch: 0, or -1 when it is not one. */
int pj_timestamp_parse(const char *s, int64_t *unix_ms);

#endif
