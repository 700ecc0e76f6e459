/* boot/elf.c through kernel_parse/elf_parse, on synthetic ELF64 files. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "boot/kernel.h"
#include "vmm/memory/layout.h"
#include "tests/unit/helpers.h"

#define XEN_ELFNOTE_PHYS32_ENTRY 18

static int parse(struct telf *e, struct kernel_image *img)
{
    return parse_exact(kernel_parse, e->data, e->size, img);
}

START_TEST(valid)
{
    struct telf e;
    struct kernel_image img;
    telf_valid(&e);
    telf_ehdr(&e)->e_entry = TELF_LOAD_GPA + 0x10;
    ck_assert_int_eq(parse(&e, &img), 0);
    ck_assert_str_eq(img.error, "");
    ck_assert_int_eq(img.format, KERNEL_ELF);
    ck_assert_uint_eq(img.entry64, TELF_LOAD_GPA + 0x10);
    ck_assert_uint_eq(img.pvh_entry, 0);
    ck_assert_uint_eq(img.nsegs, 1);
    ck_assert_uint_eq(img.segs[0].gpa, TELF_LOAD_GPA);
    ck_assert_uint_eq(img.segs[0].file_off, telf_phdr(&e, 0)->p_offset);
    ck_assert_uint_eq(img.segs[0].filesz, TELF_LOAD_FILESZ);
    ck_assert_uint_eq(img.segs[0].memsz, TELF_LOAD_MEMSZ);
    ck_assert_uint_eq(img.load_end, TELF_LOAD_GPA + TELF_LOAD_MEMSZ);
    ck_assert_uint_eq(img.cmdline_max, LAYOUT_CMDLINE_MAX - 1);
    ck_assert(!img.is_linux);
    telf_free(&e);
}
END_TEST

START_TEST(two_segments_and_empty_load)
{
    struct telf e;
    struct kernel_image img;
    telf_valid(&e);
    telf_add(&e, PT_LOAD, 0x400000, NULL, 0x100, 0x3000);
    telf_add(&e, PT_LOAD, 0x100000, NULL, 0, 0);   /* memsz 0: ignored */
    telf_add(&e, PT_GNU_STACK, 0, NULL, 0, 0);     /* other types: ignored */
    ck_assert_int_eq(parse(&e, &img), 0);
    ck_assert_uint_eq(img.nsegs, 2);
    ck_assert_uint_eq(img.load_end, 0x403000);
    telf_free(&e);
}
END_TEST

START_TEST(bad_magic)
{
    struct telf e;
    struct kernel_image img;
    telf_valid(&e);
    e.data[1] = 'X';
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "not a kernel");
    ASSERT_PARSE_FAILS(parse_exact(kernel_parse, e.data, 3, &img), &img, "not a kernel");
    ASSERT_PARSE_FAILS(parse_exact(kernel_parse, e.data, 0, &img), &img, "not a kernel");
    telf_free(&e);
}
END_TEST

START_TEST(file_too_large)
{
    /* The size cap comes before anything is read, but hand it real
     * (lazily mapped) memory anyway. */
    size_t n = KERNEL_FILE_MAX + 1;
    uint8_t *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ck_assert_ptr_ne(p, MAP_FAILED);
    struct telf e;
    telf_valid(&e);
    memcpy(p, e.data, e.size); /* a valid ELF, then lots of zeros */
    struct kernel_image img;
    ASSERT_PARSE_FAILS(kernel_parse(p, n, &img), &img, "MiB a kernel may have");
    ck_assert_int_eq(kernel_parse(p, e.size, &img), 0);
    telf_free(&e);
    munmap(p, n);
}
END_TEST

