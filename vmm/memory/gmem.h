/* Guest memory: the regions that back guest RAM, and the one checked
 * accessor through which every other module turns a guest-physical address
 * into a host pointer (docs/design.md rule 1). */
#ifndef AIRLOCK_MEMORY_GMEM_H
#define AIRLOCK_MEMORY_GMEM_H

#include <stddef.h>
#include <stdint.h>

#define GMEM_MAX_REGIONS 4
/* Where guest RAM regions start in the host (gmem_init): a huge page. */
#define GMEM_HUGE_PAGE (2ull << 20)
/* The host page: the unit gmem_map_private maps. */
#define GMEM_PAGE      4096ull

struct gmem_region {
    uint64_t gpa;   /* first guest-physical byte */
    uint64_t size;  /* bytes */
    uint8_t *host;  /* host mapping of the region */
};

struct gmem {
    struct gmem_region regions[GMEM_MAX_REGIONS];
    unsigned nregions;
    uint64_t ram_bytes;   /* total RAM, all regions */
};

/* Maps `mib` MiB of anonymous memory as guest RAM, split around the MMIO gap
 * (vmm/memory/layout.h).  Returns 0 or -errno. */
int gmem_init(struct gmem *mem, uint64_t mib);

/* Adds an existing host buffer as a region (unit tests use this to build a
 * fake guest).  Regions must not overlap.  Returns 0 or -errno. */
int gmem_add_region(struct gmem *mem, uint64_t gpa, void *host, uint64_t size);

/* Puts file bytes data[0..len) (which are bytes off.. of fd) at gpa.
 * When fd >= 0 and gpa and off share page alignment, the whole pages are
 * mapped from the file copy-on-write (MAP_PRIVATE | MAP_FIXED) instead of
 * copied: nothing is read or faulted in until the guest touches it, and
 * its writes stay private.  The rest (and everything when fd < 0 or a
 * mapping fails) is copied.  -EFAULT if the range is not all in one
 * region. */
int gmem_load_file(const struct gmem *mem, uint64_t gpa, const uint8_t *data, int fd,
                   uint64_t off, uint64_t len);

/* Unmaps what gmem_init mapped. */
void gmem_destroy(struct gmem *mem);

/* Host pointer for [gpa, gpa+len) when that whole range lies inside one
 * region (overflow checked, len 0 allowed inside a region); else NULL. */
void *gmem_ptr(const struct gmem *mem, uint64_t gpa, uint64_t len);

/* Copies into / out of guest memory through gmem_ptr; -EFAULT if the range
 * is not all RAM. */
int gmem_write(const struct gmem *mem, uint64_t gpa, const void *src, uint64_t len);
int gmem_read(const struct gmem *mem, void *dst, uint64_t gpa, uint64_t len);

/* End of the RAM region that starts at 0 (the "low" RAM below the gap). */
uint64_t gmem_low_end(const struct gmem *mem);

/* Maps bytes off..off+len of fd over guest RAM [gpa, gpa+len)
 * copy-on-write (MAP_PRIVATE | MAP_FIXED): a snapshot's memory file
 * becomes guest RAM without a byte being read until the guest touches it.
 * The range's host address, off and len must be page aligned (-EINVAL)
 * and in one region (-EFAULT); -errno when mmap fails, and the range then
 * holds either its old bytes or zeroes, so a caller writes all of it
 * after a failure.  The file must not change while it is mapped: a write
 * to it shows through pages the guest has not written, and a cut raises
 * SIGBUS where the guest or the monitor touches the lost pages. */
int gmem_map_private(const struct gmem *mem, uint64_t gpa, uint64_t len, int fd, uint64_t off);

/* Replaces guest RAM [gpa, gpa+len) by fresh anonymous memory: zeroes
 * that cost nothing until touched, in transparent huge pages where the
 * host has them (as gmem_init's).  Alignment and errors as
 * gmem_map_private's; after a failure the range's bytes are unknown. */
int gmem_map_zero(const struct gmem *mem, uint64_t gpa, uint64_t len);

#endif
