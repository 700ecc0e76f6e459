/* The boot vCPU's state at the kernel's first instruction: our own GDT and
 * identity page tables in guest memory, and the register values each entry
 * protocol prescribes. */
#ifndef AIRLOCK_BOOT_CPU_ENTRY_H
#define AIRLOCK_BOOT_CPU_ENTRY_H

#include <linux/kvm.h>

#include "boot/loader.h"
#include "vmm/memory/gmem.h"

/* Writes the GDT and the page tables (first 4 GiB, 2 MiB pages). */
int cpu_entry_write_tables(const struct gmem *mem);

/* Sets segments, control registers and EFER for plan->entry: long mode with
 * paging for ENTRY_LINUX64, flat 32-bit protected mode without paging for
 * ENTRY_PVH.  Other fields of *sregs are left as KVM reported them. */
void cpu_entry_sregs(const struct boot_plan *plan, struct kvm_sregs *sregs);

/* General registers: RIP, RFLAGS, the stack, and RSI or RBX with the
 * boot information pointer. */
void cpu_entry_regs(const struct boot_plan *plan, struct kvm_regs *regs);

#endif
