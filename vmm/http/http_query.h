/* Query parameters of a request target ("/v1/x?path=%2Ftmp%2Fa&mode=644"),
 * as a client sent them: hostile bytes, bounded. */
#ifndef AIRLOCK_HTTP_HTTP_QUERY_H
#define AIRLOCK_HTTP_HTTP_QUERY_H

#include <stdbool.h>
#include <stddef.h>

/* The first parameter `name` of `target` (NUL-terminated), percent-decoded
 * ('+' is a space) into out.  1 found, 0 absent, -1 malformed: a bad
 * escape, an escaped NUL, or longer than cap - 1 bytes. */
int query_param(const char *target, const char *name, char *out, size_t cap);

/* A boolean parameter: "true"/"1" or "false"/"0" into *out.  1 found, 0
 * absent (*out untouched), -1 malformed or anything else. */
int query_bool(const char *target, const char *name, bool *out);

#endif
