/* Which process a pid names: its start time (field 22 of /proc/PID/stat,
 * clock ticks since boot), recorded beside a pid so that the pid, once
 * reused by another process, is not taken for it. */
#ifndef AIRLOCK_UTIL_PROC_START_H
#define AIRLOCK_UTIL_PROC_START_H

#include <stdint.h>
#include <sys/types.h>

/* 0 when there is no such process, or it is a zombie (it has ended). */
uint64_t proc_start_time(pid_t pid);

#endif
