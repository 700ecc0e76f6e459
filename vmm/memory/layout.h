/* Every guest-physical address airlock uses, in one place.
 *
 * Low memory (below 1 MiB) holds the structures the boot protocols want
 * there; the kernel is loaded at or above HIMEM_START; the initrd goes at
 * the top of low RAM.  Addresses follow Firecracker's x86_64 layout where
 * there is no reason to differ, so figures are comparable.
 */
#ifndef AIRLOCK_MEMORY_LAYOUT_H
#define AIRLOCK_MEMORY_LAYOUT_H

#include <stdint.h>

#define KiB(x) ((uint64_t)(x) << 10)
#define MiB(x) ((uint64_t)(x) << 20)
#define GiB(x) ((uint64_t)(x) << 30)

/* Boot GDT (Documentation/x86/boot.rst wants __BOOT_CS=0x10, __BOOT_DS=0x18). */
#define LAYOUT_GDT_START        0x500ULL
#define LAYOUT_GDT_ENTRIES      6
#define LAYOUT_SEL_CODE64       0x10
#define LAYOUT_SEL_DATA         0x18
#define LAYOUT_SEL_CODE32       0x20 /* PVH enters in 32-bit protected mode */
#define LAYOUT_SEL_TSS          0x28 /* VM entry wants a usable TR */
#define LAYOUT_IDT_START        0x540ULL /* empty IDT: limit 0 */

/* PVH: struct hvm_start_info, then its module list and memory map. */
#define LAYOUT_PVH_INFO_START   0x6000ULL
#define LAYOUT_PVH_MODLIST      0x6040ULL
#define LAYOUT_PVH_MEMMAP       0x6080ULL
#define LAYOUT_PVH_MEMMAP_MAX   64

/* Linux boot protocol "zero page" (struct boot_params, 4 KiB). */
#define LAYOUT_ZERO_PAGE_START  0x7000ULL

/* Initial stack for the 64-bit entry (the kernel sets up its own at once). */
#define LAYOUT_BOOT_STACK       0x8ff0ULL

/* Identity page tables for the 64-bit entry: PML4, one PDPT, four page
 * directories of 2 MiB pages = the first 4 GiB identity-mapped.  2 MiB pages
 * because a guest without CPUID pdpe1gb cannot use 1 GiB ones. */
#define LAYOUT_PML4_START       0x9000ULL
#define LAYOUT_PDPT_START       0xa000ULL
#define LAYOUT_PD_START         0xb000ULL
#define LAYOUT_PD_COUNT         4

/* Kernel command line, and the largest we ever copy (Linux's x86
 * COMMAND_LINE_SIZE is 2048; bzImage headers may say less). */
#define LAYOUT_CMDLINE_START    0x20000ULL
#define LAYOUT_CMDLINE_MAX      2048

/* Where low RAM ends: the last KiB of "base memory" (639 KiB) is where Linux
 * looks for the MP floating pointer; from there to 1 MiB is reserved. */
#define LAYOUT_EBDA_START       0x9fc00ULL
#define LAYOUT_MPTABLE_START    LAYOUT_EBDA_START
#define LAYOUT_HIMEM_START      0x100000ULL

/* The bzImage protected-mode part is loaded here (64-bit entry at +0x200). */
#define LAYOUT_BZIMAGE_LOAD     LAYOUT_HIMEM_START

/* RAM above this goes above 4 GiB: the gap holds the local APIC, the
 * IOAPIC and (later) the virtio-mmio windows. */
#define LAYOUT_MMIO_GAP_START   0xc0000000ULL
#define LAYOUT_MMIO_GAP_END     GiB(4)

#define LAYOUT_IOAPIC_BASE      0xfec00000ULL
#define LAYOUT_LAPIC_BASE       0xfee00000ULL

/* Smallest and largest guest RAM airlock accepts (MiB). */
#define LAYOUT_MEM_MIN_MIB      8
#define LAYOUT_MEM_MAX_MIB      (1024 * 1024)

/* Legacy PIO ports and ISA IRQs of the devices airlock emulates. */
#define LAYOUT_COM1_PORT        0x3f8
#define LAYOUT_COM1_IRQ         4
#define LAYOUT_I8042_DATA_PORT  0x60
#define LAYOUT_I8042_CMD_PORT   0x64
/* airlock's boot timer (devices/boot_timer.h): a port no PC device uses
 * and nothing in our guest kernel probes. */
#define LAYOUT_BOOT_TIMER_PORT  0x440

/* virtio-mmio slots: one 4 KiB page each in the MMIO gap, slot i at
 * BASE + i * STRIDE with interrupt line IRQ_BASE + i (edge-triggered ISA
 * lines the MP table routes to the IOAPIC; 5 and up are free of legacy
 * devices we emulate).  Announced to Linux on the command line as
 * virtio_mmio.device=<size>@<addr>:<irq>. */
#define LAYOUT_VIRTIO_MMIO_BASE   0xd0000000ULL
#define LAYOUT_VIRTIO_MMIO_STRIDE 0x1000ULL
#define LAYOUT_VIRTIO_SLOTS       8
#define LAYOUT_VIRTIO_IRQ_BASE    5

/* Highest ISA/IOAPIC interrupt line the MP table routes. */
#define LAYOUT_IOAPIC_PINS      24

#endif
