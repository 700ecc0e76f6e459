#include "boot/kernel.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vmm/memory/layout.h"

int kernel_parse(const uint8_t *data, size_t size, struct kernel_image *img)
{
    memset(img, 0, sizeof(*img));
    if (size > KERNEL_FILE_MAX)
        return kernel_fail(img, "file is %zu bytes, more than the %llu MiB a kernel may have",
                           size, KERNEL_FILE_MAX >> 20);
    if (size >= 4 && memcmp(data, "\x7f" "ELF", 4) == 0)
        return elf_parse(data, size, img);
    /* The bzImage magic sits at 0x202 ("HdrS"); boot_flag 0xaa55 at 0x1fe. */
    if (size >= 0x206 && memcmp(data + 0x202, "HdrS", 4) == 0)
        return bzimage_parse(data, size, img);
    return kernel_fail(img, "not a kernel: neither an ELF file nor a bzImage (no \"HdrS\" at 0x202)");
}

int kernel_check_fits(struct kernel_image *img, const struct gmem *mem)
{
    /* load_end covers every segment (parsers keep them below the MMIO gap),
     * so this one message tells the user how much RAM the kernel needs. */
    if (img->load_end > gmem_low_end(mem)) {
        snprintf(img->error, sizeof(img->error),
                 "kernel needs guest RAM up to %llu MiB, guest has %llu MiB below the MMIO gap",
                 (unsigned long long)((img->load_end + MiB(1) - 1) >> 20),
                 (unsigned long long)(gmem_low_end(mem) >> 20));
        return -ENOMEM;
    }
    for (unsigned i = 0; i < img->nsegs; i++) {
        const struct kernel_segment *s = &img->segs[i];
        if (!gmem_ptr(mem, s->gpa, s->memsz)) {
            snprintf(img->error, sizeof(img->error),
                     "kernel segment %u [%#llx, %#llx) does not fit in guest RAM",
                     i, (unsigned long long)s->gpa,
                     (unsigned long long)(s->gpa + s->memsz));
            return -ENOMEM;
        }
    }
    return 0;
}

int kernel_load(const struct kernel_image *img, const struct gmem *mem, int fd)
{
    for (unsigned i = 0; i < img->nsegs; i++) {
        const struct kernel_segment *s = &img->segs[i];
        uint8_t *dst = gmem_ptr(mem, s->gpa, s->memsz);
        if (!dst)
            return -EFAULT;
        /* The parsers proved file_off + filesz <= size and filesz <= memsz. */
        int e = gmem_load_file(mem, s->gpa, img->data + s->file_off, fd, s->file_off, s->filesz);
        if (e)
            return e;
        memset(dst + s->filesz, 0, s->memsz - s->filesz);
    }
    return 0;
}
