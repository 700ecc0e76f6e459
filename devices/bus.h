/* The guest-visible address spaces (port I/O and MMIO) and who owns each
 * range.  Every PIO or MMIO exit enters here and reaches at most one
 * handler; an access that no range fully contains is "unclaimed": reads see
 * all-ones (an empty ISA bus) and writes are dropped.  Ranges are registered
 * before the first vCPU runs and never change after, so lookups take no
 * lock; handlers lock their own state. */
#ifndef AIRLOCK_DEVICES_BUS_H
#define AIRLOCK_DEVICES_BUS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define BUS_MAX_RANGES 16

enum bus_space { BUS_PIO, BUS_MMIO };

/* Called with `offset` relative to the range base; data holds `len` bytes
 * (1..8) to write, or is filled for a read. */
typedef void (*bus_io_fn)(void *opaque, uint64_t offset, uint8_t *data, unsigned len,
                          bool is_write);

struct bus_range {
    uint64_t base;
    uint64_t len;
    const char *name;
    bus_io_fn fn;
    void *opaque;
};

struct bus_space_map {
    struct bus_range ranges[BUS_MAX_RANGES];
    unsigned n;
    atomic_ulong unclaimed; /* accesses no range owned, for diagnostics */
};

struct bus {
    struct bus_space_map space[2];
};

/* Claims [base, base+len) in `space`.  -EINVAL for len 0 or a range that
 * wraps, -EEXIST when it overlaps a registered range, -ENOSPC when full. */
int bus_register(struct bus *bus, enum bus_space space, uint64_t base, uint64_t len,
                 const char *name, bus_io_fn fn, void *opaque);

/* Routes one access.  Returns true when a handler took it; false when
 * unclaimed (a read then returns all-ones). len must be 1..8. */
bool bus_access(struct bus *bus, enum bus_space space, uint64_t addr, uint8_t *data,
                unsigned len, bool is_write);

/* The range that owns `addr`, or NULL (for the surface report and tests). */
const struct bus_range *bus_find(const struct bus *bus, enum bus_space space, uint64_t addr);

#endif
