/* A deadline ms from now on CLOCK_MONOTONIC, as pthread_cond_timedwait
 * takes it (a condition variable set to that clock): a wall clock that
 * jumps neither ends a wait early nor stretches it. */
#ifndef AIRLOCK_UTIL_MONO_DEADLINE_H
#define AIRLOCK_UTIL_MONO_DEADLINE_H

#include <time.h>

struct timespec mono_after_ms(unsigned ms);

#endif
