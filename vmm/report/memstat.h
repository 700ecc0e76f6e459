/* The monitor's own memory for --timings: its peak RSS and how much of it
 * is guest RAM the guest touched, so the report can show the overhead that
 * is airlock's (peak minus guest).  Read through /proc/self files opened
 * before the jail and the seccomp filter (which allow read() but not
 * open()): procfs regenerates them on each read from offset 0. */
#ifndef AIRLOCK_REPORT_MEMSTAT_H
#define AIRLOCK_REPORT_MEMSTAT_H

#include <stdint.h>

#include "vmm/memory/gmem.h"

struct memstat {
    int status_fd, smaps_fd; /* -1 when not open */
};

/* Opens /proc/self/status and /proc/self/smaps; -errno (the report then
 * leaves the memory figures out). */
int memstat_open(struct memstat *m);

/* KiB; 0 for a figure that could not be read. */
struct memstat_figures {
    uint64_t peak;          /* peak RSS (VmHWM) */
    uint64_t guest;         /* guest RAM resident now */
    uint64_t private_own;   /* private memory (Private_Clean + Private_Dirty) now, guest RAM's
                               excluded: what this VM costs that no other process shares
                               (RSS also counts shared library pages the page cache holds
                               for every process) */
};

/* Reads each file once, from the start. */
void memstat_read(struct memstat *m, const struct gmem *mem, struct memstat_figures *f);

void memstat_close(struct memstat *m);

#endif
