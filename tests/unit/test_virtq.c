/* devices/virtio/queue.c: the split virtqueue (virtio 1.2 §2.7) against a
 * hostile driver.  The rings live in a 64 KiB fake guest RAM; each test is
 * named after the spec section whose rule it checks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio/queue.h"
#include "tests/unit/helpers.h"
#include "tests/unit/ring.h"

#define RAM      0x10000ULL /* fake guest RAM: [0, 64 KiB) */
#define RING_GPA 0x1000ULL
#define QSIZE    16
#define DATA     0x8000ULL  /* data buffers tests place by hand */

static struct test_mem tm;
static struct test_ring r;
static struct virtq q;
static struct virtq_chain *ch; /* on the heap, so ASan guards its end */

static void setup(void)
{
    test_mem_init(&tm, RAM);
    ring_init(&r, &tm.mem, RING_GPA, QSIZE);
    memset(&q, 0, sizeof(q));
    q.max_size = VIRTQ_MAX_SIZE;
    ring_to_virtq(&r, &q);
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), 0);
    ch = malloc(sizeof(*ch));
    ck_assert_ptr_nonnull(ch);
    memset(ch, 0xa5, sizeof(*ch));
}

static void teardown(void)
{
    free(ch);
    test_mem_free(&tm);
}

/* The queue refused the chain and is now broken; nothing was consumed. */
static void assert_broken(uint16_t last_avail)
{
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), -EINVAL);
    ck_assert(q.broken);
    ck_assert_uint_eq(q.last_avail, last_avail);
    ck_assert_uint_eq(ring_used_idx(&r), 0);
}

/* Fills guest bytes [gpa, gpa+len) with i*mul+add. */
static void fill(uint64_t gpa, uint64_t len, unsigned mul, unsigned add)
{
    uint8_t *p = test_mem_at(&tm, gpa, len);
    for (uint64_t i = 0; i < len; i++)
        p[i] = (uint8_t)(i * mul + add);
}

/* ---- §2.7.5 descriptor table: links -------------------------------------- */

START_TEST(s2_7_5_desc_loop_to_itself)
{
    ring_set_desc(&r, 0, DATA, 8, VIRTQ_DESC_F_NEXT, 0);
    ring_publish(&r, 0);
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_5_desc_loop_to_earlier)
{
    ring_set_desc(&r, 3, DATA, 8, VIRTQ_DESC_F_NEXT, 7);
    ring_set_desc(&r, 7, DATA + 8, 8, VIRTQ_DESC_F_NEXT, 9);
    ring_set_desc(&r, 9, DATA + 16, 8, VIRTQ_DESC_F_NEXT, 7); /* back to 7 */
    ring_publish(&r, 3);
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_5_desc_next_out_of_range)
{
    /* Memory right after the table is the avail ring, so `next` == size
     * would still be RAM: only the index check stops it. */
    ring_set_desc(&r, 0, DATA, 8, VIRTQ_DESC_F_NEXT, QSIZE);
    ring_publish(&r, 0);
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_5_desc_next_equals_size_valid_memory)
{
    /* Move the table so that "descriptor 16" is a well-formed descriptor
     * in RAM: still refused, the index alone decides. */
    q.desc_gpa = r.desc = 0x6000;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), 0);
    ring_set_desc(&r, QSIZE, DATA, 8, 0, 0);
    ring_set_desc(&r, 0, DATA, 8, VIRTQ_DESC_F_NEXT, QSIZE);
    ring_publish(&r, 0);
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_5_desc_next_far_out_of_range)
{
    ring_set_desc(&r, 0, DATA, 8, VIRTQ_DESC_F_NEXT, 0xffff);
    ring_publish(&r, 0);
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_5_desc_next_ignored_without_flag)
{
    /* `next` means nothing without F_NEXT (§2.7.5). */
    ring_set_desc(&r, 0, DATA, 8, 0, 0xffff);
    ring_publish(&r, 0);
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_uint_eq(ch->nbufs, 1);
    ck_assert(!q.broken);
}
END_TEST

/* ---- §2.7.5 descriptor table: addresses ---------------------------------- */

START_TEST(s2_7_5_desc_addr_beyond_memory)
{
    ring_set_desc(&r, 0, RAM, 1, 0, 0);
    ring_publish(&r, 0);
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_5_desc_addr_straddles_end_of_memory)
{
    ring_set_desc(&r, 0, RAM - 8, 9, 0, 0);
    ring_publish(&r, 0);
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_5_desc_addr_len_wraps_2_64)
{
    /* addr + len wraps to a small address that is RAM. */
    ring_set_desc(&r, 0, UINT64_MAX - 3, 0x20, 0, 0);
    ring_publish(&r, 0);
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_5_desc_addr_wraps_in_later_buffer)
{
    struct ring_buf b[] = {{DATA, 8, false}, {UINT64_MAX, 2, true}};
    ring_publish(&r, ring_chain(&r, b, 2));
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_5_desc_buffer_ending_at_top_of_ram)
{
    /* end == size is inside RAM (docs/design.md: `end > size` is the test). */
    ring_set_desc(&r, 0, RAM - 16, 16, VIRTQ_DESC_F_WRITE, 0);
    ring_publish(&r, 0);
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_uint_eq(ch->bufs[0].gpa, RAM - 16);
    ck_assert_uint_eq(ch->writable_len, 16);
}
END_TEST

