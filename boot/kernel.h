/* A guest kernel file, parsed and validated before a byte of it is copied
 * into guest memory.  The file is input from the user, possibly hostile:
 * every offset, size and address in it is checked against the file size and
 * for overflow, and every failure names what was wrong. */
#ifndef AIRLOCK_BOOT_KERNEL_H
#define AIRLOCK_BOOT_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/memory/gmem.h"

#define KERNEL_MAX_SEGMENTS 16
#define KERNEL_SETUP_HEADER_MAX 0x7f /* bytes 0x1f1.. of a bzImage */
/* Hard cap on a kernel file: far above any real kernel, well below what
 * could make size arithmetic interesting. */
#define KERNEL_FILE_MAX (512ULL << 20)

enum kernel_format { KERNEL_ELF, KERNEL_BZIMAGE };

/* How the vCPU enters the kernel. */
enum kernel_entry {
    ENTRY_AUTO,    /* PVH when the kernel has a PVH note, else 64-bit */
    ENTRY_LINUX64, /* Linux boot protocol, 64-bit entry, RSI = boot_params */
    ENTRY_PVH,     /* Xen PVH: 32-bit protected mode, EBX = hvm_start_info */
};

struct kernel_segment {
    uint64_t gpa;      /* where it goes */
    uint64_t file_off; /* where it comes from */
    uint64_t filesz;   /* bytes copied from the file */
    uint64_t memsz;    /* bytes in memory (the rest is zeroed) */
};

struct kernel_image {
    enum kernel_format format;
    const uint8_t *data; /* the whole file */
    size_t size;
    struct kernel_segment segs[KERNEL_MAX_SEGMENTS];
    unsigned nsegs;
    uint64_t entry64;         /* 64-bit entry address, 0 if none */
    uint64_t pvh_entry;       /* PVH 32-bit entry address, 0 if none */
    uint64_t load_end;        /* first byte above all the kernel needs */
    uint32_t cmdline_max;     /* longest command line it takes, without NUL */
    uint64_t initrd_addr_max; /* highest address an initrd byte may have */
    bool is_linux;            /* carries Linux's own marks (HdrS, ELF note) */
    /* bzImage: the setup header as found at 0x1f1, for boot_params.hdr */
    uint8_t setup_header[KERNEL_SETUP_HEADER_MAX];
    size_t setup_header_len;
    char error[192];          /* why parsing failed */
};

/* Parses an ELF64 vmlinux or a bzImage held in data[0..size).  Returns 0,
 * or -EINVAL with img->error saying what is wrong. */
int kernel_parse(const uint8_t *data, size_t size, struct kernel_image *img);

/* Format-specific parsers (kernel_parse picks one by magic). */
int elf_parse(const uint8_t *data, size_t size, struct kernel_image *img);
int bzimage_parse(const uint8_t *data, size_t size, struct kernel_image *img);

/* Copies the segments into guest memory.  -EFAULT when one does not fit in
 * RAM (kernel_check_fits says which, first). */
int kernel_load(const struct kernel_image *img, const struct gmem *mem, int fd);

/* 0 when every segment and the kernel's working space fit in RAM; else
 * -ENOMEM with img->error naming the shortfall. */
int kernel_check_fits(struct kernel_image *img, const struct gmem *mem);

/* Records a failure reason; returns -EINVAL so parsers can `return`. */
int kernel_fail(struct kernel_image *img, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
