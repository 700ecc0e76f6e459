/* Intel MultiProcessor Specification 1.4 tables.  Without ACPI this is how
 * Linux (CONFIG_X86_MPPARSE) learns how many CPUs there are, where the
 * IOAPIC is and how ISA interrupts are wired.  Linux scans the last KiB of
 * base memory (639 KiB) for the floating pointer, so it goes there. */
#include <errno.h>
#include <string.h>

#include "vmm/memory/layout.h"
#include "boot/loader.h"

struct __attribute__((packed)) mpf_intel {
    char signature[4]; /* "_MP_" */
    uint32_t physptr;
    uint8_t length;    /* in 16-byte units */
    uint8_t specification;
    uint8_t checksum;
    uint8_t feature[5];
};

struct __attribute__((packed)) mpc_table {
    char signature[4]; /* "PCMP" */
    uint16_t length;
    uint8_t spec;
    uint8_t checksum;
    char oem[8];
    char productid[12];
    uint32_t oemptr;
    uint16_t oemsize;
    uint16_t oemcount;
    uint32_t lapic;
    uint16_t reserved[2];
};

struct __attribute__((packed)) mpc_cpu {
    uint8_t type, apicid, apicver, cpuflag;
    uint32_t cpufeature, featureflag;
    uint32_t reserved[2];
};

struct __attribute__((packed)) mpc_bus {
    uint8_t type, busid;
    char bustype[6];
};

struct __attribute__((packed)) mpc_ioapic {
    uint8_t type, apicid, apicver, flags;
    uint32_t apicaddr;
};

struct __attribute__((packed)) mpc_intsrc {
    uint8_t type, irqtype;
    uint16_t irqflag;
    uint8_t srcbus, srcbusirq, dstapic, dstirq;
};

enum { MP_PROCESSOR, MP_BUS, MP_IOAPIC, MP_INTSRC, MP_LINTSRC };
enum { MP_IRQ_INT = 0, MP_IRQ_NMI = 1, MP_IRQ_EXTINT = 3 };
#define CPU_ENABLED     1
#define CPU_BOOTPROCESSOR 2
#define APIC_VERSION    0x14
#define IOAPIC_VERSION  0x11
#define CPU_SIGNATURE   0x600         /* family 6 */
#define CPU_FEATURES    (0x200 | 0x1) /* APIC, FPU */

_Static_assert(sizeof(struct mpf_intel) == 16, "MP floating pointer");
_Static_assert(sizeof(struct mpc_table) == 44, "MP config header");
_Static_assert(sizeof(struct mpc_cpu) == 20, "MP processor entry");

static uint8_t mp_checksum(const uint8_t *p, size_t len)
{
    uint8_t sum = 0;
    for (size_t i = 0; i < len; i++)
        sum += p[i];
    return (uint8_t)-sum;
}

#define MPTABLE_BYTES(n) (sizeof(struct mpf_intel) + sizeof(struct mpc_table) + \
                          (n) * sizeof(struct mpc_cpu) + sizeof(struct mpc_bus) + \
                          sizeof(struct mpc_ioapic) + \
                          (LAYOUT_IOAPIC_PINS + 2) * sizeof(struct mpc_intsrc))

_Static_assert(LAYOUT_MPTABLE_START + MPTABLE_BYTES(MPTABLE_MAX_CPUS) <= LAYOUT_HIMEM_START,
               "the largest MP table fits below 1 MiB");

int mptable_write(const struct gmem *mem, unsigned ncpus)
{
    if (ncpus == 0 || ncpus > MPTABLE_MAX_CPUS)
        return -EINVAL;
    uint8_t *base = gmem_ptr(mem, LAYOUT_MPTABLE_START, MPTABLE_BYTES(ncpus));
    if (!base)
        return -EFAULT;
    memset(base, 0, MPTABLE_BYTES(ncpus));

    struct mpf_intel *mpf = (struct mpf_intel *)base;
    struct mpc_table *mpc = (struct mpc_table *)(mpf + 1);
    uint8_t *p = (uint8_t *)(mpc + 1);
    uint16_t count = 0;

    for (unsigned i = 0; i < ncpus; i++, count++) {
        struct mpc_cpu c = {
            .type = MP_PROCESSOR, .apicid = (uint8_t)i, .apicver = APIC_VERSION,
            .cpuflag = CPU_ENABLED | (i == 0 ? CPU_BOOTPROCESSOR : 0),
            .cpufeature = CPU_SIGNATURE, .featureflag = CPU_FEATURES,
        };
        memcpy(p, &c, sizeof(c));
        p += sizeof(c);
    }
    struct mpc_bus bus = {.type = MP_BUS, .busid = 0, .bustype = "ISA   "};
    memcpy(p, &bus, sizeof(bus));
    p += sizeof(bus);
    count++;
    uint8_t ioapic_id = (uint8_t)ncpus;
    struct mpc_ioapic io = {.type = MP_IOAPIC, .apicid = ioapic_id, .apicver = IOAPIC_VERSION,
                            .flags = 1, .apicaddr = (uint32_t)LAYOUT_IOAPIC_BASE};
    memcpy(p, &io, sizeof(io));
    p += sizeof(io);
    count++;
    /* ISA IRQ n -> IOAPIC pin n, as KVM's default GSI routing wires them. */
    for (unsigned irq = 0; irq < LAYOUT_IOAPIC_PINS; irq++, count++) {
        struct mpc_intsrc s = {.type = MP_INTSRC, .irqtype = MP_IRQ_INT, .srcbus = 0,
                               .srcbusirq = (uint8_t)irq, .dstapic = ioapic_id,
                               .dstirq = (uint8_t)irq};
        memcpy(p, &s, sizeof(s));
        p += sizeof(s);
    }
    /* Local APIC LINT0 = ExtINT (the PIC), LINT1 = NMI, on every CPU. */
    struct mpc_intsrc lint[2] = {
        {.type = MP_LINTSRC, .irqtype = MP_IRQ_EXTINT, .dstapic = 0xff, .dstirq = 0},
        {.type = MP_LINTSRC, .irqtype = MP_IRQ_NMI, .dstapic = 0xff, .dstirq = 1},
    };
    memcpy(p, lint, sizeof(lint));
    p += sizeof(lint);
    count += 2;

    memcpy(mpc->signature, "PCMP", 4);
    mpc->length = (uint16_t)(p - (uint8_t *)mpc);
    mpc->spec = 4;
    memcpy(mpc->oem, "AIRLOCK ", 8);
    memcpy(mpc->productid, "MICROVM     ", 12);
    mpc->oemcount = count;
    mpc->lapic = (uint32_t)LAYOUT_LAPIC_BASE;
    mpc->checksum = mp_checksum((uint8_t *)mpc, mpc->length);

    memcpy(mpf->signature, "_MP_", 4);
    mpf->physptr = (uint32_t)(LAYOUT_MPTABLE_START + sizeof(*mpf));
    mpf->length = 1;
    mpf->specification = 4;
    mpf->checksum = mp_checksum((uint8_t *)mpf, sizeof(*mpf));
    return 0;
}