START_TEST(s2_7_5_desc_zero_length_buffer)
{
    ring_set_desc(&r, 0, DATA, 0, 0, 0);
    ring_publish(&r, 0);
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_uint_eq(ch->nbufs, 1);
    ck_assert_uint_eq(ch->readable_len, 0);
}
END_TEST

START_TEST(s2_7_5_desc_indirect_refused)
{
    /* Not offered, so a driver may not use it (§2.7.5.3.1), even pointing
     * at a well-formed table. */
    ring_set_desc(&r, 0, DATA, 16, VIRTQ_DESC_F_INDIRECT, 0);
    ring_publish(&r, 0);
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_5_desc_indirect_in_chain_refused)
{
    ring_set_desc(&r, 0, DATA, 8, VIRTQ_DESC_F_NEXT, 1);
    ring_set_desc(&r, 1, DATA + 16, 16, VIRTQ_DESC_F_INDIRECT | VIRTQ_DESC_F_WRITE, 0);
    ring_publish(&r, 0);
    assert_broken(0);
}
END_TEST

/* ---- §2.7.4 message framing ---------------------------------------------- */

START_TEST(s2_7_4_chain_as_long_as_queue)
{
    struct ring_buf b[QSIZE];
    for (unsigned i = 0; i < QSIZE; i++)
        b[i] = (struct ring_buf){DATA + i * 16, 16, i >= QSIZE / 2};
    ring_publish(&r, ring_chain(&r, b, QSIZE));
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_uint_eq(ch->nbufs, QSIZE);
    ck_assert_uint_eq(ch->nreadable, QSIZE / 2);
    ck_assert_uint_eq(ch->readable_len, QSIZE / 2 * 16);
    ck_assert_uint_eq(ch->writable_len, QSIZE / 2 * 16);
}
END_TEST

START_TEST(s2_7_4_chain_longer_than_queue)
{
    /* Every descriptor in one chain, and the last links back to the head:
     * hop size+1 must be refused. */
    struct ring_buf b[QSIZE];
    for (unsigned i = 0; i < QSIZE; i++)
        b[i] = (struct ring_buf){DATA + i * 16, 16, false};
    uint16_t head = ring_chain(&r, b, QSIZE);
    ring_set_desc(&r, QSIZE - 1, DATA, 16, VIRTQ_DESC_F_NEXT, head);
    ring_publish(&r, head);
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_4_chain_of_max_queue_size)
{
    /* The biggest queue fills virtq_chain's buffer array exactly. */
    struct test_ring big;
    ring_init(&big, &tm.mem, 0x4000, VIRTQ_MAX_SIZE);
    ring_to_virtq(&big, &q);
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), 0);
    for (unsigned i = 0; i < VIRTQ_MAX_SIZE; i++)
        ring_set_desc(&big, (uint16_t)i, DATA + i, 1, i + 1 < VIRTQ_MAX_SIZE ? VIRTQ_DESC_F_NEXT : 0,
                      (uint16_t)(i + 1));
    ring_publish(&big, 0);
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_uint_eq(ch->nbufs, VIRTQ_MAX_SIZE);
    ck_assert_uint_eq(ch->readable_len, VIRTQ_MAX_SIZE);
}
END_TEST

START_TEST(s2_7_4_loop_in_max_size_queue)
{
    /* All 256 descriptors in a ring: the hop limit must stop the walk
     * before virtq_chain's 256 buffers overflow (ASan guards its end). */
    struct test_ring big;
    ring_init(&big, &tm.mem, 0x4000, VIRTQ_MAX_SIZE);
    ring_to_virtq(&big, &q);
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), 0);
    for (unsigned i = 0; i < VIRTQ_MAX_SIZE; i++)
        ring_set_desc(&big, (uint16_t)i, DATA + i, 1, VIRTQ_DESC_F_NEXT,
                      (uint16_t)((i + 1) % VIRTQ_MAX_SIZE));
    ring_publish(&big, 0);
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), -EINVAL);
    ck_assert(q.broken);
    ck_assert_uint_le(ch->nbufs, VIRTQ_MAX_SIZE);
}
END_TEST

START_TEST(s2_7_4_loop_stops_at_size_hops)
{
    /* A loop is caught after at most `size` buffers were taken. */
    for (unsigned i = 0; i < QSIZE; i++)
        ring_set_desc(&r, (uint16_t)i, DATA + i, 1, VIRTQ_DESC_F_NEXT, (uint16_t)((i + 1) % QSIZE));
    ring_publish(&r, 5);
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), -EINVAL);
    ck_assert(q.broken);
    ck_assert_uint_le(ch->nbufs, QSIZE);
}
END_TEST

