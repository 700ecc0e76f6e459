/* The wall clock as RFC 3339 UTC with milliseconds
 * ("2025-01-31T23:59:59.123Z"): the audit log's "time" and the daemon's
 * events' (vmm/sandbox/events.h) say it the same way. */
#ifndef AIRLOCK_UTIL_UTC_TIME_H
#define AIRLOCK_UTIL_UTC_TIME_H

#include <time.h>

#define UTC_TIME_LEN 25 /* the text and its NUL */

/* ts (CLOCK_REALTIME) into out. */
void utc_time_format(const struct timespec *ts, char out[UTC_TIME_LEN]);
/* Now. */
void utc_time_now(char out[UTC_TIME_LEN]);

#endif
