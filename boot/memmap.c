#include "boot/memmap.h"

#include "vmm/memory/layout.h"

unsigned memmap_build(const struct gmem *mem, struct memmap_entry *out)
{
    unsigned n = 0;
    uint64_t low_end = gmem_low_end(mem);
    /* Base memory up to the EBDA, where the MP table lives; 640 KiB..1 MiB
     * is the legacy hole that Linux expects to be reserved. */
    out[n++] = (struct memmap_entry){0, LAYOUT_EBDA_START, MEMMAP_RAM};
    out[n++] = (struct memmap_entry){LAYOUT_EBDA_START, LAYOUT_HIMEM_START - LAYOUT_EBDA_START,
                                     MEMMAP_RESERVED};
    if (low_end > LAYOUT_HIMEM_START)
        out[n++] = (struct memmap_entry){LAYOUT_HIMEM_START, low_end - LAYOUT_HIMEM_START, MEMMAP_RAM};
    for (unsigned i = 0; i < mem->nregions && n < MEMMAP_MAX; i++)
        if (mem->regions[i].gpa != 0)
            out[n++] = (struct memmap_entry){mem->regions[i].gpa, mem->regions[i].size, MEMMAP_RAM};
    return n;
}