START_TEST(s2_7_4_readable_after_writable)
{
    struct ring_buf b[] = {{DATA, 8, false}, {DATA + 16, 8, true}, {DATA + 32, 8, false}};
    ring_publish(&r, ring_chain(&r, b, 3));
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_4_writable_only_and_readable_only)
{
    struct ring_buf w[] = {{DATA, 8, true}, {DATA + 16, 4, true}};
    struct ring_buf rd[] = {{DATA + 32, 3, false}};
    ring_publish(&r, ring_chain(&r, w, 2));
    ring_publish(&r, ring_chain(&r, rd, 1));
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_uint_eq(ch->nreadable, 0);
    ck_assert_uint_eq(ch->writable_len, 12);
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_uint_eq(ch->nreadable, 1);
    ck_assert_uint_eq(ch->writable_len, 0);
    ck_assert_uint_eq(ch->readable_len, 3);
}
END_TEST

/* ---- §2.7.6 available ring ------------------------------------------------ */

START_TEST(s2_7_6_empty_queue_returns_0)
{
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 0);
    ck_assert(!q.broken);
    ck_assert_uint_eq(q.last_avail, 0);
}
END_TEST

START_TEST(s2_7_6_not_ready_queue_returns_0)
{
    ring_publish(&r, ring_add_desc(&r, DATA, 8, false));
    q.ready = false;
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 0);
    ck_assert(!q.broken);
}
END_TEST

START_TEST(s2_7_6_avail_idx_jumps_past_size)
{
    for (unsigned i = 0; i < QSIZE; i++)
        ring_set_desc(&r, (uint16_t)i, DATA, 8, 0, 0);
    ring_set_avail_idx(&r, QSIZE + 1);
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_6_avail_idx_jumps_backwards)
{
    /* Moving idx back by one claims 65535 new entries. */
    ring_publish(&r, ring_add_desc(&r, DATA, 8, false));
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ring_set_avail_idx(&r, 0);
    assert_broken(1);
}
END_TEST

START_TEST(s2_7_6_avail_full_ring_accepted)
{
    /* Exactly `size` pending is a full ring, not an error. */
    for (unsigned i = 0; i < QSIZE; i++)
        ring_publish(&r, ring_add_desc(&r, DATA + i * 8, 8, false));
    for (unsigned i = 0; i < QSIZE; i++) {
        ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
        ck_assert_uint_eq(ch->head, i);
        ck_assert_uint_eq(ch->bufs[0].gpa, DATA + i * 8);
    }
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 0);
    ck_assert(!q.broken);
}
END_TEST

START_TEST(s2_7_6_avail_head_equals_size)
{
    ring_publish(&r, QSIZE);
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_6_avail_head_ffff)
{
    ring_publish(&r, 0xffff);
    assert_broken(0);
}
END_TEST

START_TEST(s2_7_6_avail_bad_head_after_good_ones)
{
    ring_publish(&r, ring_add_desc(&r, DATA, 8, false));
    ring_publish(&r, QSIZE + 3);
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    assert_broken(1);
}
END_TEST

/* ---- §2.7 queue configuration (virtq_validate) --------------------------- */

START_TEST(s2_7_validate_size_zero)
{
    q.size = 0;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
}
END_TEST

START_TEST(s2_7_validate_size_not_power_of_two)
{
    static const uint16_t bad[] = {3, 5, 6, 12, 15, 17, 255};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        q.size = bad[i];
        ck_assert_msg(virtq_validate(&q, &tm.mem) == -EINVAL, "size %u accepted", bad[i]);
    }
}
END_TEST

START_TEST(s2_7_validate_size_above_max)
{
    q.max_size = 8;
    q.size = 16;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
    q.size = 8; /* == max: fine (the rings laid out for 16 hold 8) */
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), 0);
    q.size = 1;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), 0);
}
END_TEST

START_TEST(s2_7_validate_size_above_virtq_max_size)
{
    /* Whatever max_size a device claims, a queue never outgrows struct
     * virtq_chain: 512 is refused, and a 512-long chain cannot be popped. */
    struct test_ring big;
    ring_init(&big, &tm.mem, 0x4000, 512);
    q.max_size = 512;
    ring_to_virtq(&big, &q);
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
    for (unsigned i = 0; i < 512; i++)
        ring_set_desc(&big, (uint16_t)i, DATA + i, 1, i + 1 < 512 ? VIRTQ_DESC_F_NEXT : 0,
                      (uint16_t)(i + 1));
    ring_publish(&big, 0);
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), -EINVAL); /* ASan guards ch */
    ck_assert(q.broken);
}
END_TEST

START_TEST(s2_7_validate_desc_misaligned)
{
    for (uint64_t off = 1; off < 16; off++) {
        q.desc_gpa = r.desc + off;
        ck_assert_msg(virtq_validate(&q, &tm.mem) == -EINVAL, "desc +%llu accepted",
                      (unsigned long long)off);
    }
}
END_TEST

START_TEST(s2_7_validate_avail_misaligned)
{
    q.avail_gpa = r.avail + 1;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
}
END_TEST

START_TEST(s2_7_validate_used_misaligned)
{
    q.used_gpa = r.used + 2;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
    q.used_gpa = r.used + 1;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
}
END_TEST

START_TEST(s2_7_validate_rings_outside_memory)
{
    struct virtq good = q;
    q.desc_gpa = RAM;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
    q = good;
    q.avail_gpa = RAM + 0x100;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
    q = good;
    q.used_gpa = 0x100000000ULL;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
    q = good;
    q.used_gpa = UINT64_MAX - 3; /* gpa + size wraps to RAM */
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
    q = good;
    q.desc_gpa = UINT64_MAX - 15;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
}
END_TEST

