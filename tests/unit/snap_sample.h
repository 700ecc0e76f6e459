/* A valid, fully populated struct snap_state for tests and the fuzz seed:
 * pseudo-random bytes in every raw KVM struct and every integer within its
 * allowed range, so a round trip that drops or swaps a field shows. */
#ifndef AIRLOCK_TESTS_UNIT_SNAP_SAMPLE_H
#define AIRLOCK_TESTS_UNIT_SNAP_SAMPLE_H

#include <stdint.h>

#include "vmm/snapshot/snapshot_state.h"

/* Fills *s (zeroed first) with ncpus vCPUs, nvirtio transports (queue
 * counts cycle through 0..SNAP_MAX_QUEUES) and ndisks disks; `seed` picks
 * the bytes.  vCPU i has (seed + i) % (SNAP_MAX_MSRS + 1) MSRs, so
 * consecutive seeds cover both 0 and SNAP_MAX_MSRS. */
void snap_sample(struct snap_state *s, unsigned ncpus, unsigned nvirtio, unsigned ndisks,
                 uint32_t seed);

#endif
