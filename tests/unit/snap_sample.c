#include "tests/unit/snap_sample.h"

#include <stdio.h>
#include <string.h>

/* xorshift64: reproducible, and good enough to make every byte differ. */
static uint64_t next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void fill(void *p, size_t n, uint64_t *x)
{
    for (size_t i = 0; i < n; i++)
        ((uint8_t *)p)[i] = (uint8_t)next(x);
}

#define RAND_FILL(m) fill(&(m), sizeof(m), &x)

static void sample_vcpu(struct snap_vcpu *v, uint32_t nmsrs, uint64_t *xp)
{
    uint64_t x = *xp;
    RAND_FILL(v->regs);
    RAND_FILL(v->sregs);
    RAND_FILL(v->xsave);
    RAND_FILL(v->xcrs);
    RAND_FILL(v->lapic);
    RAND_FILL(v->mp_state);
    RAND_FILL(v->events);
    RAND_FILL(v->debugregs);
    v->nmsrs = nmsrs;
    for (uint32_t i = 0; i < nmsrs; i++) {
        v->msrs[i].index = (uint32_t)next(&x);
        v->msrs[i].data = next(&x); /* reserved stays 0: the file does not keep it */
    }
    v->ncpuid = (uint32_t)(nmsrs * 2 % (SNAP_MAX_CPUID + 1));
    for (uint32_t i = 0; i < v->ncpuid; i++) {
        struct kvm_cpuid_entry2 *e = &v->cpuid[i];
        *e = (struct kvm_cpuid_entry2){0}; /* padding stays 0: not kept either */
        e->function = (uint32_t)next(&x);
        e->index = (uint32_t)next(&x);
        e->flags = (uint32_t)next(&x);
        e->eax = (uint32_t)next(&x);
        e->ebx = (uint32_t)next(&x);
        e->ecx = (uint32_t)next(&x);
        e->edx = (uint32_t)next(&x);
    }
    *xp = x;
}

static void sample_virtio(struct snap_virtio *v, unsigned nqueues, uint64_t *xp)
{
    uint64_t x = *xp;
    v->device_id = (uint32_t)next(&x);
    v->status = (uint32_t)next(&x);
    v->device_features_sel = (uint32_t)next(&x);
    v->driver_features_sel = (uint32_t)next(&x);
    v->queue_sel = (uint32_t)next(&x);
    v->interrupt_status = (uint32_t)next(&x);
    v->config_generation = (uint32_t)next(&x);
    v->driver_features = next(&x);
    v->nqueues = nqueues;
    for (unsigned q = 0; q < nqueues; q++) {
        struct snap_queue *sq = &v->queues[q];
        sq->size = (uint16_t)next(&x);
        sq->ready = next(&x) & 1;
        sq->desc_gpa = next(&x);
        sq->avail_gpa = next(&x);
        sq->used_gpa = next(&x);
        sq->last_avail = (uint16_t)next(&x);
        sq->used_idx = (uint16_t)next(&x);
        sq->signalled_used = (uint16_t)next(&x);
    }
    *xp = x;
}

static void sample_disk(struct snap_disk *d, unsigned i, uint64_t *xp)
{
    uint64_t x = *xp;
    snprintf(d->path, sizeof(d->path), "/images/disk-%u.ext4", i);
    d->size = next(&x);
    d->ino = next(&x);
    d->dev = next(&x);
    d->mtime_ns = (int64_t)next(&x);
    d->read_only = next(&x) & 1;
    d->cow = i % 2;
    d->cow_cap = next(&x);
    if (d->cow)
        snprintf(d->overlay, sizeof(d->overlay), "disk-%u.overlay", i);
    *xp = x;
}

void snap_sample(struct snap_state *s, unsigned ncpus, unsigned nvirtio, unsigned ndisks,
                 uint32_t seed)
{
    uint64_t x = 0x9e3779b97f4a7c15ull ^ seed;
    memset(s, 0, sizeof(*s));
    s->version = SNAP_VERSION;
    s->mem_mib = 8 + next(&x) % (1048576 - 8 + 1);
    s->ncpus = ncpus;
    s->cid = next(&x);
    snprintf(s->memory, sizeof(s->memory), "memory");
    s->memory_zlib = seed & 1;
    snprintf(s->cmdline, sizeof(s->cmdline), "console=ttyS0 reboot=k panic=-1 seed=%u", seed);
    RAND_FILL(s->pic_master);
    RAND_FILL(s->pic_slave);
    RAND_FILL(s->ioapic);
    RAND_FILL(s->pit);
    RAND_FILL(s->clock);
    struct snap_serial *sr = &s->serial;
    sr->ier = (uint8_t)next(&x), sr->lcr = (uint8_t)next(&x), sr->mcr = (uint8_t)next(&x);
    sr->scr = (uint8_t)next(&x), sr->dll = (uint8_t)next(&x), sr->dlm = (uint8_t)next(&x);
    sr->fcr = (uint8_t)next(&x), sr->thri_pending = next(&x) & 1;
    s->nvirtio = nvirtio;
    for (unsigned i = 0; i < nvirtio; i++)
        sample_virtio(&s->virtio[i], i % (SNAP_MAX_QUEUES + 1), &x);
    s->ndisks = ndisks;
    for (unsigned i = 0; i < ndisks; i++)
        sample_disk(&s->disks[i], i, &x);
    for (unsigned i = 0; i < ncpus; i++)
        sample_vcpu(&s->vcpus[i], (seed + i) % (SNAP_MAX_MSRS + 1), &x);
}