START_TEST(s2_7_validate_rings_checked_at_full_size)
{
    /* Each ring's first byte is RAM but its tail is not. */
    struct virtq good = q;
    q.desc_gpa = RAM - 16 * QSIZE + 16;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
    q = good;
    q.avail_gpa = RAM - (6 + 2 * QSIZE) + 2;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
    q = good;
    q.used_gpa = RAM - (6 + 8 * QSIZE) + 4 - 2; /* 4-aligned, 2 bytes short */
    ck_assert_int_eq(q.used_gpa & 3, 0);
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
}
END_TEST

START_TEST(s2_7_validate_rings_ending_at_top_of_ram)
{
    /* A ring whose last byte is the last byte of RAM is inside it. */
    struct virtq good = q;
    q.desc_gpa = RAM - 16 * QSIZE;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), 0);
    q = good;
    q.avail_gpa = RAM - (6 + 2 * QSIZE);
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), 0);
}
END_TEST

START_TEST(s2_7_validate_used_ring_ending_at_top_of_ram)
{
    /* A used ring is 6 + 8n bytes, so for it to be 4-aligned and end at
     * the top, RAM must end at 2 mod 4: a region of its own. */
    uint64_t top = 0x40000 + 0x1002;
    ck_assert_int_eq(test_mem_add(&tm, 0x40000, 0x1002), 0);
    q.used_gpa = top - (6 + 8 * QSIZE);
    ck_assert_int_eq(q.used_gpa & 3, 0);
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), 0);
    q.used_gpa += 4;
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
}
END_TEST

START_TEST(s2_7_validate_ring_spanning_two_regions)
{
    /* Two adjacent regions are two host buffers: a ring across the seam
     * would need two pointers, so it is refused. */
    ck_assert_int_eq(test_mem_add(&tm, RAM, 0x1000), 0);
    q.desc_gpa = RAM - 0x80; /* 16 descriptors = 0x100 bytes */
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
}
END_TEST

/* ---- §2.7.8 used ring ------------------------------------------------------ */

START_TEST(s2_7_8_pop_push_round_trip)
{
    uint64_t a = ring_alloc(&r, 10), b = ring_alloc(&r, 20), c = ring_alloc(&r, 30);
    struct ring_buf bufs[] = {{a, 10, false}, {b, 20, false}, {c, 30, true}};
    uint16_t h1 = ring_chain(&r, bufs, 3);
    uint16_t h2 = ring_add_desc(&r, c, 1, true);
    ring_publish(&r, h1);
    ring_publish(&r, h2);

    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_uint_eq(ch->head, h1);
    ck_assert_uint_eq(ch->nbufs, 3);
    ck_assert_uint_eq(ch->nreadable, 2);
    ck_assert_uint_eq(ch->readable_len, 30);
    ck_assert_uint_eq(ch->writable_len, 30);
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_uint_eq(ch->bufs[i].gpa, bufs[i].gpa);
        ck_assert_uint_eq(ch->bufs[i].len, bufs[i].len);
        ck_assert_int_eq(ch->bufs[i].writable, bufs[i].writable);
    }
    ck_assert_uint_eq(q.last_avail, 1);
    ck_assert_uint_eq(ring_used_idx(&r), 0); /* nothing used yet */

    ck_assert_int_eq(virtq_push(&q, &tm.mem, h1, 7), 0);
    ck_assert_uint_eq(ring_used_idx(&r), 1);
    struct ring_used u = ring_used_elem(&r, 0);
    ck_assert_uint_eq(u.id, h1);
    ck_assert_uint_eq(u.len, 7);

    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_uint_eq(ch->head, h2);
    ck_assert_int_eq(virtq_push(&q, &tm.mem, h2, 0), 0);
    ck_assert_uint_eq(ring_used_idx(&r), 2);
    u = ring_used_elem(&r, 1);
    ck_assert_uint_eq(u.id, h2);
    ck_assert_uint_eq(u.len, 0);
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 0);
    ck_assert_uint_eq(ring_used_flags(&r), 0);
}
END_TEST

START_TEST(s2_7_8_push_out_of_order)
{
    /* Buffers may be used in any order (§2.7.8). */
    uint16_t h[3];
    for (unsigned i = 0; i < 3; i++)
        ring_publish(&r, h[i] = ring_add_desc(&r, DATA + i * 8, 8, true));
    for (unsigned i = 0; i < 3; i++)
        ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_int_eq(virtq_push(&q, &tm.mem, h[2], 2), 0);
    ck_assert_int_eq(virtq_push(&q, &tm.mem, h[0], 0), 0);
    ck_assert_int_eq(virtq_push(&q, &tm.mem, h[1], 1), 0);
    ck_assert_uint_eq(ring_used_idx(&r), 3);
    ck_assert_uint_eq(ring_used_elem(&r, 0).id, h[2]);
    ck_assert_uint_eq(ring_used_elem(&r, 1).id, h[0]);
    ck_assert_uint_eq(ring_used_elem(&r, 2).id, h[1]);
}
END_TEST

