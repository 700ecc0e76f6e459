/* boot/loader.c, bootparams.c, pvh.c: what loader_load leaves in a fake
 * guest memory (memmap_build itself: test_memmap.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <asm/bootparam.h>

#include "boot/kernel.h"
#include "vmm/memory/layout.h"
#include "boot/loader.h"
#include "boot/memmap.h"
#include "tests/unit/helpers.h"

#define XEN_ELFNOTE_PHYS32_ENTRY 18
#define PVH_ENTRY (TELF_LOAD_GPA + 0x100)

/* xen/include/public/arch-x86/hvm/start_info.h, version 1 */
struct hvm_start_info {
    uint32_t magic, version, flags, nr_modules;
    uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
    uint32_t memmap_entries, reserved;
};
struct hvm_modlist_entry { uint64_t paddr, size, cmdline_paddr, reserved; };
struct hvm_memmap_table_entry { uint64_t addr, size; uint32_t type, reserved; };

/* A kernel image that owns its file bytes. */
struct tkernel {
    uint8_t *file;
    size_t size;
    struct kernel_image img;
};

static void tk_elf(struct tkernel *k, int with_pvh)
{
    struct telf e;
    telf_valid(&e);
    if (with_pvh) {
        uint32_t entry = PVH_ENTRY;
        telf_add_note(&e, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, &entry, 4);
    }
    k->file = e.data;
    k->size = e.size;
    ck_assert_int_eq(kernel_parse(k->file, k->size, &k->img), 0);
}

static void tk_bz(struct tkernel *k, uint32_t cmdline_size, uint32_t initrd_max)
{
    k->file = tbz_build(TBZ_SETUP_SECTS, TBZ_PAYLOAD, &k->size);
    wr32(k->file, 0x238, cmdline_size);
    wr32(k->file, 0x22c, initrd_max);
    ck_assert_int_eq(kernel_parse(k->file, k->size, &k->img), 0);
}

static int load(struct tkernel *k, const struct gmem *mem, const char *cmdline,
                const uint8_t *initrd, size_t initrd_size, enum kernel_entry entry,
                struct boot_plan *plan)
{
    struct boot_request req = {
        .cmdline = cmdline, .initrd = initrd, .initrd_size = initrd_size,
        .entry = entry, .ncpus = 2,
    };
    return loader_load(&k->img, mem, &req, plan);
}

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    ck_assert_ptr_nonnull(s);
    memset(s, c, n);
    s[n] = 0;
    return s;
}

static uint8_t *pattern(size_t n)
{
    uint8_t *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 5 + (i >> 8) + 1);
    return p;
}

/* e820 / PVH memmap in guest memory agree with memmap_build. */
static void check_e820(const struct boot_params *bp, const struct gmem *mem)
{
    struct memmap_entry map[MEMMAP_MAX];
    unsigned n = memmap_build(mem, map);
    ck_assert_uint_eq(bp->e820_entries, n);
    for (unsigned i = 0; i < n; i++) {
        ck_assert_uint_eq(bp->e820_table[i].addr, map[i].addr);
        ck_assert_uint_eq(bp->e820_table[i].size, map[i].size);
        ck_assert_uint_eq(bp->e820_table[i].type, map[i].type);
    }
}

