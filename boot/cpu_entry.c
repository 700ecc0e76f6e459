#include "boot/cpu_entry.h"

#include <string.h>

#include "vmm/memory/layout.h"

#define X86_CR0_PE   0x1ULL
#define X86_CR0_ET   0x10ULL
#define X86_CR0_PG   0x80000000ULL
#define X86_CR4_PAE  0x20ULL
#define EFER_LME     0x100ULL
#define EFER_LMA     0x400ULL
#define PTE_PRESENT  0x1ULL
#define PTE_RW       0x2ULL
#define PTE_PS       0x80ULL /* 2 MiB page in a page directory */

/* Flags word of a descriptor: G D/B L AVL in the high nibble, P DPL S TYPE
 * in the low byte. */
#define SEG_CODE64 0xa09b
#define SEG_DATA   0xc093
#define SEG_CODE32 0xc09b
#define SEG_TSS    0x008b /* busy 32-bit TSS */
#define TSS_LIMIT  0x67

static uint64_t gdt_entry(uint16_t flags, uint32_t base, uint32_t limit)
{
    return ((uint64_t)(base & 0xff000000) << 32) | ((uint64_t)(flags & 0xf0ff) << 40) |
           ((uint64_t)(limit & 0xf0000) << 32) | ((uint64_t)(base & 0xffffff) << 16) |
           (uint64_t)(limit & 0xffff);
}

/* The kvm_segment that matches a GDT entry, so the hidden part of each
 * segment register agrees with what the guest would load itself. */
static struct kvm_segment seg_from_gdt(uint16_t selector, uint16_t flags, uint32_t limit)
{
    int g = (flags >> 15) & 1;
    return (struct kvm_segment){
        .base = 0,
        .limit = g ? (limit << 12) | 0xfff : limit,
        .selector = selector,
        .type = flags & 0xf,
        .present = (flags >> 7) & 1,
        .dpl = (flags >> 5) & 3,
        .db = (flags >> 14) & 1,
        .s = (flags >> 4) & 1,
        .l = (flags >> 13) & 1,
        .g = (uint8_t)g,
    };
}

int cpu_entry_write_tables(const struct gmem *mem)
{
    uint64_t gdt[LAYOUT_GDT_ENTRIES] = {
        [LAYOUT_SEL_CODE64 / 8] = gdt_entry(SEG_CODE64, 0, 0xfffff),
        [LAYOUT_SEL_DATA / 8] = gdt_entry(SEG_DATA, 0, 0xfffff),
        [LAYOUT_SEL_CODE32 / 8] = gdt_entry(SEG_CODE32, 0, 0xfffff),
        [LAYOUT_SEL_TSS / 8] = gdt_entry(SEG_TSS, 0, TSS_LIMIT),
    };
    int err = gmem_write(mem, LAYOUT_GDT_START, gdt, sizeof(gdt));
    if (err)
        return err;

    uint64_t pml4[512] = {LAYOUT_PDPT_START | PTE_PRESENT | PTE_RW};
    uint64_t pdpt[512] = {0};
    for (unsigned i = 0; i < LAYOUT_PD_COUNT; i++) {
        uint64_t pd[512];
        pdpt[i] = (LAYOUT_PD_START + i * 0x1000) | PTE_PRESENT | PTE_RW;
        for (unsigned j = 0; j < 512; j++)
            pd[j] = (((uint64_t)i * 512 + j) << 21) | PTE_PRESENT | PTE_RW | PTE_PS;
        err = gmem_write(mem, LAYOUT_PD_START + i * 0x1000, pd, sizeof(pd));
        if (err)
            return err;
    }
    err = gmem_write(mem, LAYOUT_PML4_START, pml4, sizeof(pml4));
    return err ? err : gmem_write(mem, LAYOUT_PDPT_START, pdpt, sizeof(pdpt));
}

void cpu_entry_sregs(const struct boot_plan *plan, struct kvm_sregs *sregs)
{
    int pvh = plan->entry == ENTRY_PVH;
    struct kvm_segment code = pvh ? seg_from_gdt(LAYOUT_SEL_CODE32, SEG_CODE32, 0xfffff)
                                   : seg_from_gdt(LAYOUT_SEL_CODE64, SEG_CODE64, 0xfffff);
    struct kvm_segment data = seg_from_gdt(LAYOUT_SEL_DATA, SEG_DATA, 0xfffff);

    sregs->cs = code;
    sregs->ds = sregs->es = sregs->fs = sregs->gs = sregs->ss = data;
    sregs->tr = seg_from_gdt(LAYOUT_SEL_TSS, SEG_TSS, TSS_LIMIT);
    sregs->gdt.base = LAYOUT_GDT_START;
    sregs->gdt.limit = LAYOUT_GDT_ENTRIES * 8 - 1;
    sregs->idt.base = LAYOUT_IDT_START;
    sregs->idt.limit = 0;

    if (pvh) {
        /* PVH: 32-bit protected mode, paging off (start_info.h). */
        sregs->cr0 = X86_CR0_PE | X86_CR0_ET;
        sregs->cr3 = 0;
        sregs->cr4 = 0;
        sregs->efer = 0;
    } else {
        /* boot.rst 64-bit protocol: long mode, identity-mapped paging. */
        sregs->cr0 = X86_CR0_PE | X86_CR0_ET | X86_CR0_PG;
        sregs->cr3 = LAYOUT_PML4_START;
        sregs->cr4 = X86_CR4_PAE;
        sregs->efer = EFER_LME | EFER_LMA;
    }
}

void cpu_entry_regs(const struct boot_plan *plan, struct kvm_regs *regs)
{
    memset(regs, 0, sizeof(*regs));
    regs->rflags = 0x2; /* reserved bit 1; interrupts off */
    regs->rip = plan->rip;
    if (plan->entry == ENTRY_PVH) {
        regs->rbx = plan->boot_info;
    } else {
        regs->rsi = plan->boot_info;
        regs->rsp = regs->rbp = LAYOUT_BOOT_STACK;
    }
}