START_TEST(s2_7_8_push_head_out_of_range)
{
    /* A device bug, not the driver's: refused, the queue is not broken. */
    ck_assert_int_eq(virtq_push(&q, &tm.mem, QSIZE, 0), -EINVAL);
    ck_assert_uint_eq(ring_used_idx(&r), 0);
    ck_assert(!q.broken);
}
END_TEST

START_TEST(s2_7_index_wraparound)
{
    /* Indices are free-running 16-bit counters: start just below 65536. */
    q.last_avail = 65534;
    q.used_idx = q.signalled_used = 65534;
    uint16_t used16 = 65534;
    ring_write(&r, r.used + 2, &used16, 2);
    ring_set_avail_idx(&r, 65534);
    uint16_t heads[4];
    for (unsigned i = 0; i < 4; i++) {
        heads[i] = ring_add_desc(&r, DATA + i * 8, 8, true);
        ring_publish(&r, heads[i]);
    }
    ck_assert_uint_eq(r.avail_idx, 2); /* wrapped */
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
        ck_assert_uint_eq(ch->head, heads[i]);
        ck_assert_int_eq(virtq_push(&q, &tm.mem, ch->head, i + 1), 0);
    }
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 0);
    ck_assert_uint_eq(q.last_avail, 2);
    ck_assert_uint_eq(ring_used_idx(&r), 2);
    /* Slots 65534 % 16 = 14, 15, then 0, 1. */
    for (unsigned i = 0; i < 4; i++) {
        struct ring_used u = ring_used_elem(&r, (uint16_t)(65534 + i));
        ck_assert_uint_eq(u.id, heads[i]);
        ck_assert_uint_eq(u.len, i + 1);
    }
    ck_assert(virtq_should_notify(&q, &tm.mem));
    ck_assert(!q.broken);
}
END_TEST

START_TEST(s2_7_index_wraparound_jump_past_size)
{
    q.last_avail = 65530;
    ring_set_avail_idx(&r, (uint16_t)(65530 + QSIZE + 1)); /* 11 after the wrap */
    assert_broken(65530);
}
END_TEST

/* ---- §2.7.4 chain contents (virtq_chain_read / write) -------------------- */

/* A chain of readable buffers 5, 7, 3 bytes (bytes i*3+1 from DATA,
 * DATA+0x100, DATA+0x200) and writable 4, 6 bytes at DATA+0x300/0x400. */
static void pop_mixed_chain(void)
{
    fill(DATA, 5, 3, 1);
    fill(DATA + 0x100, 7, 3, 1 + 5 * 3);
    fill(DATA + 0x200, 3, 3, 1 + 12 * 3);
    struct ring_buf b[] = {{DATA, 5, false},          {DATA + 0x100, 7, false},
                           {DATA + 0x200, 3, false},  {DATA + 0x300, 4, true},
                           {DATA + 0x400, 6, true}};
    ring_publish(&r, ring_chain(&r, b, 5));
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_uint_eq(ch->readable_len, 15);
    ck_assert_uint_eq(ch->writable_len, 10);
}

START_TEST(s2_7_4_chain_read_across_buffers)
{
    pop_mixed_chain();
    uint8_t buf[16], want[16];
    for (unsigned i = 0; i < 16; i++)
        want[i] = (uint8_t)(i * 3 + 1);
    memset(buf, 0, sizeof(buf));
    ck_assert_int_eq(virtq_chain_read(&tm.mem, ch, 0, buf, 15), 0);
    ck_assert_mem_eq(buf, want, 15);
    /* Offsets into the middle, spanning one, two, three buffers. */
    for (uint64_t off = 0; off <= 15; off++)
        for (uint64_t len = 0; off + len <= 15; len++) {
            memset(buf, 0, sizeof(buf));
            ck_assert_int_eq(virtq_chain_read(&tm.mem, ch, off, buf, len), 0);
            ck_assert_mem_eq(buf, want + off, len);
        }
}
END_TEST

START_TEST(s2_7_4_chain_read_out_of_range)
{
    pop_mixed_chain();
    uint8_t buf[32];
    memset(buf, 0x5a, sizeof(buf));
    ck_assert_int_eq(virtq_chain_read(&tm.mem, ch, 14, buf, 2), -EFAULT);
    ck_assert_int_eq(virtq_chain_read(&tm.mem, ch, 0, buf, 16), -EFAULT);
    ck_assert_int_eq(virtq_chain_read(&tm.mem, ch, 16, buf, 0), -EFAULT);
    ck_assert_int_eq(virtq_chain_read(&tm.mem, ch, UINT64_MAX, buf, 1), -EFAULT);
    ck_assert_int_eq(virtq_chain_read(&tm.mem, ch, 1, buf, UINT64_MAX), -EFAULT);
    ck_assert_int_eq(virtq_chain_read(&tm.mem, ch, 15, buf, 0), 0); /* empty, at the end */
    /* The writable buffers are not readable data. */
    ck_assert_int_eq(virtq_chain_read(&tm.mem, ch, 15, buf, 1), -EFAULT);
}
END_TEST

