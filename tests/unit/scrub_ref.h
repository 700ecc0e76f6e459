/* The one-shot reference for vmm/util/scrub (the unit suite and fuzz_scrub
 * compare the streaming code with it): scrub.h's semantics written the
 * plain way, a memcmp of every pattern at every position. */
#ifndef AIRLOCK_TESTS_UNIT_SCRUB_REF_H
#define AIRLOCK_TESTS_UNIT_SCRUB_REF_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/util/scrub.h"

/* Writes len bytes to out and adds each pattern's count to hits[]. */
void scrub_ref(const struct scrub_pattern *p, unsigned n, const unsigned char *in, size_t len,
               unsigned char *out, uint64_t hits[]);

#endif
