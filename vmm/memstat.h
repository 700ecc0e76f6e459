/* The monitor's own memory for --timings: its peak RSS and how much of it
 * is guest RAM the guest touched, so the report can show the overhead that
 * is airlock's (peak minus guest).  Read through /proc/self files opened
 * before the jail and the seccomp filter (which allow read() but not
 * open()): procfs regenerates them on each read from offset 0. */
#ifndef AIRLOCK_VMM_MEMSTAT_H
#define AIRLOCK_VMM_MEMSTAT_H

#include <stdint.h>

#include "vmm/gmem.h"

struct memstat {
    int status_fd, smaps_fd; /* -1 when not open */
};

/* Opens /proc/self/status and /proc/self/smaps; -errno (the report then
 * leaves the memory figures out). */
int memstat_open(struct memstat *m);

/* Peak RSS (VmHWM) and the resident part of guest RAM, in KiB; 0 for a
 * figure that could not be read.  Reads each file once, from the start. */
void memstat_read(struct memstat *m, const struct gmem *mem, uint64_t *peak_kib,
                  uint64_t *guest_kib);

void memstat_close(struct memstat *m);

#endif