START_TEST(cmdline_limits)
{
    struct test_mem t;
    struct tkernel k;
    struct boot_plan plan;
    test_mem_init(&t, MiB(16));
    tk_elf(&k, 0);
    char *max = repeat('a', LAYOUT_CMDLINE_MAX - 1), *over = repeat('b', LAYOUT_CMDLINE_MAX);
    ck_assert_int_eq(load(&k, &t.mem, over, NULL, 0, ENTRY_AUTO, &plan), -E2BIG);
    ck_assert_ptr_nonnull(strstr(plan.error, "command line"));
    ck_assert_int_eq(load(&k, &t.mem, max, NULL, 0, ENTRY_AUTO, &plan), 0);
    ck_assert_str_eq(test_mem_at(&t, LAYOUT_CMDLINE_START, LAYOUT_CMDLINE_MAX), max);
    free(k.file);

    /* a bzImage that takes at most 100 bytes */
    tk_bz(&k, 100, TBZ_INITRD_MAX);
    test_mem_free(&t);
    test_mem_init(&t, MiB(32));
    max[100] = 0;
    ck_assert_int_eq(load(&k, &t.mem, max, NULL, 0, ENTRY_AUTO, &plan), 0);
    const struct boot_params *bp = test_mem_at(&t, LAYOUT_ZERO_PAGE_START, sizeof(*bp));
    ck_assert_uint_eq(bp->hdr.cmd_line_ptr, LAYOUT_CMDLINE_START);
    ck_assert_str_eq(test_mem_at(&t, bp->hdr.cmd_line_ptr, 101), max);
    max[100] = 'a';
    max[101] = 0;
    ck_assert_int_eq(load(&k, &t.mem, max, NULL, 0, ENTRY_AUTO, &plan), -E2BIG);
    ck_assert_ptr_nonnull(strstr(plan.error, "at most 100"));
    free(k.file);
    free(max);
    free(over);
    test_mem_free(&t);
}
END_TEST

START_TEST(kernel_too_big)
{
    struct test_mem t;
    struct tkernel k;
    struct boot_plan plan;
    test_mem_init(&t, MiB(2)); /* the ELF segment sits at 2 MiB */
    tk_elf(&k, 0);
    ck_assert_int_eq(load(&k, &t.mem, "", NULL, 0, ENTRY_AUTO, &plan), -ENOMEM);
    ck_assert_ptr_nonnull(strstr(plan.error, "guest RAM"));
    free(k.file);
    test_mem_free(&t);

    test_mem_init(&t, MiB(16)); /* bzImage needs pref + init_size = 24 MiB */
    tk_bz(&k, TBZ_CMDLINE_SIZE, TBZ_INITRD_MAX);
    ck_assert_int_eq(load(&k, &t.mem, "", NULL, 0, ENTRY_AUTO, &plan), -ENOMEM);
    ck_assert_ptr_nonnull(strstr(plan.error, "kernel needs guest RAM"));
    free(k.file);
    test_mem_free(&t);
}
END_TEST

START_TEST(initrd_placement)
{
    struct test_mem t;
    struct tkernel k;
    struct boot_plan plan;
    const size_t isz = 0x5001;
    uint8_t *initrd = pattern(isz);
    test_mem_init(&t, MiB(32));
    tk_elf(&k, 0);
    ck_assert_int_eq(load(&k, &t.mem, "console=ttyS0", initrd, isz, ENTRY_AUTO, &plan), 0);
    uint64_t gpa = plan.initrd_gpa;
    ck_assert_uint_eq(gpa % 4096, 0);
    ck_assert_uint_ge(gpa, k.img.load_end);
    ck_assert_uint_le(gpa + isz, MiB(32));
    ck_assert_uint_eq(gpa, (MiB(32) - isz) & ~0xfffULL); /* as high as it goes */
    ck_assert_mem_eq(test_mem_at(&t, gpa, isz), initrd, isz);
    const struct boot_params *bp = test_mem_at(&t, LAYOUT_ZERO_PAGE_START, sizeof(*bp));
    ck_assert_uint_eq(bp->hdr.ramdisk_image, gpa);
    ck_assert_uint_eq(bp->hdr.ramdisk_size, isz);
    ck_assert_uint_eq(bp->ext_ramdisk_image, 0);
    ck_assert_uint_eq(bp->ext_ramdisk_size, 0);
    free(k.file);

    /* bzImage: below initrd_addr_max (32 MiB - 1) in 64 MiB of RAM */
    test_mem_free(&t);
    test_mem_init(&t, MiB(64));
    tk_bz(&k, TBZ_CMDLINE_SIZE, MiB(32) - 1);
    ck_assert_int_eq(load(&k, &t.mem, "", initrd, isz, ENTRY_AUTO, &plan), 0);
    ck_assert_uint_eq(plan.initrd_gpa, (MiB(32) - isz) & ~0xfffULL);
    ck_assert_uint_ge(plan.initrd_gpa, k.img.load_end);
    ck_assert_mem_eq(test_mem_at(&t, plan.initrd_gpa, isz), initrd, isz);
    ck_assert_uint_eq(loader_place_initrd(&k.img, &t.mem, 0), 0);
    free(k.file);
    free(initrd);
    test_mem_free(&t);
}
END_TEST

