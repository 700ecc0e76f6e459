/* Base64 (RFC 4648, with padding) through OpenSSL's codec, with the exact
 * lengths its block functions leave to the caller: bytes that are not
 * UTF-8 travel in the API's JSON this way. */
#ifndef AIRLOCK_UTIL_BASE64_H
#define AIRLOCK_UTIL_BASE64_H

#include <stddef.h>

/* A malloc'd, NUL-terminated encoding of len bytes; NULL when out of memory. */
char *base64_encode(const void *data, size_t len);

/* Decodes text (no whitespace, length a multiple of 4) into a malloc'd
 * buffer, *len its size; NULL for text that is not base64 (or no memory). */
unsigned char *base64_decode(const char *text, size_t *len);

#endif