START_TEST(bad_header_fields)
{
    struct telf e;
    struct kernel_image img;
    telf_valid(&e);
    Elf64_Ehdr *eh = telf_ehdr(&e);

    eh->e_ident[EI_CLASS] = ELFCLASS32;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "64-bit");
    eh->e_ident[EI_CLASS] = ELFCLASS64;
    eh->e_ident[EI_DATA] = ELFDATA2MSB;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "little-endian");
    eh->e_ident[EI_DATA] = ELFDATA2LSB;

    eh->e_machine = EM_386;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "not x86-64");
    eh->e_machine = EM_AARCH64;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "not x86-64");
    eh->e_machine = EM_X86_64;

    eh->e_type = ET_DYN;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "ET_EXEC");
    eh->e_type = ET_EXEC;
    ck_assert_int_eq(parse(&e, &img), 0); /* and back to valid */

    /* an ELF header cut short */
    ASSERT_PARSE_FAILS(parse_exact(kernel_parse, e.data, sizeof(Elf64_Ehdr) - 1, &img), &img,
                       "truncated ELF header");
    telf_free(&e);
}
END_TEST

START_TEST(bad_program_header_table)
{
    struct telf e;
    struct kernel_image img;
    telf_valid(&e);
    Elf64_Ehdr *eh = telf_ehdr(&e);

    eh->e_phentsize = sizeof(Elf64_Phdr) - 1;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "program headers");
    eh->e_phentsize = sizeof(Elf32_Phdr);
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "program headers");
    eh->e_phentsize = sizeof(Elf64_Phdr);

    eh->e_phnum = 0;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "program headers");
    eh->e_phnum = 0xffff;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "program headers");
    eh->e_phnum = 65; /* one past the parser's cap */
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "program headers");
    eh->e_phnum = 1;

    eh->e_phoff = e.size; /* table starts at the end of the file */
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "extend past the end");
    eh->e_phoff = e.size - sizeof(Elf64_Phdr) + 1; /* last byte past the end */
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "extend past the end");
    eh->e_phoff = UINT64_MAX - 8; /* offset + size wraps */
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "extend past the end");
    telf_free(&e);
}
END_TEST

START_TEST(bad_segments)
{
    struct telf e;
    struct kernel_image img;
    telf_valid(&e);
    Elf64_Phdr *ph = telf_phdr(&e, 0);
    const Elf64_Phdr good = *ph;

    ph->p_filesz = e.size - ph->p_offset + 1; /* truncated file */
    ph->p_memsz = ph->p_filesz;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "truncated");
    *ph = good;
    ph->p_offset = UINT64_MAX - 0x10; /* offset + filesz wraps */
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "past the end of the file");
    *ph = good;

    ph->p_memsz = ph->p_filesz - 1;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "exceeds memory size");
    *ph = good;

    ph->p_paddr = UINT64_MAX - 0xfff; /* paddr + memsz wraps */
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "ends beyond");
    ph->p_paddr = LAYOUT_MMIO_GAP_START - ph->p_memsz + 1; /* into the MMIO gap */
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "ends beyond");
    *ph = good;
    ph->p_memsz = UINT64_MAX; /* huge memsz */
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "ends beyond");
    *ph = good;

    ph->p_paddr = LAYOUT_HIMEM_START - 0x1000; /* below 1 MiB */
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "below 1 MiB");
    ph->p_paddr = 0;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "below 1 MiB");
    *ph = good;
    ck_assert_int_eq(parse(&e, &img), 0);
    telf_free(&e);
}
END_TEST

START_TEST(overlapping_segments)
{
    struct telf e;
    struct kernel_image img;
    telf_valid(&e); /* [0x200000, 0x202000) */
    unsigned i = telf_add(&e, PT_LOAD, TELF_LOAD_GPA + TELF_LOAD_MEMSZ - 1, NULL, 0x10, 0x10);
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "overlap");
    telf_phdr(&e, i)->p_paddr = TELF_LOAD_GPA - 0x8; /* ends inside the first */
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "overlap");
    telf_phdr(&e, i)->p_paddr = TELF_LOAD_GPA; /* exact duplicate */
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "overlap");
    telf_phdr(&e, i)->p_paddr = TELF_LOAD_GPA + TELF_LOAD_MEMSZ; /* adjacent: fine */
    ck_assert_int_eq(parse(&e, &img), 0);
    telf_free(&e);
}
END_TEST

