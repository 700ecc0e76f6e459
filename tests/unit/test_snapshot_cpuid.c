/* A restore refuses a host whose CPUID differs from the snapshot's
 * (vm_snapshot_cpuid_check): equal tables pass in any order; a changed
 * register, a leaf gone and a leaf added each fail with the leaf named.
 * And the table a guest gets has the TSC-deadline timer (vmm/kvm/cpuid.c). */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "vmm/kvm/cpuid.h"
#include "vmm/snapshot/vm_snapshot.h"

static struct snap_vcpu *snap;
static struct kvm_cpuid2 *here;
static char err[256];

static const struct kvm_cpuid_entry2 leaves[] = {
    {.function = 0, .eax = 0xd, .ebx = 0x68747541},
    {.function = 1, .eax = 0x00a20f10, .ecx = 0xfef83203, .edx = 0x178bfbff},
    {.function = 7, .index = 0, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .ebx = 0x219c97a9},
    {.function = 7, .index = 1, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX},
    {.function = 0xd, .index = 1, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .eax = 0xf},
};
#define NLEAVES (sizeof(leaves) / sizeof(leaves[0]))

static void setup(void)
{
    snap = calloc(1, sizeof(*snap));
    here = calloc(1, sizeof(*here) + CPUID_MAX_ENTRIES * sizeof(here->entries[0]));
    ck_assert(snap && here);
    snap->ncpuid = NLEAVES;
    memcpy(snap->cpuid, leaves, sizeof(leaves));
    /* This host's table lists the same leaves in reverse order. */
    here->nent = NLEAVES;
    for (unsigned i = 0; i < NLEAVES; i++)
        here->entries[i] = leaves[NLEAVES - 1 - i];
    err[0] = 0;
}

static void teardown(void)
{
    free(snap);
    free(here);
}

static void expect_refused(const char *msg)
{
    ck_assert_int_eq(vm_snapshot_cpuid_check(here, snap, 1, err, sizeof(err)), -EINVAL);
    if (!strstr(err, msg))
        ck_abort_msg("error '%s' does not contain '%s'", err, msg);
}

START_TEST(same_table_in_any_order)
{
    ck_assert_int_eq(vm_snapshot_cpuid_check(here, snap, 0, err, sizeof(err)), 0);
}
END_TEST

START_TEST(a_register_differs)
{
    here->entries[NLEAVES - 1 - 2].ebx ^= 1u << 18; /* leaf 7.0: RDSEED gone here */
    expect_refused("vCPU 1: this host's CPU differs from the snapshot's: CPUID leaf 0x7.0 ebx "
                   "is 0x219897a9 here, 0x219c97a9 in the snapshot");
}
END_TEST

START_TEST(flags_differ)
{
    here->entries[0].flags = 0; /* leaf 0xd.1 */
    expect_refused("CPUID leaf 0xd.1 flags is 0 here, 0x1 in the snapshot");
}
END_TEST

START_TEST(a_leaf_is_missing_here)
{
    here->entries[NLEAVES - 1 - 3] = here->entries[--here->nent]; /* drop leaf 7.1 */
    expect_refused("vCPU 1: CPUID leaf 0x7.1 of the snapshot is not offered on this host");
}
END_TEST

START_TEST(this_host_has_more)
{
    here->entries[here->nent++] = (struct kvm_cpuid_entry2){.function = 0x80000008};
    expect_refused("vCPU 1: this host offers 6 CPUID leaves, the snapshot had 5");
}
END_TEST

START_TEST(an_empty_snapshot_table_fits_only_an_empty_host_table)
{
    snap->ncpuid = 0;
    expect_refused("this host offers 5 CPUID leaves, the snapshot had 0");
    here->nent = 0;
    ck_assert_int_eq(vm_snapshot_cpuid_check(here, snap, 0, err, sizeof(err)), 0);
}
END_TEST

/* cpuid_for_vcpu sets leaf 1's ECX bit 24 (TSC-deadline) where KVM has
 * the timer, and only then; the supported table it starts from is left
 * as KVM gave it, and the bit is the only difference the flag makes. */
START_TEST(tsc_deadline_is_set_by_the_filter_only_where_kvm_has_it)
{
    here->nent = NLEAVES;
    memcpy(here->entries, leaves, sizeof(leaves));
    struct kvm_cpuid2 *with = cpuid_for_vcpu(here, 0, 1, true);
    struct kvm_cpuid2 *without = cpuid_for_vcpu(here, 0, 1, false);
    ck_assert(with && without);
    ck_assert_int_eq(memcmp(here->entries, leaves, sizeof(leaves)), 0);
    ck_assert_uint_eq(with->entries[1].ecx & (1u << 24), 1u << 24);
    ck_assert_uint_eq(without->entries[1].ecx & (1u << 24), 0);
    without->entries[1].ecx |= 1u << 24;
    ck_assert_int_eq(memcmp(with->entries, without->entries, sizeof(leaves)), 0);
    free(with);
    free(without);
}
END_TEST

Suite *snapshot_cpuid_suite(void)
{
    Suite *s = suite_create("snapshot_cpuid");
    TCase *tc = tcase_create("check");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, same_table_in_any_order);
    tcase_add_test(tc, a_register_differs);
    tcase_add_test(tc, flags_differ);
    tcase_add_test(tc, a_leaf_is_missing_here);
    tcase_add_test(tc, this_host_has_more);
    tcase_add_test(tc, an_empty_snapshot_table_fits_only_an_empty_host_table);
    tcase_add_test(tc, tsc_deadline_is_set_by_the_filter_only_where_kvm_has_it);
    suite_add_tcase(s, tc);
    return s;
}
