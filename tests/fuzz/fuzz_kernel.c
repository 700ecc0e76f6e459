/* libFuzzer target: a hostile kernel file through the whole loader.  The
 * input is the file; kernel_parse must reject it cleanly or describe it, and
 * loader_load must then place it (or refuse) without touching anything
 * outside guest RAM.  ASan catches any stray read or write. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boot/kernel.h"
#include "boot/loader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct gmem mem;
    static int ready;
    if (!ready) {
        /* 64 MiB, lazily backed: enough for the probe guests and small
         * synthetic kernels; bigger ones must be refused, not crash. */
        if (gmem_init(&mem, 64))
            abort();
        ready = 1;
    }
    /* An exact-size heap copy, so reading one byte past the file trips ASan. */
    uint8_t *file = malloc(size ? size : 1);
    memcpy(file, data, size);
    struct kernel_image img;
    if (kernel_parse(file, size, &img) == 0) {
        static const uint8_t initrd[4096];
        struct boot_request req = {
            .cmdline = "console=ttyS0", .initrd = initrd, .initrd_size = sizeof(initrd),
            .entry = ENTRY_AUTO, .ncpus = 2,
        };
        struct boot_plan plan;
        if (loader_load(&img, &mem, &req, &plan) == 0 &&
            plan.rip != img.entry64 && plan.rip != img.pvh_entry)
            abort(); /* the entry must be one the kernel declared */
    } else if (img.error[0] == 0) {
        abort(); /* every rejection says why */
    }
    free(file);
    return 0;
}