START_TEST(initrd_too_big)
{
    struct test_mem t;
    struct tkernel k;
    struct boot_plan plan;
    test_mem_init(&t, MiB(16));
    tk_elf(&k, 0); /* load_end just above 2 MiB */
    size_t isz = MiB(14);
    uint8_t *initrd = pattern(isz);
    ck_assert_int_eq(load(&k, &t.mem, "", initrd, isz, ENTRY_AUTO, &plan), -ENOMEM);
    ck_assert_ptr_nonnull(strstr(plan.error, "initrd"));
    ck_assert_int_eq(load(&k, &t.mem, "", initrd, MiB(13), ENTRY_AUTO, &plan), 0);
    free(initrd);
    free(k.file);
    /* larger than RAM, and larger than the address space below the cap */
    ck_assert_uint_eq(loader_place_initrd(&k.img, &t.mem, MiB(17)), 0);
    ck_assert_uint_eq(loader_place_initrd(&k.img, &t.mem, UINT64_MAX), 0);
    test_mem_free(&t);

    /* bzImage: room in RAM, but not between load_end (24 MiB) and the cap */
    test_mem_init(&t, MiB(64));
    tk_bz(&k, TBZ_CMDLINE_SIZE, MiB(32) - 1);
    ck_assert_uint_eq(loader_place_initrd(&k.img, &t.mem, MiB(8) + 1), 0);
    ck_assert_uint_eq(loader_place_initrd(&k.img, &t.mem, MiB(8)), MiB(24));
    free(k.file);
    test_mem_free(&t);
}
END_TEST

START_TEST(pvh_requested_without_note)
{
    struct test_mem t;
    struct tkernel k;
    struct boot_plan plan;
    test_mem_init(&t, MiB(16));
    tk_elf(&k, 0);
    ck_assert_int_eq(load(&k, &t.mem, "", NULL, 0, ENTRY_PVH, &plan), -EINVAL);
    ck_assert_ptr_nonnull(strstr(plan.error, "PVH"));
    free(k.file);
    tk_bz(&k, TBZ_CMDLINE_SIZE, TBZ_INITRD_MAX);
    ck_assert_int_eq(load(&k, &t.mem, "", NULL, 0, ENTRY_PVH, &plan), -EINVAL);
    free(k.file);
    test_mem_free(&t);
}
END_TEST

START_TEST(elf_linux64_boot_params)
{
    struct test_mem t;
    struct tkernel k;
    struct boot_plan plan;
    test_mem_init(&t, MiB(16));
    /* stale bytes where .bss goes: the loader must zero them */
    memset(test_mem_at(&t, TELF_LOAD_GPA, TELF_LOAD_MEMSZ), 0xaa, TELF_LOAD_MEMSZ);
    tk_elf(&k, 1);
    ck_assert_int_eq(load(&k, &t.mem, "quiet", NULL, 0, ENTRY_LINUX64, &plan), 0);
    ck_assert_int_eq(plan.entry, ENTRY_LINUX64);
    ck_assert_uint_eq(plan.rip, TELF_LOAD_GPA);
    ck_assert_uint_eq(plan.boot_info, LAYOUT_ZERO_PAGE_START);
    ck_assert_uint_eq(plan.initrd_gpa, 0);

    const uint8_t *seg = test_mem_at(&t, TELF_LOAD_GPA, TELF_LOAD_MEMSZ);
    for (uint64_t i = 0; i < TELF_LOAD_FILESZ; i++)
        ck_assert_uint_eq(seg[i], telf_pattern(TELF_LOAD_GPA, i));
    for (uint64_t i = TELF_LOAD_FILESZ; i < TELF_LOAD_MEMSZ; i++)
        ck_assert_uint_eq(seg[i], 0);

    const struct boot_params *bp = test_mem_at(&t, LAYOUT_ZERO_PAGE_START, sizeof(*bp));
    ck_assert_uint_eq(bp->hdr.header, 0x53726448);
    ck_assert_uint_eq(bp->hdr.boot_flag, 0xaa55);
    ck_assert_uint_eq(bp->hdr.type_of_loader, 0xff);
    ck_assert_uint_eq(bp->hdr.cmd_line_ptr, LAYOUT_CMDLINE_START);
    ck_assert_uint_eq(bp->ext_cmd_line_ptr, 0);
    ck_assert_uint_eq(bp->hdr.ramdisk_image, 0);
    ck_assert_uint_eq(bp->hdr.ramdisk_size, 0);
    ck_assert_str_eq(test_mem_at(&t, LAYOUT_CMDLINE_START, 6), "quiet");
    check_e820(bp, &t.mem);
    /* the MP table and the page tables went in too */
    ck_assert_mem_eq(test_mem_at(&t, LAYOUT_MPTABLE_START, 4), "_MP_", 4);
    ck_assert_uint_ne(rd64le(test_mem_at(&t, LAYOUT_PML4_START, 8)), 0);
    free(k.file);
    test_mem_free(&t);
}
END_TEST

