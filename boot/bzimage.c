/* bzImage: the compressed Linux image with a real-mode setup part in front.
 * Field offsets and meanings follow Documentation/x86/boot.rst.  We use the
 * 64-bit entry (protected-mode part at LAYOUT_BZIMAGE_LOAD, entry at +0x200),
 * which needs boot protocol 2.12+ with XLF_KERNEL_64. */
#include <string.h>

#include <asm/bootparam.h>

#include "boot/kernel.h"
#include "vmm/memory/layout.h"

#define HDR_START        0x1f1 /* struct setup_header starts here */
#define HDR_JUMP_LEN     0x201 /* byte after the jump: header length - 0x202 + ... */
#define HDR_MIN_END      0x268 /* end of the 2.12 fields we read (init_size) */
#define BZ_MIN_VERSION   0x020c
#define BZ_ENTRY64_OFF   0x200

static uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* Copies the setup header out of the file once; later checks read the copy. */
static int bz_read_header(struct kernel_image *img)
{
    const uint8_t *d = img->data;
    if (img->size < HDR_MIN_END)
        return kernel_fail(img, "bzImage truncated inside its setup header (%zu bytes)", img->size);
    size_t hdr_end = 0x202 + (size_t)d[HDR_JUMP_LEN];
    if (hdr_end < HDR_MIN_END || hdr_end - HDR_START > KERNEL_SETUP_HEADER_MAX)
        return kernel_fail(img, "bzImage setup header claims to end at %#zx (expected %#x..%#x)",
                           hdr_end, HDR_MIN_END, HDR_START + KERNEL_SETUP_HEADER_MAX);
    if (hdr_end > img->size)
        return kernel_fail(img, "bzImage truncated inside its setup header");
    img->setup_header_len = hdr_end - HDR_START;
    memcpy(img->setup_header, d + HDR_START, img->setup_header_len);
    return 0;
}

/* A field of the copied header, by its offset in the file. */
#define HDR(img, off) ((img)->setup_header + ((off) - HDR_START))

int bzimage_parse(const uint8_t *data, size_t size, struct kernel_image *img)
{
    memset(img, 0, sizeof(*img));
    img->data = data;
    img->size = size;
    img->format = KERNEL_BZIMAGE;
    int err = bz_read_header(img);
    if (err)
        return err;

    if (rd16(HDR(img, 0x1fe)) != 0xaa55)
        return kernel_fail(img, "bzImage boot_flag is %#x, not 0xaa55", rd16(HDR(img, 0x1fe)));
    uint16_t version = rd16(HDR(img, 0x206));
    if (version < BZ_MIN_VERSION)
        return kernel_fail(img, "bzImage boot protocol %u.%02u is too old (need 2.12+)",
                           version >> 8, version & 0xff);
    if (!(*HDR(img, 0x236) & XLF_KERNEL_64))
        return kernel_fail(img, "bzImage has no 64-bit entry point (xloadflags lacks XLF_KERNEL_64)");
    if (!(*HDR(img, 0x211) & LOADED_HIGH))
        return kernel_fail(img, "bzImage is not a high-loaded (bzImage) kernel: zImage is not supported");

    unsigned setup_sects = *HDR(img, 0x1f1);
    if (setup_sects == 0)
        setup_sects = 4; /* boot.rst: 0 means 4 */
    uint64_t payload_off = ((uint64_t)setup_sects + 1) * 512;
    if (payload_off >= size)
        return kernel_fail(img, "bzImage setup_sects=%u puts the kernel at %#llx, past the end of the file (%zu bytes)",
                           setup_sects, (unsigned long long)payload_off, size);
    uint64_t payload = size - payload_off;
    uint64_t syssize = (uint64_t)rd32(HDR(img, 0x1f4)) * 16;
    if (syssize > payload)
        return kernel_fail(img, "bzImage syssize says %llu bytes of kernel, the file holds %llu: truncated?",
                           (unsigned long long)syssize, (unsigned long long)payload);

    uint32_t align = rd32(HDR(img, 0x230));
    uint64_t pref = rd64(HDR(img, 0x258));
    uint32_t init_size = rd32(HDR(img, 0x260));
    int relocatable = *HDR(img, 0x234);
    if (relocatable && (align == 0 || (align & (align - 1)) || align > GiB(1)))
        return kernel_fail(img, "bzImage kernel_alignment %#x is not a power of two up to 1 GiB", align);
    if (pref >= LAYOUT_MMIO_GAP_START || init_size == 0 || init_size > LAYOUT_MMIO_GAP_START)
        return kernel_fail(img, "bzImage pref_address %#llx / init_size %#x out of range",
                           (unsigned long long)pref, init_size);
    /* The decompressor works at max(load aligned up, pref_address) for
     * init_size bytes (arch/x86/boot/compressed/head_64.S). */
    uint64_t work = pref;
    if (relocatable) {
        uint64_t aligned = (LAYOUT_BZIMAGE_LOAD + align - 1) & ~((uint64_t)align - 1);
        if (aligned > work)
            work = aligned;
    }
    img->load_end = work + init_size;
    if (LAYOUT_BZIMAGE_LOAD + payload > img->load_end)
        img->load_end = LAYOUT_BZIMAGE_LOAD + payload;

    img->segs[0] = (struct kernel_segment){
        .gpa = LAYOUT_BZIMAGE_LOAD, .file_off = payload_off,
        .filesz = payload, .memsz = payload,
    };
    img->nsegs = 1;
    img->entry64 = LAYOUT_BZIMAGE_LOAD + BZ_ENTRY64_OFF;
    uint32_t cmdline_size = rd32(HDR(img, 0x238));
    img->cmdline_max = cmdline_size < LAYOUT_CMDLINE_MAX - 1 ? cmdline_size : LAYOUT_CMDLINE_MAX - 1;
    img->initrd_addr_max = rd32(HDR(img, 0x22c));
    img->is_linux = 1;
    return 0;
}