START_TEST(s2_7_4_chain_write_across_buffers)
{
    pop_mixed_chain();
    uint8_t src[10];
    for (unsigned i = 0; i < 10; i++)
        src[i] = (uint8_t)(0xc0 + i);
    ck_assert_int_eq(virtq_chain_write(&tm.mem, ch, 2, src, 5), 0); /* 2 + 3 */
    uint8_t *w0 = test_mem_at(&tm, DATA + 0x300, 4), *w1 = test_mem_at(&tm, DATA + 0x400, 6);
    const uint8_t want0[4] = {0, 0, 0xc0, 0xc1}, want1[6] = {0xc2, 0xc3, 0xc4, 0, 0, 0};
    ck_assert_mem_eq(w0, want0, 4);
    ck_assert_mem_eq(w1, want1, 6);
    ck_assert_int_eq(virtq_chain_write(&tm.mem, ch, 0, src, 10), 0);
    ck_assert_mem_eq(w0, src, 4);
    ck_assert_mem_eq(w1, src + 4, 6);
    /* The readable buffers were not touched. */
    ck_assert_uint_eq(*(uint8_t *)test_mem_at(&tm, DATA, 1), 1);
}
END_TEST

START_TEST(s2_7_4_chain_write_out_of_range_writes_nothing)
{
    pop_mixed_chain();
    uint8_t src[16];
    memset(src, 0xff, sizeof(src));
    ck_assert_int_eq(virtq_chain_write(&tm.mem, ch, 0, src, 11), -EFAULT);
    ck_assert_int_eq(virtq_chain_write(&tm.mem, ch, 9, src, 2), -EFAULT);
    ck_assert_int_eq(virtq_chain_write(&tm.mem, ch, 11, src, 0), -EFAULT);
    ck_assert_int_eq(virtq_chain_write(&tm.mem, ch, UINT64_MAX, src, 2), -EFAULT);
    ck_assert_int_eq(virtq_chain_write(&tm.mem, ch, 2, src, UINT64_MAX - 1), -EFAULT);
    /* The length is checked before any copy: the guest saw nothing. */
    uint8_t zero[6] = {0};
    ck_assert_mem_eq(test_mem_at(&tm, DATA + 0x300, 4), zero, 4);
    ck_assert_mem_eq(test_mem_at(&tm, DATA + 0x400, 6), zero, 6);
}
END_TEST

/* virtq_chain_piece: the contiguous run at an offset, never past the
 * buffer, the max, or the readable/writable side asked for. */
START_TEST(s2_7_4_chain_piece_walks_buffers)
{
    pop_mixed_chain();
    static const struct {
        bool w;
        uint64_t off, max, gpa, len;
    } cases[] = {
        {false, 0, 100, DATA, 5},          {false, 3, 100, DATA + 3, 2},
        {false, 5, 100, DATA + 0x100, 7},  {false, 6, 3, DATA + 0x101, 3},
        {false, 12, 100, DATA + 0x200, 3}, {false, 14, 1, DATA + 0x202, 1},
        {true, 0, 100, DATA + 0x300, 4},   {true, 4, 100, DATA + 0x400, 6},
        {true, 9, 100, DATA + 0x405, 1},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t len = 99;
        uint8_t *p = virtq_chain_piece(&tm.mem, ch, cases[i].w, cases[i].off, cases[i].max, &len);
        ck_assert_ptr_eq(p, test_mem_at(&tm, cases[i].gpa, 1));
        ck_assert_uint_eq(len, cases[i].len);
    }
    /* The piece is the bytes virtq_chain_read sees at that offset. */
    uint64_t len;
    uint8_t *p = virtq_chain_piece(&tm.mem, ch, false, 7, 100, &len);
    uint8_t want[5];
    ck_assert_int_eq(virtq_chain_read(&tm.mem, ch, 7, want, len), 0);
    ck_assert_mem_eq(p, want, len);
}
END_TEST

START_TEST(s2_7_4_chain_piece_out_of_range)
{
    pop_mixed_chain();
    uint64_t len = 99;
    ck_assert_ptr_null(virtq_chain_piece(&tm.mem, ch, false, 15, 1, &len)); /* the end */
    ck_assert_uint_eq(len, 0);
    len = 99;
    ck_assert_ptr_null(virtq_chain_piece(&tm.mem, ch, true, 10, 1, &len));
    ck_assert_uint_eq(len, 0);
    ck_assert_ptr_null(virtq_chain_piece(&tm.mem, ch, false, UINT64_MAX, 1, &len));
    ck_assert_ptr_null(virtq_chain_piece(&tm.mem, ch, false, 0, 0, &len)); /* max 0 */
    ck_assert_uint_eq(len, 0);
    /* A huge max is cut at the buffer. */
    ck_assert_ptr_nonnull(virtq_chain_piece(&tm.mem, ch, true, 1, UINT64_MAX, &len));
    ck_assert_uint_eq(len, 3);
}
END_TEST

