/* Xen PVH boot: the start-of-day structure Linux's pvh_start_xen reads
 * (xen/include/public/arch-x86/hvm/start_info.h, version 1). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "vmm/memory/layout.h"
#include "boot/loader.h"
#include "boot/memmap.h"

#define HVM_START_MAGIC 0x336ec578

struct hvm_start_info {
    uint32_t magic;
    uint32_t version;
    uint32_t flags;
    uint32_t nr_modules;
    uint64_t modlist_paddr;
    uint64_t cmdline_paddr;
    uint64_t rsdp_paddr;
    uint64_t memmap_paddr;
    uint32_t memmap_entries;
    uint32_t reserved;
};

struct hvm_modlist_entry {
    uint64_t paddr;
    uint64_t size;
    uint64_t cmdline_paddr;
    uint64_t reserved;
};

struct hvm_memmap_table_entry {
    uint64_t addr;
    uint64_t size;
    uint32_t type;
    uint32_t reserved;
};

_Static_assert(sizeof(struct hvm_start_info) == 56, "start_info layout");
_Static_assert(LAYOUT_PVH_INFO_START + sizeof(struct hvm_start_info) <= LAYOUT_PVH_MODLIST, "fits");
_Static_assert(LAYOUT_PVH_MODLIST + sizeof(struct hvm_modlist_entry) <= LAYOUT_PVH_MEMMAP, "fits");

int pvh_write(const struct gmem *mem, uint64_t initrd_gpa, uint64_t initrd_size)
{
    struct hvm_start_info si = {
        .magic = HVM_START_MAGIC,
        .version = 1,
        .cmdline_paddr = LAYOUT_CMDLINE_START,
        .rsdp_paddr = 0, /* no ACPI */
    };
    struct memmap_entry map[MEMMAP_MAX];
    unsigned n = memmap_build(mem, map);
    for (unsigned i = 0; i < n; i++) {
        struct hvm_memmap_table_entry e = {map[i].addr, map[i].size, map[i].type, 0};
        int err = gmem_write(mem, LAYOUT_PVH_MEMMAP + i * sizeof(e), &e, sizeof(e));
        if (err)
            return err;
    }
    si.memmap_paddr = LAYOUT_PVH_MEMMAP;
    si.memmap_entries = n;
    if (initrd_size) {
        struct hvm_modlist_entry mod = {.paddr = initrd_gpa, .size = initrd_size};
        int err = gmem_write(mem, LAYOUT_PVH_MODLIST, &mod, sizeof(mod));
        if (err)
            return err;
        si.nr_modules = 1;
        si.modlist_paddr = LAYOUT_PVH_MODLIST;
    }
    return gmem_write(mem, LAYOUT_PVH_INFO_START, &si, sizeof(si));
}