START_TEST(bzimage_boot_params)
{
    struct test_mem t;
    struct tkernel k;
    struct boot_plan plan;
    const size_t isz = 4096 * 3;
    uint8_t *initrd = pattern(isz);
    test_mem_init(&t, MiB(32));
    tk_bz(&k, TBZ_CMDLINE_SIZE, TBZ_INITRD_MAX);
    ck_assert_int_eq(load(&k, &t.mem, "root=/dev/vda", initrd, isz, ENTRY_AUTO, &plan), 0);
    ck_assert_int_eq(plan.entry, ENTRY_LINUX64);
    ck_assert_uint_eq(plan.rip, LAYOUT_BZIMAGE_LOAD + 0x200);
    ck_assert_uint_eq(plan.boot_info, LAYOUT_ZERO_PAGE_START);
    /* the protected-mode part, at 1 MiB */
    ck_assert_mem_eq(test_mem_at(&t, LAYOUT_BZIMAGE_LOAD, TBZ_PAYLOAD),
                     k.file + (TBZ_SETUP_SECTS + 1) * 512, TBZ_PAYLOAD);

    const uint8_t *raw = test_mem_at(&t, LAYOUT_ZERO_PAGE_START, 4096);
    const struct boot_params *bp = (const void *)raw;
    /* the kernel's own setup header, byte for byte, except what the loader
     * fills in: type_of_loader, ramdisk_*, cmd_line_ptr, cmdline_size */
    for (size_t off = 0x1f1; off < 0x202 + TBZ_JUMP; off++) {
        if (off == 0x210 || (off >= 0x218 && off < 0x220) || (off >= 0x228 && off < 0x22c) ||
            (off >= 0x238 && off < 0x23c))
            continue;
        ck_assert_msg(raw[off] == k.file[off], "zero page byte %#zx: %#x, kernel has %#x", off,
                      raw[off], k.file[off]);
    }
    ck_assert_mem_eq(raw + 0x202, "HdrS", 4);
    ck_assert_uint_eq(bp->hdr.version, 0x020f);
    ck_assert_uint_eq(bp->hdr.pref_address, TBZ_PREF);
    ck_assert_uint_eq(bp->hdr.init_size, TBZ_INIT_SIZE);
    ck_assert_uint_eq(bp->hdr.xloadflags, XLF_KERNEL_64);
    ck_assert_uint_eq(bp->hdr.type_of_loader, 0xff);
    ck_assert_uint_eq(bp->hdr.cmd_line_ptr, LAYOUT_CMDLINE_START);
    ck_assert_uint_eq(bp->hdr.ramdisk_image, plan.initrd_gpa);
    ck_assert_uint_eq(bp->hdr.ramdisk_size, isz);
    ck_assert_mem_eq(test_mem_at(&t, plan.initrd_gpa, isz), initrd, isz);
    check_e820(bp, &t.mem);
    free(initrd);
    free(k.file);
    test_mem_free(&t);
}
END_TEST

