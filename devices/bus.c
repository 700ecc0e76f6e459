#include "devices/bus.h"

#include <errno.h>
#include <string.h>

int bus_register(struct bus *bus, enum bus_space space, uint64_t base, uint64_t len,
                 const char *name, bus_io_fn fn, void *opaque)
{
    struct bus_space_map *m = &bus->space[space];
    if (len == 0 || base + len < base || !fn)
        return -EINVAL;
    for (unsigned i = 0; i < m->n; i++) {
        const struct bus_range *r = &m->ranges[i];
        if (base < r->base + r->len && r->base < base + len)
            return -EEXIST;
    }
    if (m->n >= BUS_MAX_RANGES)
        return -ENOSPC;
    m->ranges[m->n++] = (struct bus_range){base, len, name, fn, opaque};
    return 0;
}

const struct bus_range *bus_find(const struct bus *bus, enum bus_space space, uint64_t addr)
{
    const struct bus_space_map *m = &bus->space[space];
    for (unsigned i = 0; i < m->n; i++)
        if (addr >= m->ranges[i].base && addr - m->ranges[i].base < m->ranges[i].len)
            return &m->ranges[i];
    return NULL;
}

bool bus_access(struct bus *bus, enum bus_space space, uint64_t addr, uint8_t *data,
                unsigned len, bool is_write)
{
    const struct bus_range *r = len >= 1 && len <= 8 ? bus_find(bus, space, addr) : NULL;
    /* The whole access must lie in the range: a 4-byte read at the last
     * byte of a device must not reach past it. */
    if (r && len <= r->len - (addr - r->base)) {
        r->fn(r->opaque, addr - r->base, data, len, is_write);
        return true;
    }
    atomic_fetch_add_explicit(&bus->space[space].unclaimed, 1, memory_order_relaxed);
    if (!is_write && len <= 8)
        memset(data, 0xff, len);
    return false;
}