START_TEST(entry_outside)
{
    struct telf e;
    struct kernel_image img;
    telf_valid(&e);
    telf_ehdr(&e)->e_entry = TELF_LOAD_GPA - 1;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "not inside a loaded segment");
    telf_ehdr(&e)->e_entry = TELF_LOAD_GPA + TELF_LOAD_FILESZ; /* in .bss only */
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "not inside a loaded segment");
    telf_ehdr(&e)->e_entry = 0;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "not inside a loaded segment");
    telf_ehdr(&e)->e_entry = TELF_LOAD_GPA + TELF_LOAD_FILESZ - 1;
    ck_assert_int_eq(parse(&e, &img), 0);
    telf_free(&e);
}
END_TEST

START_TEST(nothing_to_load)
{
    struct telf e;
    struct kernel_image img;
    telf_init(&e, TELF_LOAD_GPA, 4);
    telf_add_note(&e, "Linux", 1, "x", 1);
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "nothing to load");
    telf_free(&e);
}
END_TEST

START_TEST(too_many_segments)
{
    struct telf e;
    struct kernel_image img;
    telf_init(&e, TELF_LOAD_GPA, KERNEL_MAX_SEGMENTS + 2);
    for (unsigned i = 0; i < KERNEL_MAX_SEGMENTS; i++)
        telf_add(&e, PT_LOAD, TELF_LOAD_GPA + i * 0x1000ULL, NULL, 0x10, 0x1000);
    ck_assert_int_eq(parse(&e, &img), 0);
    ck_assert_uint_eq(img.nsegs, KERNEL_MAX_SEGMENTS);
    telf_add(&e, PT_LOAD, 0x1000000, NULL, 0x10, 0x1000);
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "more than 16 loadable");
    telf_free(&e);
}
END_TEST

START_TEST(pvh_note)
{
    struct telf e;
    struct kernel_image img;
    uint32_t entry4 = TELF_LOAD_GPA + 0x40;
    uint64_t entry8 = TELF_LOAD_GPA + 0x80;

    telf_valid(&e);
    telf_add_note(&e, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, &entry4, 4);
    ck_assert_int_eq(parse(&e, &img), 0);
    ck_assert_uint_eq(img.pvh_entry, entry4);
    ck_assert_uint_eq(img.entry64, TELF_LOAD_GPA);
    telf_free(&e);

    telf_valid(&e);
    telf_add_note(&e, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, &entry8, 8);
    ck_assert_int_eq(parse(&e, &img), 0);
    ck_assert_uint_eq(img.pvh_entry, entry8);
    telf_free(&e);

    /* other Xen note types, and another vendor's type 18, are not PVH */
    telf_valid(&e);
    telf_add_note(&e, "Xen", 17, &entry4, 4);
    telf_add_note(&e, "GNU", XEN_ELFNOTE_PHYS32_ENTRY, &entry4, 4);
    ck_assert_int_eq(parse(&e, &img), 0);
    ck_assert_uint_eq(img.pvh_entry, 0);
    telf_free(&e);
}
END_TEST

START_TEST(pvh_note_bad)
{
    struct telf e;
    struct kernel_image img;
    uint64_t entry = TELF_LOAD_GPA + TELF_LOAD_FILESZ + 4; /* in .bss */
    telf_valid(&e);
    telf_add_note(&e, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, &entry, 8);
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "PVH entry");
    telf_free(&e);

    entry = 0x1000; /* below every segment */
    telf_valid(&e);
    telf_add_note(&e, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, &entry, 8);
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "not inside a loaded segment");
    telf_free(&e);

    entry = GiB(4) + TELF_LOAD_GPA; /* not a 32-bit address */
    telf_valid(&e);
    telf_add_note(&e, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, &entry, 8);
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "not a 32-bit address");
    telf_free(&e);

    entry = 0;
    telf_valid(&e);
    telf_add_note(&e, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, &entry, 8);
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "not a 32-bit address");
    telf_free(&e);

    entry = TELF_LOAD_GPA;
    telf_valid(&e);
    telf_add_note(&e, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, &entry, 2);
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "expected 4 or 8");
    telf_free(&e);
}
END_TEST