START_TEST(s2_7_4_chain_piece_skips_empty_and_checks_ram)
{
    memset(ch, 0, sizeof(*ch));
    ch->nbufs = 3;
    ch->nreadable = 3;
    ch->bufs[0] = (struct virtq_buf){DATA, 0, false};
    ch->bufs[1] = (struct virtq_buf){DATA + 0x10, 4, false};
    ch->bufs[2] = (struct virtq_buf){RAM - 4, 8, false}; /* forged: past RAM */
    ch->readable_len = 12;
    uint64_t len = 99;
    ck_assert_ptr_eq(virtq_chain_piece(&tm.mem, ch, false, 0, 100, &len),
                     test_mem_at(&tm, DATA + 0x10, 1));
    ck_assert_uint_eq(len, 4);
    ck_assert_ptr_null(virtq_chain_piece(&tm.mem, ch, false, 4, 100, &len));
    ck_assert_uint_eq(len, 0);
    /* Within RAM when cut short by max: fine. */
    ck_assert_ptr_nonnull(virtq_chain_piece(&tm.mem, ch, false, 4, 4, &len));
    ck_assert_uint_eq(len, 4);
}
END_TEST

START_TEST(s2_7_4_chain_buffer_outside_ram)
{
    /* virtq_chain_* re-check each buffer: a chain forged (or gone stale)
     * with a buffer outside RAM fails instead of touching host memory. */
    memset(ch, 0, sizeof(*ch));
    ch->nbufs = 2;
    ch->nreadable = 1;
    ch->bufs[0] = (struct virtq_buf){RAM - 4, 8, false};
    ch->bufs[1] = (struct virtq_buf){UINT64_MAX - 1, 8, true};
    ch->readable_len = ch->writable_len = 8;
    uint8_t buf[8] = {0};
    ck_assert_int_eq(virtq_chain_read(&tm.mem, ch, 0, buf, 8), -EFAULT);
    ck_assert_int_eq(virtq_chain_write(&tm.mem, ch, 0, buf, 8), -EFAULT);
}
END_TEST

/* ---- §2.7.7 / §2.7.10 notification suppression --------------------------- */

START_TEST(s2_7_7_should_notify)
{
    ck_assert(!virtq_should_notify(&q, &tm.mem)); /* nothing used */
    ring_publish(&r, ring_add_desc(&r, DATA, 8, true));
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_int_eq(virtq_push(&q, &tm.mem, ch->head, 1), 0);
    ck_assert(virtq_should_notify(&q, &tm.mem));
    ck_assert(!virtq_should_notify(&q, &tm.mem)); /* already told */
}
END_TEST

START_TEST(s2_7_7_no_interrupt_flag_honoured)
{
    ring_set_avail_flags(&r, VIRTQ_AVAIL_F_NO_INTERRUPT);
    ring_publish(&r, ring_add_desc(&r, DATA, 8, true));
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_int_eq(virtq_push(&q, &tm.mem, ch->head, 1), 0);
    ck_assert(!virtq_should_notify(&q, &tm.mem));
    /* Clearing the flag later does not replay the suppressed interrupt... */
    ring_set_avail_flags(&r, 0);
    ck_assert(!virtq_should_notify(&q, &tm.mem));
    /* ...but the next used buffer is announced. */
    ring_publish(&r, ring_add_desc(&r, DATA, 8, true));
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_int_eq(virtq_push(&q, &tm.mem, ch->head, 1), 0);
    ck_assert(virtq_should_notify(&q, &tm.mem));
}
END_TEST

START_TEST(s2_7_7_other_avail_flag_bits_ignored)
{
    ring_set_avail_flags(&r, 0xfffe);
    ring_publish(&r, ring_add_desc(&r, DATA, 8, true));
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_int_eq(virtq_push(&q, &tm.mem, ch->head, 1), 0);
    ck_assert(virtq_should_notify(&q, &tm.mem));
}
END_TEST

/* ---- §2.7 a broken queue --------------------------------------------------- */

START_TEST(s2_7_broken_stays_broken_until_reset)
{
    ring_publish(&r, QSIZE); /* bad head */
    assert_broken(0);
    /* The driver repairs the slot: too late. */
    uint16_t h = ring_add_desc(&r, DATA, 8, true);
    ring_set_avail_entry(&r, 0, h);
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), -EINVAL);
    ck_assert_int_eq(virtq_push(&q, &tm.mem, h, 0), -EINVAL);
    ck_assert_uint_eq(ring_used_idx(&r), 0);
    ck_assert(q.broken);

    q.max_size = 64;
    virtq_reset(&q);
    ck_assert(!q.broken);
    ck_assert(!q.ready);
    ck_assert_uint_eq(q.size, 0);
    ck_assert_uint_eq(q.desc_gpa | q.avail_gpa | q.used_gpa, 0);
    ck_assert_uint_eq(q.last_avail, 0);
    ck_assert_uint_eq(q.used_idx, 0);
    ck_assert_uint_eq(q.max_size, 64); /* kept */
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 0); /* not ready */

    /* Set up again (a driver after reset re-inits its ring too). */
    ring_init(&r, &tm.mem, RING_GPA, QSIZE);
    ring_to_virtq(&r, &q);
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), 0);
    ring_publish(&r, ring_add_desc(&r, DATA, 8, true));
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    ck_assert_int_eq(virtq_push(&q, &tm.mem, ch->head, 8), 0);
    ck_assert_uint_eq(ring_used_idx(&r), 1);
}
END_TEST

