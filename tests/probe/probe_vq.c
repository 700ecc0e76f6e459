/* A minimal virtio-mmio driver for the attack suite: any slot, any queue,
 * rings wherever the caller says.  Interrupts stay off; it polls. */
#include "probe_attack.h"

static unsigned passed, failed;

void attack_report(const char *name, int ok)
{
    puts_serial(ok ? "ATTACK ok " : "ATTACK FAIL ");
    puts_serial(name);
    puts_serial("\n");
    if (ok)
        passed++;
    else
        failed++;
}

void attack_report2(const char *prefix, const char *name, int ok)
{
    puts_serial(ok ? "ATTACK ok " : "ATTACK FAIL ");
    puts_serial(prefix);
    puts_serial(": ");
    puts_serial(name);
    puts_serial("\n");
    if (ok)
        passed++;
    else
        failed++;
}

void attack_summary(void);
void attack_summary(void)
{
    puts_serial("ATTACK-DONE passed=");
    put_hex(passed);
    puts_serial(" failed=");
    put_hex(failed);
    puts_serial("\n");
}

/* The probe's kernel-mode code runs through KVM's emulator on kvm-pvm:
 * clear with 8-byte stores, and only what is needed. */
static void zero64(uint64_t gpa, unsigned bytes)
{
    volatile uint64_t *p = (volatile uint64_t *)(uintptr_t)gpa;
    for (unsigned i = 0; i < (bytes + 7) / 8; i++)
        p[i] = 0;
}

uint32_t vdev_begin(uint64_t base)
{
    vset(base, R_STATUS, 0);
    vset(base, R_STATUS, ST_ACK);
    vset(base, R_STATUS, ST_ACK | ST_DRIVER);
    vset(base, R_DRV_FEAT_SEL, 1);
    vset(base, R_DRV_FEAT, 1); /* VERSION_1 is bit 32 */
    vset(base, R_DRV_FEAT_SEL, 0);
    vset(base, R_DRV_FEAT, 0);
    vset(base, R_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
    return vreg(base, R_STATUS);
}

void vq_program(struct vq *q, uint64_t desc_gpa)
{
    vset(q->base, R_QSEL, q->index);
    vset(q->base, R_QNUM, q->size);
    vset(q->base, R_DESC_LO, (uint32_t)desc_gpa);
    vset(q->base, R_DESC_HI, (uint32_t)(desc_gpa >> 32));
    vset(q->base, R_AVAIL_LO, (uint32_t)(q->mem + 0x1000));
    vset(q->base, R_AVAIL_HI, 0);
    vset(q->base, R_USED_LO, (uint32_t)(q->mem + 0x2000));
    vset(q->base, R_USED_HI, 0);
}

void vq_setup(struct vq *q, uint64_t base, unsigned index, uint64_t mem, uint16_t size)
{
    q->base = base;
    q->index = index;
    q->mem = mem;
    q->size = size;
    q->next_avail = q->seen_used = 0;
    unsigned n = size <= 256 ? size : 256;
    zero64(mem, 16 * n);
    zero64(mem + 0x1000, 6 + 2 * n);
    zero64(mem + 0x2000, 6 + 8 * n);
    vq_program(q, mem);
    vset(base, R_QREADY, 1);
}

void vq_desc(struct vq *q, unsigned i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
    volatile struct vdesc *d = (volatile struct vdesc *)(uintptr_t)(q->mem + 16 * (uint64_t)i);
    d->addr = addr;
    d->len = len;
    d->flags = flags;
    d->next = next;
}

void vq_post(struct vq *q, uint16_t head, uint16_t advance)
{
    volatile uint16_t *avail = (volatile uint16_t *)(uintptr_t)(q->mem + 0x1000);
    avail[2 + q->next_avail % q->size] = head;
    __asm__ volatile("" ::: "memory");
    q->next_avail = (uint16_t)(q->next_avail + advance);
    avail[1] = q->next_avail;
    __asm__ volatile("mfence" ::: "memory");
}

void vq_kick(struct vq *q)
{
    vset(q->base, R_NOTIFY, q->index);
}

static int wait_bounded(struct vq *q, unsigned bound)
{
    volatile uint16_t *used = (volatile uint16_t *)(uintptr_t)(q->mem + 0x2000);
    for (unsigned i = 0; i < bound; i++) {
        if (used[1] != q->seen_used) {
            volatile uint32_t *elem =
                (volatile uint32_t *)(uintptr_t)(q->mem + 0x2004 + 8 * (uint64_t)(q->seen_used % q->size));
            q->last_id = elem[0];
            q->last_len = elem[1];
            q->seen_used++;
            return WAIT_USED;
        }
        if ((i & 63) == 0 && (vreg(q->base, R_STATUS) & ST_NEEDS_RESET))
            return WAIT_NEEDS_RESET;
    }
    return WAIT_TIMEOUT;
}

int vq_wait(struct vq *q) { return wait_bounded(q, 400000); }
int vq_wait_n(struct vq *q, unsigned bound) { return wait_bounded(q, bound); }
int vq_wait_short(struct vq *q) { return wait_bounded(q, 2000); }
