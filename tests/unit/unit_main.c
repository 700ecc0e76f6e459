/* Runs every unit-test suite; exits non-zero when any check fails. */
#include <check.h>
#include <stdlib.h>

#include "tests/unit/helpers.h"

int main(void)
{
    Suite *(*const suites[])(void) = {
        gmem_suite,      elf_suite, bzimage_suite, loader_suite, memmap_suite, mptable_suite,
        cpu_entry_suite, bus_suite, serial_suite,  i8042_suite,  boot_timer_suite, options_suite,
        kernel_cmdline_suite,
        regressions_suite,
        virtq_suite,
        virtio_mmio_suite,
        disk_suite, blk_suite,
        agent_proto_suite, agent_reseed_suite, run_copy_suite,
        vsock_suite,
        http_request_suite,
        egress_policy_suite,
        surface_suite,
        audit_suite, egress_broker_suite,
        seccomp_suite,
        limits_suite,
        snapshot_devices_suite,
        snapshot_cpuid_suite,
        snapshot_file_suite, snapshot_memory_suite,
    };
    SRunner *sr = srunner_create(suites[0]());
    for (size_t i = 1; i < sizeof(suites) / sizeof(suites[0]); i++)
        srunner_add_suite(sr, suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