START_TEST(s2_7_broken_chain_consumes_nothing)
{
    /* A refused chain leaves last_avail where it was and the used ring
     * untouched: the device never half-consumes a bad request. */
    ring_publish(&r, ring_add_desc(&r, DATA, 8, false));
    ring_set_desc(&r, 1, RAM, 8, 0, 0);
    ring_publish(&r, 1);
    ck_assert_int_eq(virtq_pop(&q, &tm.mem, ch), 1);
    assert_broken(1);
}
END_TEST

Suite *virtq_suite(void)
{
    Suite *s = suite_create("virtq");
    TCase *tc = tcase_create("split");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, s2_7_5_desc_loop_to_itself);
    tcase_add_test(tc, s2_7_5_desc_loop_to_earlier);
    tcase_add_test(tc, s2_7_5_desc_next_out_of_range);
    tcase_add_test(tc, s2_7_5_desc_next_equals_size_valid_memory);
    tcase_add_test(tc, s2_7_5_desc_next_far_out_of_range);
    tcase_add_test(tc, s2_7_5_desc_next_ignored_without_flag);
    tcase_add_test(tc, s2_7_5_desc_addr_beyond_memory);
    tcase_add_test(tc, s2_7_5_desc_addr_straddles_end_of_memory);
    tcase_add_test(tc, s2_7_5_desc_addr_len_wraps_2_64);
    tcase_add_test(tc, s2_7_5_desc_addr_wraps_in_later_buffer);
    tcase_add_test(tc, s2_7_5_desc_buffer_ending_at_top_of_ram);
    tcase_add_test(tc, s2_7_5_desc_zero_length_buffer);
    tcase_add_test(tc, s2_7_5_desc_indirect_refused);
    tcase_add_test(tc, s2_7_5_desc_indirect_in_chain_refused);
    tcase_add_test(tc, s2_7_4_chain_as_long_as_queue);
    tcase_add_test(tc, s2_7_4_chain_longer_than_queue);
    tcase_add_test(tc, s2_7_4_chain_of_max_queue_size);
    tcase_add_test(tc, s2_7_4_loop_in_max_size_queue);
    tcase_add_test(tc, s2_7_4_loop_stops_at_size_hops);
    tcase_add_test(tc, s2_7_4_readable_after_writable);
    tcase_add_test(tc, s2_7_4_writable_only_and_readable_only);
    tcase_add_test(tc, s2_7_6_empty_queue_returns_0);
    tcase_add_test(tc, s2_7_6_not_ready_queue_returns_0);
    tcase_add_test(tc, s2_7_6_avail_idx_jumps_past_size);
    tcase_add_test(tc, s2_7_6_avail_idx_jumps_backwards);
    tcase_add_test(tc, s2_7_6_avail_full_ring_accepted);
    tcase_add_test(tc, s2_7_6_avail_head_equals_size);
    tcase_add_test(tc, s2_7_6_avail_head_ffff);
    tcase_add_test(tc, s2_7_6_avail_bad_head_after_good_ones);
    tcase_add_test(tc, s2_7_validate_size_zero);
    tcase_add_test(tc, s2_7_validate_size_not_power_of_two);
    tcase_add_test(tc, s2_7_validate_size_above_max);
    tcase_add_test(tc, s2_7_validate_size_above_virtq_max_size);
    tcase_add_test(tc, s2_7_validate_desc_misaligned);
    tcase_add_test(tc, s2_7_validate_avail_misaligned);
    tcase_add_test(tc, s2_7_validate_used_misaligned);
    tcase_add_test(tc, s2_7_validate_rings_outside_memory);
    tcase_add_test(tc, s2_7_validate_rings_checked_at_full_size);
    tcase_add_test(tc, s2_7_validate_rings_ending_at_top_of_ram);
    tcase_add_test(tc, s2_7_validate_used_ring_ending_at_top_of_ram);
    tcase_add_test(tc, s2_7_validate_ring_spanning_two_regions);
    tcase_add_test(tc, s2_7_8_pop_push_round_trip);
    tcase_add_test(tc, s2_7_8_push_out_of_order);
    tcase_add_test(tc, s2_7_8_push_head_out_of_range);
    tcase_add_test(tc, s2_7_index_wraparound);
    tcase_add_test(tc, s2_7_index_wraparound_jump_past_size);
    tcase_add_test(tc, s2_7_4_chain_read_across_buffers);
    tcase_add_test(tc, s2_7_4_chain_read_out_of_range);
    tcase_add_test(tc, s2_7_4_chain_write_across_buffers);
    tcase_add_test(tc, s2_7_4_chain_write_out_of_range_writes_nothing);
    tcase_add_test(tc, s2_7_4_chain_piece_walks_buffers);
    tcase_add_test(tc, s2_7_4_chain_piece_out_of_range);
    tcase_add_test(tc, s2_7_4_chain_piece_skips_empty_and_checks_ram);
    tcase_add_test(tc, s2_7_4_chain_buffer_outside_ram);
    tcase_add_test(tc, s2_7_7_should_notify);
    tcase_add_test(tc, s2_7_7_no_interrupt_flag_honoured);
    tcase_add_test(tc, s2_7_7_other_avail_flag_bits_ignored);
    tcase_add_test(tc, s2_7_broken_stays_broken_until_reset);
    tcase_add_test(tc, s2_7_broken_chain_consumes_nothing);
    suite_add_tcase(s, tc);
    return s;
}
