/* boot/bzimage.c on synthetic bzImages (Documentation/x86/boot.rst). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <asm/bootparam.h>

#include "boot/kernel.h"
#include "vmm/memory/layout.h"
#include "tests/unit/helpers.h"

static int parse(const uint8_t *d, size_t n, struct kernel_image *img)
{
    return parse_exact(kernel_parse, d, n, img);
}

START_TEST(valid)
{
    size_t n;
    uint8_t *d = tbz_build(TBZ_SETUP_SECTS, TBZ_PAYLOAD, &n);
    struct kernel_image img;
    ck_assert_int_eq(parse(d, n, &img), 0);
    ck_assert_str_eq(img.error, "");
    ck_assert_int_eq(img.format, KERNEL_BZIMAGE);
    ck_assert_uint_eq(img.entry64, 0x100200);
    ck_assert_uint_eq(img.pvh_entry, 0);
    ck_assert_uint_eq(img.load_end, TBZ_PREF + TBZ_INIT_SIZE);
    ck_assert_uint_eq(img.nsegs, 1);
    ck_assert_uint_eq(img.segs[0].gpa, LAYOUT_BZIMAGE_LOAD);
    ck_assert_uint_eq(img.segs[0].file_off, (TBZ_SETUP_SECTS + 1) * 512);
    ck_assert_uint_eq(img.segs[0].filesz, TBZ_PAYLOAD);
    ck_assert_uint_eq(img.segs[0].memsz, TBZ_PAYLOAD);
    ck_assert_uint_eq(img.cmdline_max, TBZ_CMDLINE_SIZE);
    ck_assert_uint_eq(img.initrd_addr_max, TBZ_INITRD_MAX);
    ck_assert(img.is_linux);
    ck_assert_uint_eq(img.setup_header_len, 0x202 + TBZ_JUMP - 0x1f1);
    ck_assert_mem_eq(img.setup_header, d + 0x1f1, img.setup_header_len);
    /* bzimage_parse directly gives the same answer */
    struct kernel_image img2;
    ck_assert_int_eq(parse_exact(bzimage_parse, d, n, &img2), 0);
    ck_assert_uint_eq(img2.load_end, img.load_end);
    free(d);
}
END_TEST

START_TEST(load_end_variants)
{
    size_t n;
    uint8_t *d = tbz_build(TBZ_SETUP_SECTS, TBZ_PAYLOAD, &n);
    struct kernel_image img;
    /* pref below the aligned load address: the decompressor works at 2 MiB */
    wr64(d, 0x258, 0x100000);
    ck_assert_int_eq(parse(d, n, &img), 0);
    ck_assert_uint_eq(img.load_end, 0x200000 + TBZ_INIT_SIZE);
    /* not relocatable: pref_address it is */
    wr8(d, 0x234, 0);
    wr32(d, 0x230, 3); /* alignment ignored when not relocatable */
    ck_assert_int_eq(parse(d, n, &img), 0);
    ck_assert_uint_eq(img.load_end, 0x100000 + TBZ_INIT_SIZE);
    /* init_size smaller than the payload: the payload decides */
    wr32(d, 0x260, 0x10);
    ck_assert_int_eq(parse(d, n, &img), 0);
    ck_assert_uint_eq(img.load_end, LAYOUT_BZIMAGE_LOAD + TBZ_PAYLOAD);
    /* a short cmdline_size is honoured; a huge one is capped */
    wr32(d, 0x238, 255);
    ck_assert_int_eq(parse(d, n, &img), 0);
    ck_assert_uint_eq(img.cmdline_max, 255);
    wr32(d, 0x238, UINT32_MAX);
    ck_assert_int_eq(parse(d, n, &img), 0);
    ck_assert_uint_eq(img.cmdline_max, LAYOUT_CMDLINE_MAX - 1);
    free(d);
}
END_TEST

START_TEST(bad_boot_flag)
{
    size_t n;
    uint8_t *d = tbz_build(TBZ_SETUP_SECTS, TBZ_PAYLOAD, &n);
    struct kernel_image img;
    wr16(d, 0x1fe, 0x55aa);
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "boot_flag");
    free(d);
}
END_TEST

START_TEST(old_version)
{
    size_t n;
    uint8_t *d = tbz_build(TBZ_SETUP_SECTS, TBZ_PAYLOAD, &n);
    struct kernel_image img;
    wr16(d, 0x206, 0x020b);
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "too old");
    wr16(d, 0x206, 0x0100);
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "too old");
    wr16(d, 0x206, 0x020c); /* 2.12 is the first we accept */
    ck_assert_int_eq(parse(d, n, &img), 0);
    free(d);
}
END_TEST

START_TEST(flags_missing)
{
    size_t n;
    uint8_t *d = tbz_build(TBZ_SETUP_SECTS, TBZ_PAYLOAD, &n);
    struct kernel_image img;
    wr16(d, 0x236, XLF_CAN_BE_LOADED_ABOVE_4G); /* no XLF_KERNEL_64 */
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "XLF_KERNEL_64");
    wr16(d, 0x236, XLF_KERNEL_64);
    wr8(d, 0x211, CAN_USE_HEAP); /* no LOADED_HIGH: a zImage */
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "zImage");
    free(d);
}
END_TEST

