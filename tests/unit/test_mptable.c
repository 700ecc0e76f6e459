/* boot/mptable.c: Intel MP spec 1.4 tables, read back from guest memory. */
#include <errno.h>
#include <string.h>

#include "vmm/memory/layout.h"
#include "boot/loader.h"
#include "tests/unit/helpers.h"

enum { MP_PROCESSOR, MP_BUS, MP_IOAPIC, MP_INTSRC, MP_LINTSRC };
#define MPC_HDR_LEN 44
#define MPC_CPU_LEN 20
#define MPC_SMALL_LEN 8

static uint8_t sum8(const uint8_t *p, size_t n)
{
    uint8_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i];
    return s;
}

/* Walks the tables mptable_write left for `ncpus` CPUs and checks them. */
static void check_mptable(const struct test_mem *t, unsigned ncpus)
{
    const uint8_t *mpf = test_mem_at(t, LAYOUT_MPTABLE_START, 16);
    ck_assert_mem_eq(mpf, "_MP_", 4);
    ck_assert_uint_eq(mpf[8], 1);  /* length: one 16-byte paragraph */
    ck_assert_uint_eq(mpf[9], 4);  /* spec 1.4 */
    ck_assert_uint_eq(sum8(mpf, 16), 0);
    for (unsigned i = 11; i < 16; i++)
        ck_assert_uint_eq(mpf[i], 0); /* feature byte 1 = 0: config table present */
    uint32_t physptr = rd32le(mpf + 4);
    ck_assert_uint_eq(physptr, LAYOUT_MPTABLE_START + 16);
    /* Linux looks for the floating pointer in the last KiB of base memory */
    ck_assert_uint_ge(LAYOUT_MPTABLE_START, 639 * 1024);
    ck_assert_uint_lt(LAYOUT_MPTABLE_START, 640 * 1024);

    const uint8_t *mpc = test_mem_at(t, physptr, MPC_HDR_LEN);
    ck_assert_mem_eq(mpc, "PCMP", 4);
    uint16_t len = rd16le(mpc + 4);
    ck_assert_uint_eq(mpc[6], 4);
    mpc = test_mem_at(t, physptr, len);
    ck_assert_uint_eq(sum8(mpc, len), 0);
    ck_assert_uint_eq(rd32le(mpc + 36), LAYOUT_LAPIC_BASE);
    ck_assert_uint_eq(rd32le(mpc + 28), 0); /* no OEM table */
    ck_assert_uint_eq(rd16le(mpc + 32), 0);
    ck_assert_uint_eq(rd32le(mpc + 40), 0); /* no extended table */
    uint16_t count = rd16le(mpc + 34);
    ck_assert_uint_eq(count, ncpus + 1 + 1 + LAYOUT_IOAPIC_PINS + 2);

    unsigned cpus = 0, bsps = 0, ioapics = 0, buses = 0, intsrc = 0, lint = 0;
    unsigned ioapic_id = 0;
    size_t off = MPC_HDR_LEN;
    for (unsigned i = 0; i < count; i++) {
        ck_assert_uint_lt(off, len);
        const uint8_t *e = mpc + off;
        switch (e[0]) {
        case MP_PROCESSOR:
            ck_assert_uint_eq(e[1], cpus); /* APIC ID = CPU index */
            ck_assert_uint_ne(e[3] & 1, 0);  /* enabled */
            if (e[3] & 2) {
                bsps++;
                ck_assert_uint_eq(cpus, 0);  /* BSP flag only on CPU 0 */
            }
            cpus++;
            off += MPC_CPU_LEN;
            break;
        case MP_BUS:
            ck_assert_mem_eq(e + 2, "ISA", 3);
            buses++;
            off += MPC_SMALL_LEN;
            break;
        case MP_IOAPIC:
            ioapic_id = e[1];
            ck_assert_uint_eq(e[3] & 1, 1);
            ck_assert_uint_eq(rd32le(e + 4), LAYOUT_IOAPIC_BASE);
            ioapics++;
            off += MPC_SMALL_LEN;
            break;
        case MP_INTSRC:
            ck_assert_uint_eq(e[5], intsrc);     /* ISA IRQ n ... */
            ck_assert_uint_eq(e[6], ioapic_id); /* ... to this IOAPIC ... */
            ck_assert_uint_eq(e[7], intsrc);     /* ... pin n */
            intsrc++;
            off += MPC_SMALL_LEN;
            break;
        case MP_LINTSRC:
            lint++;
            off += MPC_SMALL_LEN;
            break;
        default:
            ck_abort_msg("unknown MP entry type %u at offset %zu", e[0], off);
        }
    }
    ck_assert_uint_eq(off, len);
    ck_assert_uint_eq(cpus, ncpus);
    ck_assert_uint_eq(bsps, 1);
    ck_assert_uint_eq(buses, 1);
    ck_assert_uint_eq(ioapics, 1);
    ck_assert_uint_eq(ioapic_id, ncpus); /* does not clash with an APIC ID */
    ck_assert_uint_eq(intsrc, LAYOUT_IOAPIC_PINS);
    ck_assert_uint_eq(lint, 2);
    ck_assert_uint_le(LAYOUT_MPTABLE_START + 16 + len, LAYOUT_HIMEM_START);
}

