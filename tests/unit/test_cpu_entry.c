/* boot/cpu_entry.c: GDT, identity page tables and entry registers. */
#include <errno.h>
#include <string.h>

#include "boot/cpu_entry.h"
#include "vmm/memory/layout.h"
#include "tests/unit/helpers.h"

#define CR0_PE  0x1ULL
#define CR0_PG  0x80000000ULL
#define CR4_PAE 0x20ULL
#define EFER_LME 0x100ULL
#define EFER_LMA 0x400ULL

static uint64_t rd_gpa64(const struct test_mem *t, uint64_t gpa)
{
    return rd64le(test_mem_at(t, gpa, 8));
}

START_TEST(gdt)
{
    struct test_mem t;
    test_mem_init(&t, MiB(1));
    ck_assert_int_eq(cpu_entry_write_tables(&t.mem), 0);
    ck_assert_uint_eq(rd_gpa64(&t, LAYOUT_GDT_START), 0);     /* null descriptor */
    ck_assert_uint_eq(rd_gpa64(&t, LAYOUT_GDT_START + 8), 0);
    /* flat 4 GiB segments, the values Linux's own boot GDT uses */
    ck_assert_uint_eq(rd_gpa64(&t, LAYOUT_GDT_START + LAYOUT_SEL_CODE64), 0x00af9b000000ffffULL);
    ck_assert_uint_eq(rd_gpa64(&t, LAYOUT_GDT_START + LAYOUT_SEL_DATA), 0x00cf93000000ffffULL);
    ck_assert_uint_eq(rd_gpa64(&t, LAYOUT_GDT_START + LAYOUT_SEL_CODE32), 0x00cf9b000000ffffULL);
    ck_assert_uint_eq(rd_gpa64(&t, LAYOUT_GDT_START + LAYOUT_SEL_TSS), 0x00008b0000000067ULL);
    /* the GDT ends before the IDT */
    ck_assert_uint_le(LAYOUT_GDT_START + LAYOUT_GDT_ENTRIES * 8, LAYOUT_IDT_START);
    test_mem_free(&t);
}
END_TEST

START_TEST(page_tables)
{
    struct test_mem t;
    test_mem_init(&t, MiB(1));
    memset(test_mem_at(&t, LAYOUT_PML4_START, 0x6000), 0xee, 0x6000); /* stale bytes */
    ck_assert_int_eq(cpu_entry_write_tables(&t.mem), 0);
    ck_assert_uint_eq(rd_gpa64(&t, LAYOUT_PML4_START), LAYOUT_PDPT_START | 3);
    for (unsigned i = 1; i < 512; i++)
        ck_assert_uint_eq(rd_gpa64(&t, LAYOUT_PML4_START + i * 8), 0);
    for (unsigned i = 0; i < 512; i++) {
        uint64_t want = i < LAYOUT_PD_COUNT ? (LAYOUT_PD_START + i * 0x1000ULL) | 3 : 0;
        ck_assert_uint_eq(rd_gpa64(&t, LAYOUT_PDPT_START + i * 8), want);
    }
    /* every 2 MiB page of the first 4 GiB maps to itself: P|RW|PS */
    for (uint64_t n = 0; n < LAYOUT_PD_COUNT * 512ULL; n++)
        ck_assert_uint_eq(rd_gpa64(&t, LAYOUT_PD_START + n * 8), (n << 21) | 0x83);
    ck_assert_uint_eq(rd_gpa64(&t, LAYOUT_PD_START + 3 * 0x1000 + 511 * 8), 0xffe00083ULL);
    test_mem_free(&t);
}
END_TEST

START_TEST(tables_need_ram)
{
    struct test_mem t;
    test_mem_init(&t, LAYOUT_PD_START + 0x1000); /* room for one page directory only */
    ck_assert_int_eq(cpu_entry_write_tables(&t.mem), -EFAULT);
    test_mem_free(&t);
    test_mem_init(&t, 0x400); /* not even the GDT */
    ck_assert_int_eq(cpu_entry_write_tables(&t.mem), -EFAULT);
    test_mem_free(&t);
}
END_TEST

static void check_flat(const struct kvm_segment *s, uint16_t sel)
{
    ck_assert_uint_eq(s->selector, sel);
    ck_assert_uint_eq(s->base, 0);
    ck_assert_uint_eq(s->limit, 0xffffffff);
    ck_assert_uint_eq(s->present, 1);
    ck_assert_uint_eq(s->s, 1);
    ck_assert_uint_eq(s->g, 1);
    ck_assert_uint_eq(s->dpl, 0);
}

