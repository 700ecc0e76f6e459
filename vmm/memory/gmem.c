#include "vmm/memory/gmem.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "vmm/memory/layout.h"

int gmem_add_region(struct gmem *mem, uint64_t gpa, void *host, uint64_t size)
{
    if (mem->nregions >= GMEM_MAX_REGIONS || size == 0)
        return -EINVAL;
    if (gpa + size < gpa)
        return -EOVERFLOW;
    for (unsigned i = 0; i < mem->nregions; i++) {
        const struct gmem_region *r = &mem->regions[i];
        if (gpa < r->gpa + r->size && r->gpa < gpa + size)
            return -EEXIST;
    }
    mem->regions[mem->nregions++] = (struct gmem_region){gpa, size, host};
    mem->ram_bytes += size;
    return 0;
}

static int gmem_map(struct gmem *mem, uint64_t gpa, uint64_t size)
{
    /* MAP_NORESERVE: guest pages are touched lazily, so a VM costs what it
     * uses, not what it was given.  The region starts on a 2 MiB boundary
     * (gpa does too) and asks for transparent huge pages, as QEMU's guest
     * RAM does: KVM then maps the guest 2 MiB at a time where the host has
     * a huge page, so a booting kernel takes one stage-2 fault per 2 MiB
     * instead of one per 4 KiB it touches (in the lab, a quarter of the
     * cold boot: docs/benchmarks.md, "Cold start").  Where THP is off the
     * advice does nothing. */
    const uint64_t huge = GMEM_HUGE_PAGE;
    uint8_t *raw = mmap(NULL, size + huge, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
        return -errno;
    uint8_t *p = (uint8_t *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
    /* p - raw < huge: the tail beyond the region is never empty. */
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    munmap(p + size, (size_t)(huge - (p - raw)));
    (void)madvise(p, size, MADV_HUGEPAGE);
    int err = gmem_add_region(mem, gpa, p, size);
    if (err)
        munmap(p, size);
    return err;
}

int gmem_init(struct gmem *mem, uint64_t mib)
{
    memset(mem, 0, sizeof(*mem));
    if (mib < LAYOUT_MEM_MIN_MIB || mib > LAYOUT_MEM_MAX_MIB)
        return -EINVAL;
    uint64_t total = MiB(mib);
    uint64_t low = total < LAYOUT_MMIO_GAP_START ? total : LAYOUT_MMIO_GAP_START;
    int err = gmem_map(mem, 0, low);
    if (!err && total > low)
        err = gmem_map(mem, LAYOUT_MMIO_GAP_END, total - low);
    if (err)
        gmem_destroy(mem);
    return err;
}

int gmem_load_file(const struct gmem *mem, uint64_t gpa, const uint8_t *data, int fd,
                   uint64_t off, uint64_t len)
{
    uint8_t *dst = gmem_ptr(mem, gpa, len);
    if (!dst)
        return -EFAULT;
    const uint64_t page = GMEM_PAGE;
    /* Whole pages from the first page boundary at or after gpa; the file
     * offset must be on a boundary at the same point. */
    uint64_t lead = (page - (gpa & (page - 1))) & (page - 1);
    uint64_t whole = lead < len ? (len - lead) & ~(page - 1) : 0;
    if (fd >= 0 && whole && gmem_map_private(mem, gpa + lead, whole, fd, off + lead) == 0) {
        memcpy(dst, data, lead);
        memcpy(dst + lead + whole, data + lead + whole, len - lead - whole);
        return 0;
    }
    /* After a failed mapping the range holds its old bytes or zeroes:
     * copying over all of it is right either way. */
    memcpy(dst, data, len);
    return 0;
}

void gmem_destroy(struct gmem *mem)
{
    for (unsigned i = 0; i < mem->nregions; i++)
        munmap(mem->regions[i].host, mem->regions[i].size);
    memset(mem, 0, sizeof(*mem));
}

void *gmem_ptr(const struct gmem *mem, uint64_t gpa, uint64_t len)
{
    for (unsigned i = 0; i < mem->nregions; i++) {
        const struct gmem_region *r = &mem->regions[i];
        if (gpa < r->gpa)
            continue;
        uint64_t off = gpa - r->gpa;
        /* off <= size and len <= size - off: no addition can overflow, and a
         * range ending exactly at the top of the region is accepted. */
        if (off > r->size || len > r->size - off)
            continue;
        if (off == r->size && len == 0)
            continue; /* one past the end is not inside the region */
        return r->host + off;
    }
    return NULL;
}

int gmem_write(const struct gmem *mem, uint64_t gpa, const void *src, uint64_t len)
{
    void *dst = gmem_ptr(mem, gpa, len);
    if (!dst)
        return -EFAULT;
    memcpy(dst, src, len);
    return 0;
}

int gmem_read(const struct gmem *mem, void *dst, uint64_t gpa, uint64_t len)
{
    const void *src = gmem_ptr(mem, gpa, len);
    if (!src)
        return -EFAULT;
    memcpy(dst, src, len);
    return 0;
}

uint64_t gmem_low_end(const struct gmem *mem)
{
    for (unsigned i = 0; i < mem->nregions; i++)
        if (mem->regions[i].gpa == 0)
            return mem->regions[i].size;
    return 0;
}

/* Fresh anonymous memory over dst..dst+len, advised huge as gmem_map's. */
static int map_anon_fixed(uint8_t *dst, uint64_t len)
{
    if (mmap(dst, len, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
        return -errno;
    (void)madvise(dst, len, MADV_HUGEPAGE);
    return 0;
}

/* The host pointer of a page-aligned range inside one region, or NULL with
 * *err set (-EFAULT outside RAM, -EINVAL misaligned). */
static uint8_t *aligned_range(const struct gmem *mem, uint64_t gpa, uint64_t len, uint64_t off,
                              int *err)
{
    uint8_t *dst = gmem_ptr(mem, gpa, len);
    *err = -EFAULT;
    if (!dst)
        return NULL;
    *err = -EINVAL;
    if (((uintptr_t)dst | len | off) & (GMEM_PAGE - 1) || off > (uint64_t)INT64_MAX)
        return NULL;
    *err = 0;
    return dst;
}

int gmem_map_private(const struct gmem *mem, uint64_t gpa, uint64_t len, int fd, uint64_t off)
{
    int err;
    uint8_t *dst = aligned_range(mem, gpa, len, off, &err);
    if (!dst)
        return err;
    if (len && mmap(dst, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, (off_t)off) ==
                   MAP_FAILED) {
        int e = errno;
        /* Linux may unmap the old range before a MAP_FIXED mapping fails
         * (say, out of kernel memory for the new area): put anonymous
         * memory back so that guest RAM has no hole for KVM or the devices
         * to fault on.  Where the old mapping survived, this only zeroes
         * bytes the caller is about to write. */
        (void)map_anon_fixed(dst, len);
        return -e;
    }
    return 0;
}

int gmem_map_zero(const struct gmem *mem, uint64_t gpa, uint64_t len)
{
    int err;
    uint8_t *dst = aligned_range(mem, gpa, len, 0, &err);
    if (!dst)
        return err;
    return len ? map_anon_fixed(dst, len) : 0;
}
