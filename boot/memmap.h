/* The guest's physical memory map (e820 types), derived from guest RAM and
 * vmm/memory/layout.h.  Both boot protocols hand it to the kernel: Linux's zero
 * page as e820_table, PVH as its memmap table. */
#ifndef AIRLOCK_BOOT_MEMMAP_H
#define AIRLOCK_BOOT_MEMMAP_H

#include <stdint.h>

#include "vmm/memory/gmem.h"

#define MEMMAP_RAM      1 /* E820_TYPE_RAM */
#define MEMMAP_RESERVED 2 /* E820_TYPE_RESERVED */
#define MEMMAP_MAX      8

struct memmap_entry {
    uint64_t addr;
    uint64_t size;
    uint32_t type;
};

/* Fills out[] (at least MEMMAP_MAX entries); returns the count. */
unsigned memmap_build(const struct gmem *mem, struct memmap_entry *out);

#endif
