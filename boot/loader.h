/* Turns a parsed kernel, an optional initrd and a command line into guest
 * memory contents and the entry state of the boot vCPU. */
#ifndef AIRLOCK_BOOT_LOADER_H
#define AIRLOCK_BOOT_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "boot/kernel.h"
#include "vmm/memory/gmem.h"

struct boot_request {
    const char *cmdline;     /* NUL-terminated */
    const uint8_t *initrd;   /* NULL for none */
    size_t initrd_size;
    enum kernel_entry entry; /* ENTRY_AUTO picks PVH when offered */
    unsigned ncpus;          /* for the MP table */
    /* When set, kernel_fd and initrd_fd hold the files that img->data and
     * initrd are mapped from, and guest RAM maps their pages instead of
     * copying them (gmem_load_file).  Unset (zero): everything is copied. */
    bool map_files;
    int kernel_fd, initrd_fd;
};

/* Where the boot vCPU starts. */
struct boot_plan {
    enum kernel_entry entry; /* ENTRY_LINUX64 or ENTRY_PVH, never AUTO */
    uint64_t rip;
    uint64_t boot_info;      /* zero page (RSI) or hvm_start_info (EBX) */
    uint64_t initrd_gpa;     /* 0 without an initrd */
    char error[192];         /* why loader_load failed */
};

/* Lays out everything in guest memory.  Returns 0, or:
 *  -E2BIG   command line longer than the kernel accepts
 *  -ENOMEM  kernel + initrd do not fit in guest RAM
 *  -EINVAL  the requested entry is not offered by this kernel
 * with plan->error explaining. */
int loader_load(struct kernel_image *img, const struct gmem *mem,
                const struct boot_request *req, struct boot_plan *plan);

/* Initrd address: as high as possible below both the end of low RAM and the
 * kernel's initrd_addr_max, page aligned, above load_end.  0 if it does not
 * fit. */
uint64_t loader_place_initrd(const struct kernel_image *img, const struct gmem *mem,
                             uint64_t size);

/* boot_params ("zero page") for the Linux 64-bit entry. */
int bootparams_write(const struct kernel_image *img, const struct gmem *mem,
                     uint64_t cmdline_len, uint64_t initrd_gpa, uint64_t initrd_size);

/* hvm_start_info + module list + memory map for the PVH entry. */
int pvh_write(const struct gmem *mem, uint64_t initrd_gpa, uint64_t initrd_size);

/* MP table (Intel MP spec 1.4) listing `ncpus` processors, one IOAPIC and
 * the ISA interrupt routing: how Linux finds its CPUs without ACPI. */
int mptable_write(const struct gmem *mem, unsigned ncpus);

/* Largest vCPU count the MP table can describe (8-bit APIC IDs, the IOAPIC
 * takes the next ID). */
#define MPTABLE_MAX_CPUS 254

#endif