START_TEST(pvh_start_info)
{
    struct test_mem t;
    struct tkernel k;
    struct boot_plan plan;
    const size_t isz = 0x1234;
    uint8_t *initrd = pattern(isz);
    test_mem_init(&t, MiB(16));
    tk_elf(&k, 1);
    ck_assert_int_eq(load(&k, &t.mem, "pvh", initrd, isz, ENTRY_AUTO, &plan), 0);
    ck_assert_int_eq(plan.entry, ENTRY_PVH);
    ck_assert_uint_eq(plan.rip, PVH_ENTRY);
    ck_assert_uint_eq(plan.boot_info, LAYOUT_PVH_INFO_START);

    const struct hvm_start_info *si = test_mem_at(&t, LAYOUT_PVH_INFO_START, sizeof(*si));
    ck_assert_uint_eq(si->magic, 0x336ec578);
    ck_assert_uint_eq(si->version, 1);
    ck_assert_uint_eq(si->cmdline_paddr, LAYOUT_CMDLINE_START);
    ck_assert_str_eq(test_mem_at(&t, si->cmdline_paddr, 4), "pvh");
    ck_assert_uint_eq(si->rsdp_paddr, 0);
    ck_assert_uint_eq(si->nr_modules, 1);
    const struct hvm_modlist_entry *mod = test_mem_at(&t, si->modlist_paddr, sizeof(*mod));
    ck_assert_uint_eq(mod->paddr, plan.initrd_gpa);
    ck_assert_uint_eq(mod->size, isz);
    ck_assert_mem_eq(test_mem_at(&t, mod->paddr, isz), initrd, isz);

    struct memmap_entry map[MEMMAP_MAX];
    unsigned n = memmap_build(&t.mem, map);
    ck_assert_uint_eq(si->memmap_entries, n);
    const struct hvm_memmap_table_entry *mm =
        test_mem_at(&t, si->memmap_paddr, n * sizeof(*mm));
    for (unsigned i = 0; i < n; i++) {
        ck_assert_uint_eq(mm[i].addr, map[i].addr);
        ck_assert_uint_eq(mm[i].size, map[i].size);
        ck_assert_uint_eq(mm[i].type, map[i].type);
    }
    /* no zero page for a PVH boot */
    ck_assert_uint_eq(rd32le(test_mem_at(&t, LAYOUT_ZERO_PAGE_START + 0x202, 4)), 0);

    /* without an initrd, no module */
    ck_assert_int_eq(load(&k, &t.mem, "", NULL, 0, ENTRY_PVH, &plan), 0);
    si = test_mem_at(&t, LAYOUT_PVH_INFO_START, sizeof(*si));
    ck_assert_uint_eq(si->nr_modules, 0);
    ck_assert_uint_eq(si->modlist_paddr, 0);
    free(initrd);
    free(k.file);
    test_mem_free(&t);
}
END_TEST

START_TEST(e820_above_4g)
{
    struct gmem m;
    struct tkernel k;
    struct boot_plan plan;
    ck_assert_int_eq(gmem_init(&m, 6144), 0); /* 3 GiB low, 3 GiB from 4 GiB */
    tk_elf(&k, 0);
    ck_assert_int_eq(load(&k, &m, "", NULL, 0, ENTRY_AUTO, &plan), 0);
    struct boot_params bp;
    ck_assert_int_eq(gmem_read(&m, &bp, LAYOUT_ZERO_PAGE_START, sizeof(bp)), 0);
    check_e820(&bp, &m);
    ck_assert_uint_eq(bp.e820_entries, 4);
    ck_assert_uint_eq(bp.e820_table[2].addr + bp.e820_table[2].size, LAYOUT_MMIO_GAP_START);
    ck_assert_uint_eq(bp.e820_table[3].addr, GiB(4));
    ck_assert_uint_eq(bp.e820_table[3].size, GiB(3));
    free(k.file);
    gmem_destroy(&m);
}
END_TEST

Suite *loader_suite(void)
{
    Suite *s = suite_create("loader");
    TCase *tc = tcase_create("loader");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, cmdline_limits);
    tcase_add_test(tc, kernel_too_big);
    tcase_add_test(tc, initrd_placement);
    tcase_add_test(tc, initrd_too_big);
    tcase_add_test(tc, pvh_requested_without_note);
    tcase_add_test(tc, elf_linux64_boot_params);
    tcase_add_test(tc, bzimage_boot_params);
    tcase_add_test(tc, pvh_start_info);
    tcase_add_test(tc, e820_above_4g);
    suite_add_tcase(s, tc);
    return s;
}
