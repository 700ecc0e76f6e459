/* Numbers in options and protocol fields, parsed strictly. */
#ifndef AIRLOCK_UTIL_PARSE_H
#define AIRLOCK_UTIL_PARSE_H

#include <stdint.h>

/* Decimal digits only: no sign, no spaces, no 0x, no overflow, <= max.
 * -EINVAL for anything else, -ERANGE past max. */
int parse_uint(const char *s, uint64_t max, uint64_t *out);

#endif