START_TEST(setup_sects)
{
    size_t n;
    struct kernel_image img;
    /* 0 means 4 */
    uint8_t *d = tbz_build(0, TBZ_PAYLOAD, &n);
    ck_assert_uint_eq(n, 5 * 512 + TBZ_PAYLOAD);
    ck_assert_int_eq(parse(d, n, &img), 0);
    ck_assert_uint_eq(img.segs[0].file_off, 5 * 512);
    ck_assert_uint_eq(img.segs[0].filesz, TBZ_PAYLOAD);
    free(d);

    /* 255 sectors of setup in a file that is shorter than that */
    d = tbz_build(TBZ_SETUP_SECTS, TBZ_PAYLOAD, &n);
    wr8(d, 0x1f1, 255);
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "past the end of the file");
    /* setup exactly as long as the file: no kernel at all */
    wr8(d, 0x1f1, (uint8_t)((n / 512) - 1));
    ck_assert_uint_eq(n % 512, 0);
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "setup_sects");
    free(d);

    /* and a real 255-sector setup that the file does hold */
    d = tbz_build(255, TBZ_PAYLOAD, &n);
    ck_assert_int_eq(parse(d, n, &img), 0);
    ck_assert_uint_eq(img.segs[0].file_off, 256 * 512);
    free(d);
}
END_TEST

START_TEST(syssize_truncated)
{
    size_t n;
    uint8_t *d = tbz_build(TBZ_SETUP_SECTS, TBZ_PAYLOAD, &n);
    struct kernel_image img;
    wr32(d, 0x1f4, TBZ_PAYLOAD / 16 + 1);
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "syssize");
    wr32(d, 0x1f4, UINT32_MAX); /* *16 must not wrap */
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "syssize");
    wr32(d, 0x1f4, TBZ_PAYLOAD / 16);
    /* the same file cut short by a few bytes */
    ASSERT_PARSE_FAILS(parse(d, n - 1, &img), &img, "truncated");
    free(d);
}
END_TEST

START_TEST(header_length)
{
    size_t n;
    uint8_t *d = tbz_build(TBZ_SETUP_SECTS, TBZ_PAYLOAD, &n);
    struct kernel_image img;
    wr8(d, 0x201, 0x7f); /* 0x281: more than a setup header can be */
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "claims to end");
    wr8(d, 0x201, 0xff);
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "claims to end");
    wr8(d, 0x201, 0x65); /* 0x267: ends before init_size */
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "claims to end");
    wr8(d, 0x201, 0x66); /* 0x268: the minimum */
    ck_assert_int_eq(parse(d, n, &img), 0);
    ck_assert_uint_eq(img.setup_header_len, 0x268 - 0x1f1);
    wr8(d, 0x201, 0x6e); /* 0x270: the maximum the image can hold */
    ck_assert_int_eq(parse(d, n, &img), 0);
    ck_assert_uint_eq(img.setup_header_len, KERNEL_SETUP_HEADER_MAX);
    /* a header that claims to run past the end of the file */
    ASSERT_PARSE_FAILS(parse(d, 0x26c, &img), &img, "truncated inside its setup header");
    free(d);
}
END_TEST

START_TEST(truncated_header)
{
    size_t n;
    uint8_t *d = tbz_build(TBZ_SETUP_SECTS, TBZ_PAYLOAD, &n);
    struct kernel_image img;
    /* "HdrS" present, but the file ends inside the header */
    ASSERT_PARSE_FAILS(parse(d, 0x267, &img), &img, "truncated");
    ASSERT_PARSE_FAILS(parse(d, 0x206, &img), &img, "truncated");
    ASSERT_PARSE_FAILS(parse_exact(bzimage_parse, d, 0x100, &img), &img, "truncated");
    /* too short for the magic: not recognized at all */
    ASSERT_PARSE_FAILS(parse(d, 0x205, &img), &img, "not a kernel");
    memcpy(d + 0x202, "HdrX", 4);
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "not a kernel");
    free(d);
}
END_TEST

START_TEST(alignment)
{
    size_t n;
    uint8_t *d = tbz_build(TBZ_SETUP_SECTS, TBZ_PAYLOAD, &n);
    struct kernel_image img;
    static const uint32_t bad[] = {0, 3, 0x300000, 0x1fffff, 0x80000000};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        wr32(d, 0x230, bad[i]);
        ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "kernel_alignment");
    }
    wr32(d, 0x230, 0x40000000); /* 1 GiB: allowed */
    ck_assert_int_eq(parse(d, n, &img), 0);
    ck_assert_uint_eq(img.load_end, GiB(1) + TBZ_INIT_SIZE);
    wr32(d, 0x230, 1);
    ck_assert_int_eq(parse(d, n, &img), 0);
    free(d);
}
END_TEST

START_TEST(init_size_and_pref)
{
    size_t n;
    uint8_t *d = tbz_build(TBZ_SETUP_SECTS, TBZ_PAYLOAD, &n);
    struct kernel_image img;
    wr32(d, 0x260, 0);
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "init_size");
    wr32(d, 0x260, UINT32_MAX);
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "init_size");
    wr32(d, 0x260, (uint32_t)LAYOUT_MMIO_GAP_START + 1);
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "out of range");
    wr32(d, 0x260, TBZ_INIT_SIZE);
    wr64(d, 0x258, LAYOUT_MMIO_GAP_START);
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "pref_address");
    wr64(d, 0x258, UINT64_MAX);
    ASSERT_PARSE_FAILS(parse(d, n, &img), &img, "pref_address");
    free(d);
}
END_TEST

Suite *bzimage_suite(void)
{
    Suite *s = suite_create("bzimage");
    TCase *tc = tcase_create("bzimage");
    tcase_add_test(tc, valid);
    tcase_add_test(tc, load_end_variants);
    tcase_add_test(tc, bad_boot_flag);
    tcase_add_test(tc, old_version);
    tcase_add_test(tc, flags_missing);
    tcase_add_test(tc, setup_sects);
    tcase_add_test(tc, syssize_truncated);
    tcase_add_test(tc, header_length);
    tcase_add_test(tc, truncated_header);
    tcase_add_test(tc, alignment);
    tcase_add_test(tc, init_size_and_pref);
    suite_add_tcase(s, tc);
    return s;
}
