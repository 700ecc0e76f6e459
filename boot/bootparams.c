/* The Linux "zero page" (struct boot_params), Documentation/x86/boot.rst and
 * zero-page.rst. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <asm/bootparam.h>

#include "vmm/memory/layout.h"
#include "boot/loader.h"
#include "boot/memmap.h"

_Static_assert(sizeof(struct boot_params) == 4096, "boot_params is one page");
_Static_assert(offsetof(struct boot_params, hdr) == 0x1f1, "setup_header at 0x1f1");

int bootparams_write(const struct kernel_image *img, const struct gmem *mem,
                     uint64_t cmdline_len, uint64_t initrd_gpa, uint64_t initrd_size)
{
    struct boot_params bp;
    memset(&bp, 0, sizeof(bp));

    if (img->format == KERNEL_BZIMAGE) {
        /* Start from the kernel's own header, as boot.rst asks loaders to. */
        size_t n = img->setup_header_len < sizeof(bp.hdr) ? img->setup_header_len : sizeof(bp.hdr);
        memcpy(&bp.hdr, img->setup_header, n);
    } else {
        /* A bare vmlinux has no header: provide the fields Linux reads. */
        bp.hdr.boot_flag = 0xaa55;
        bp.hdr.header = 0x53726448; /* "HdrS" */
        bp.hdr.kernel_alignment = 0x1000000;
    }
    bp.hdr.type_of_loader = 0xff; /* undefined loader */
    bp.hdr.cmd_line_ptr = (uint32_t)LAYOUT_CMDLINE_START;
    bp.hdr.cmdline_size = (uint32_t)cmdline_len;
    bp.hdr.ramdisk_image = (uint32_t)initrd_gpa;
    bp.hdr.ramdisk_size = (uint32_t)initrd_size;
    bp.ext_ramdisk_image = (uint32_t)(initrd_gpa >> 32);
    bp.ext_ramdisk_size = (uint32_t)(initrd_size >> 32);

    struct memmap_entry map[MEMMAP_MAX];
    unsigned n = memmap_build(mem, map);
    for (unsigned i = 0; i < n; i++) {
        bp.e820_table[i].addr = map[i].addr;
        bp.e820_table[i].size = map[i].size;
        bp.e820_table[i].type = map[i].type;
    }
    bp.e820_entries = (uint8_t)n;
    return gmem_write(mem, LAYOUT_ZERO_PAGE_START, &bp, sizeof(bp));
}