/* A note whose sizes run past its PT_NOTE segment. */
static void check_note_overrun(uint32_t namesz, uint32_t descsz, uint64_t seg_len_delta)
{
    struct telf e;
    struct kernel_image img;
    uint8_t buf[64];
    uint32_t entry = TELF_LOAD_GPA;
    size_t n = note_encode(buf, "Xen", 4, XEN_ELFNOTE_PHYS32_ENTRY, &entry, 4);
    memcpy(buf, &namesz, 4);
    memcpy(buf + 4, &descsz, 4);
    telf_valid(&e);
    unsigned i = telf_add(&e, PT_NOTE, 0, buf, n, 0);
    telf_phdr(&e, i)->p_filesz -= seg_len_delta;
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "runs past its segment");
    telf_free(&e);
}

START_TEST(note_overruns)
{
    check_note_overrun(4, 5, 0);            /* desc one padded word too long */
    check_note_overrun(4, 4, 1);            /* segment one byte short */
    check_note_overrun(9, 4, 0);            /* name too long */
    check_note_overrun(UINT32_MAX, 4, 0);   /* namesz rounds up past 4 GiB */
    check_note_overrun(4, UINT32_MAX, 0);
    check_note_overrun(UINT32_MAX, UINT32_MAX, 0);
}
END_TEST

START_TEST(note_segment_truncated)
{
    struct telf e;
    struct kernel_image img;
    uint32_t entry = TELF_LOAD_GPA;
    telf_valid(&e);
    unsigned i = telf_add_note(&e, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, &entry, 4);
    telf_phdr(&e, i)->p_filesz += 1; /* PT_NOTE runs past the end of the file */
    ASSERT_PARSE_FAILS(parse(&e, &img), &img, "note segment");
    telf_phdr(&e, i)->p_filesz = 8; /* shorter than a note header: nothing to scan */
    ck_assert_int_eq(parse(&e, &img), 0);
    ck_assert_uint_eq(img.pvh_entry, 0);
    telf_free(&e);
}
END_TEST

START_TEST(linux_note)
{
    struct telf e;
    struct kernel_image img;
    uint32_t version = 0x060100;
    telf_valid(&e);
    telf_add_note(&e, "Linux", 0x100, &version, 4);
    ck_assert_int_eq(parse(&e, &img), 0);
    ck_assert(img.is_linux);
    telf_free(&e);

    /* "Linu" (namesz 5) is not Linux's */
    telf_valid(&e);
    telf_add_note(&e, "Linu", 0x100, &version, 4);
    ck_assert_int_eq(parse(&e, &img), 0);
    ck_assert(!img.is_linux);
    telf_free(&e);
}
END_TEST

START_TEST(several_notes_in_one_segment)
{
    struct telf e;
    struct kernel_image img;
    uint8_t buf[128];
    uint32_t v = 1, entry = TELF_LOAD_GPA + 0x20;
    size_t n = note_encode(buf, "GNU", 4, 3, "abcdefgh", 5);
    n += note_encode(buf + n, "Linux", 6, 6, &v, 4);
    n += note_encode(buf + n, "Xen", 4, XEN_ELFNOTE_PHYS32_ENTRY, &entry, 4);
    telf_valid(&e);
    telf_add(&e, PT_NOTE, 0, buf, n, 0);
    ck_assert_int_eq(parse(&e, &img), 0);
    ck_assert(img.is_linux);
    ck_assert_uint_eq(img.pvh_entry, entry);
    telf_free(&e);
}
END_TEST

Suite *elf_suite(void)
{
    Suite *s = suite_create("elf");
    TCase *tc = tcase_create("elf");
    tcase_add_test(tc, valid);
    tcase_add_test(tc, two_segments_and_empty_load);
    tcase_add_test(tc, bad_magic);
    tcase_add_test(tc, file_too_large);
    tcase_add_test(tc, bad_header_fields);
    tcase_add_test(tc, bad_program_header_table);
    tcase_add_test(tc, bad_segments);
    tcase_add_test(tc, overlapping_segments);
    tcase_add_test(tc, entry_outside);
    tcase_add_test(tc, nothing_to_load);
    tcase_add_test(tc, too_many_segments);
    tcase_add_test(tc, pvh_note);
    tcase_add_test(tc, pvh_note_bad);
    tcase_add_test(tc, note_overruns);
    tcase_add_test(tc, note_segment_truncated);
    tcase_add_test(tc, linux_note);
    tcase_add_test(tc, several_notes_in_one_segment);
    suite_add_tcase(s, tc);
    return s;
}
