#include "vmm/util/utc_time.h"

#include <stdio.h>

void utc_time_format(const struct timespec *ts, char out[UTC_TIME_LEN])
{
    struct tm tm;
    gmtime_r(&ts->tv_sec, &tm);
    /* Each field to its width (the year to four digits): the compiler
     * then knows the text fits. */
    snprintf(out, UTC_TIME_LEN, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ",
             (unsigned)(tm.tm_year + 1900) % 10000u, (unsigned)(tm.tm_mon + 1) % 100u,
             (unsigned)tm.tm_mday % 100u, (unsigned)tm.tm_hour % 100u, (unsigned)tm.tm_min % 100u,
             (unsigned)tm.tm_sec % 100u, (unsigned)(ts->tv_nsec / 1000000) % 1000u);
}

void utc_time_now(char out[UTC_TIME_LEN])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    utc_time_format(&ts, out);
}
