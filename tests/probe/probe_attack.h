/* The attack suite's shared parts (probe_attack.c, probe_vq.c,
 * probe_vsock.c): access helpers of every width, a case reporter, and a
 * small virtio-mmio driver that works on any slot and any queue. */
#ifndef AIRLOCK_PROBE_ATTACK_H
#define AIRLOCK_PROBE_ATTACK_H

#include <stdint.h>

#include "probe.h"

/* ---- port I/O and MMIO of every width (misaligned allowed) -------------- */
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" ::"a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" ::"a"(v), "Nd"(port)); }
static inline uint16_t inw(uint16_t port) { uint16_t v; __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint32_t inl(uint16_t port) { uint32_t v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }

typedef uint16_t u16_any __attribute__((aligned(1)));
typedef uint32_t u32_any __attribute__((aligned(1)));
typedef uint64_t u64_any __attribute__((aligned(1)));
static inline uint8_t rd8(uint64_t a) { return *(volatile uint8_t *)(uintptr_t)a; }
static inline uint16_t rd16(uint64_t a) { return *(volatile u16_any *)(uintptr_t)a; }
static inline uint32_t rd32(uint64_t a) { return *(volatile u32_any *)(uintptr_t)a; }
static inline void wr8(uint64_t a, uint8_t v) { *(volatile uint8_t *)(uintptr_t)a = v; }
static inline void wr16(uint64_t a, uint16_t v) { *(volatile u16_any *)(uintptr_t)a = v; }
static inline void wr32(uint64_t a, uint32_t v) { *(volatile u32_any *)(uintptr_t)a = v; }
#ifdef __x86_64__
/* One 8-byte access exists only in 64-bit code; the PVH probe is 32-bit. */
#define HAVE_RW64 1
static inline uint64_t rd64(uint64_t a) { return *(volatile u64_any *)(uintptr_t)a; }
static inline void wr64(uint64_t a, uint64_t v) { *(volatile u64_any *)(uintptr_t)a = v; }
#endif

/* ---- reporting ----------------------------------------------------------- */
/* Prints "ATTACK ok|FAIL <name>" and counts it. */
void attack_report(const char *name, int ok);
/* The same with a prefix ("blk@0: ..."). */
void attack_report2(const char *prefix, const char *name, int ok);

/* ---- virtio-mmio --------------------------------------------------------- */
#define VIRTIO_BASE   0xd0000000ULL
#define VIRTIO_STRIDE 0x1000ULL
#define VIRTIO_WINDOW 0x200ULL
#define VIRTIO_SLOTS  8
enum {
    R_MAGIC = 0x000, R_VERSION = 0x004, R_DEVICE_ID = 0x008, R_VENDOR = 0x00c,
    R_DEV_FEAT = 0x010, R_DEV_FEAT_SEL = 0x014, R_DRV_FEAT = 0x020, R_DRV_FEAT_SEL = 0x024,
    R_QSEL = 0x030, R_QNUM_MAX = 0x034, R_QNUM = 0x038, R_QREADY = 0x044, R_NOTIFY = 0x050,
    R_INT_STATUS = 0x060, R_INT_ACK = 0x064, R_STATUS = 0x070, R_DESC_LO = 0x080,
    R_DESC_HI = 0x084, R_AVAIL_LO = 0x090, R_AVAIL_HI = 0x094, R_USED_LO = 0x0a0,
    R_USED_HI = 0x0a4, R_SHM_SEL = 0x0ac, R_SHM_LEN_LO = 0x0b0, R_CFG_GEN = 0x0fc,
    R_CONFIG = 0x100,
};
#define ST_ACK 1u
#define ST_DRIVER 2u
#define ST_DRIVER_OK 4u
#define ST_FEATURES_OK 8u
#define ST_NEEDS_RESET 64u
#define ST_FAILED 128u
#define ST_ALL_OK (ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK)
#define F_NEXT 1
#define F_WRITE 2
#define F_INDIRECT 4

struct vdesc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
};

/* One split virtqueue in guest RAM: descriptor table at `mem`, avail ring
 * at mem + 0x1000, used ring at mem + 0x2000. */
struct vq {
    uint64_t base;  /* the device's MMIO window */
    unsigned index; /* queue number */
    uint64_t mem;
    uint16_t size, next_avail, seen_used;
    uint32_t last_id, last_len; /* the used element seen last */
};

static inline uint32_t vreg(uint64_t base, uint32_t off) { return mmio_read32(base + off); }
static inline void vset(uint64_t base, uint32_t off, uint32_t v) { mmio_write32(base + off, v); }

/* Reset, ACK, DRIVER, VERSION_1, FEATURES_OK; returns the status. */
uint32_t vdev_begin(uint64_t base);
/* Zeroes the rings and programs queue q->index at its size; then QUEUE_READY. */
void vq_setup(struct vq *q, uint64_t base, unsigned index, uint64_t mem, uint16_t size);
/* Programs the queue registers without QUEUE_READY (for hostile layouts). */
void vq_program(struct vq *q, uint64_t desc_gpa);
void vq_desc(struct vq *q, unsigned i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next);
/* Puts head in the avail ring and moves idx by `advance` (1 normally). */
void vq_post(struct vq *q, uint16_t head, uint16_t advance);
void vq_kick(struct vq *q);
enum { WAIT_TIMEOUT = 0, WAIT_USED = 1, WAIT_NEEDS_RESET = 2 };
/* Polls (bounded) for the next used element or DEVICE_NEEDS_RESET. */
int vq_wait(struct vq *q);
/* Like vq_wait, with a short bound: for "must not happen" checks. */
int vq_wait_short(struct vq *q);
int vq_wait_n(struct vq *q, unsigned bound);

/* ---- the suites ----------------------------------------------------------- */
/* virtio-blk in slot 0 (disk bytes start "AI"): a good read of sector 0. */
int blk_good(uint64_t base);
/* virtio-vsock: sets the device up (rx, tx, event queues) at base. */
int vsock_start(uint64_t base);
/* A REQUEST to a host port nobody serves gets RST (after any packets still
 * owed, which it skips): the device works. */
int vsock_good(uint64_t base);
/* The same on the queues as they are (no reset first). */
int vsock_ping(uint64_t base);
/* Every hostile-virtqueue and vsock-specific case. */
void vsock_attacks(uint64_t base);

/* probe.attack: the whole suite, then ATTACK-DONE passed=.. failed=.. */
void probe_attack(void);

#endif