START_TEST(one_cpu)
{
    struct test_mem t;
    test_mem_init(&t, MiB(2));
    ck_assert_int_eq(mptable_write(&t.mem, 1), 0);
    check_mptable(&t, 1);
    test_mem_free(&t);
}
END_TEST

START_TEST(four_cpus)
{
    struct test_mem t;
    test_mem_init(&t, MiB(2));
    memset(test_mem_at(&t, LAYOUT_MPTABLE_START, 4096), 0x5a, 4096); /* stale bytes */
    ck_assert_int_eq(mptable_write(&t.mem, 4), 0);
    check_mptable(&t, 4);
    test_mem_free(&t);
}
END_TEST

START_TEST(max_cpus)
{
    struct test_mem t;
    test_mem_init(&t, MiB(2));
    ck_assert_int_eq(mptable_write(&t.mem, MPTABLE_MAX_CPUS), 0);
    check_mptable(&t, MPTABLE_MAX_CPUS);
    /* a smaller table written over a larger one is still consistent */
    ck_assert_int_eq(mptable_write(&t.mem, 3), 0);
    check_mptable(&t, 3);
    test_mem_free(&t);
}
END_TEST

START_TEST(bad_counts)
{
    struct test_mem t;
    test_mem_init(&t, MiB(2));
    ck_assert_int_eq(mptable_write(&t.mem, 0), -EINVAL);
    ck_assert_int_eq(mptable_write(&t.mem, MPTABLE_MAX_CPUS + 1), -EINVAL);
    ck_assert_int_eq(mptable_write(&t.mem, 256), -EINVAL);
    ck_assert_int_eq(mptable_write(&t.mem, UINT32_MAX), -EINVAL);
    /* nothing was written */
    ck_assert_uint_eq(rd32le(test_mem_at(&t, LAYOUT_MPTABLE_START, 4)), 0);
    test_mem_free(&t);
}
END_TEST

START_TEST(no_room)
{
    struct test_mem t;
    test_mem_init(&t, LAYOUT_MPTABLE_START + 64); /* RAM ends inside the table */
    ck_assert_int_eq(mptable_write(&t.mem, 1), -EFAULT);
    test_mem_free(&t);
    test_mem_init(&t, KiB(512));
    ck_assert_int_eq(mptable_write(&t.mem, 1), -EFAULT);
    test_mem_free(&t);
}
END_TEST

Suite *mptable_suite(void)
{
    Suite *s = suite_create("mptable");
    TCase *tc = tcase_create("mptable");
    tcase_add_test(tc, one_cpu);
    tcase_add_test(tc, four_cpus);
    tcase_add_test(tc, max_cpus);
    tcase_add_test(tc, bad_counts);
    tcase_add_test(tc, no_room);
    suite_add_tcase(s, tc);
    return s;
}