START_TEST(sregs_linux64)
{
    struct boot_plan plan = {.entry = ENTRY_LINUX64, .rip = 0x1000000,
                             .boot_info = LAYOUT_ZERO_PAGE_START};
    struct kvm_sregs sr;
    memset(&sr, 0, sizeof(sr));
    sr.apic_base = 0xfee00900; /* left as KVM reported it */
    cpu_entry_sregs(&plan, &sr);
    ck_assert_uint_eq(sr.efer & (EFER_LME | EFER_LMA), EFER_LME | EFER_LMA);
    ck_assert_uint_eq(sr.cr0 & (CR0_PG | CR0_PE), CR0_PG | CR0_PE);
    ck_assert_uint_ne(sr.cr4 & CR4_PAE, 0);
    ck_assert_uint_eq(sr.cr3, LAYOUT_PML4_START);
    check_flat(&sr.cs, LAYOUT_SEL_CODE64);
    ck_assert_uint_eq(sr.cs.l, 1);
    ck_assert_uint_eq(sr.cs.db, 0);
    ck_assert_uint_eq(sr.cs.type, 0xb); /* execute/read, accessed */
    const struct kvm_segment *data[] = {&sr.ds, &sr.es, &sr.fs, &sr.gs, &sr.ss};
    for (unsigned i = 0; i < 5; i++) {
        check_flat(data[i], LAYOUT_SEL_DATA);
        ck_assert_uint_eq(data[i]->type, 0x3);
    }
    ck_assert_uint_eq(sr.tr.selector, LAYOUT_SEL_TSS);
    ck_assert_uint_eq(sr.tr.type, 0xb); /* busy TSS */
    ck_assert_uint_eq(sr.tr.s, 0);
    ck_assert_uint_eq(sr.tr.present, 1);
    ck_assert_uint_eq(sr.tr.limit, 0x67);
    ck_assert_uint_eq(sr.gdt.base, LAYOUT_GDT_START);
    ck_assert_uint_eq(sr.gdt.limit, LAYOUT_GDT_ENTRIES * 8 - 1);
    ck_assert_uint_eq(sr.idt.base, LAYOUT_IDT_START);
    ck_assert_uint_eq(sr.idt.limit, 0);
    ck_assert_uint_eq(sr.apic_base, 0xfee00900);
}
END_TEST

START_TEST(sregs_pvh)
{
    struct boot_plan plan = {.entry = ENTRY_PVH, .rip = 0x1000000,
                             .boot_info = LAYOUT_PVH_INFO_START};
    struct kvm_sregs sr;
    memset(&sr, 0xff, sizeof(sr)); /* whatever KVM had: the entry must override */
    cpu_entry_sregs(&plan, &sr);
    ck_assert_uint_eq(sr.cr0 & CR0_PE, CR0_PE);
    ck_assert_uint_eq(sr.cr0 & CR0_PG, 0);
    ck_assert_uint_eq(sr.cr4 & CR4_PAE, 0);
    ck_assert_uint_eq(sr.efer & (EFER_LME | EFER_LMA), 0);
    check_flat(&sr.cs, LAYOUT_SEL_CODE32);
    ck_assert_uint_eq(sr.cs.db, 1);
    ck_assert_uint_eq(sr.cs.l, 0);
    ck_assert_uint_eq(sr.cs.type, 0xb);
    check_flat(&sr.ds, LAYOUT_SEL_DATA);
    check_flat(&sr.ss, LAYOUT_SEL_DATA);
    ck_assert_uint_eq(sr.ss.db, 1);
    ck_assert_uint_eq(sr.tr.selector, LAYOUT_SEL_TSS);
    ck_assert_uint_eq(sr.gdt.base, LAYOUT_GDT_START);
}
END_TEST

START_TEST(regs)
{
    struct kvm_regs r;
    struct boot_plan linux64 = {.entry = ENTRY_LINUX64, .rip = 0x1000200,
                                .boot_info = LAYOUT_ZERO_PAGE_START};
    memset(&r, 0xff, sizeof(r));
    cpu_entry_regs(&linux64, &r);
    ck_assert_uint_eq(r.rip, 0x1000200);
    ck_assert_uint_eq(r.rsi, LAYOUT_ZERO_PAGE_START);
    ck_assert_uint_eq(r.rbx, 0);
    ck_assert_uint_eq(r.rflags, 2);
    ck_assert_uint_eq(r.rsp, LAYOUT_BOOT_STACK);
    ck_assert_uint_eq(r.rax, 0);

    struct boot_plan pvh = {.entry = ENTRY_PVH, .rip = 0x1000100,
                            .boot_info = LAYOUT_PVH_INFO_START};
    memset(&r, 0xff, sizeof(r));
    cpu_entry_regs(&pvh, &r);
    ck_assert_uint_eq(r.rip, 0x1000100);
    ck_assert_uint_eq(r.rbx, LAYOUT_PVH_INFO_START);
    ck_assert_uint_eq(r.rsi, 0);
    ck_assert_uint_eq(r.rflags, 2);
}
END_TEST

Suite *cpu_entry_suite(void)
{
    Suite *s = suite_create("cpu_entry");
    TCase *tc = tcase_create("cpu_entry");
    tcase_add_test(tc, gdt);
    tcase_add_test(tc, page_tables);
    tcase_add_test(tc, tables_need_ram);
    tcase_add_test(tc, sregs_linux64);
    tcase_add_test(tc, sregs_pvh);
    tcase_add_test(tc, regs);
    suite_add_tcase(s, tc);
    return s;
}
