#include "vmm/cli/boot_options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "boot/loader.h"
#include "vmm/cli/vm_options.h"
#include "vmm/jail/seccomp.h"
#include "vmm/kvm/console.h"
#include "vmm/memory/layout.h"
#include "vmm/util/timings.h"

void boot_options_usage(void)
{
    printf("usage: airlock boot --kernel PATH [options]\n"
           "\n"
           "Boots a kernel with its serial console on stdout (input from stdin).\n"
           "Exits 0 when the guest resets (Linux: reboot -f with reboot=k), 125 on\n"
           "any error of airlock's or a guest crash (triple fault, kernel panic).\n"
           "\n"
           "  --kernel PATH     vmlinux (ELF, PVH note or 64-bit entry) or bzImage\n"
           "  --initrd PATH     initramfs/initrd image\n"
           "  --cmdline STR     kernel command line (default: \"%s\")\n"
           "  --mem MiB         guest RAM, %d..%d (default %d)\n"
           "  --cpus N          vCPUs, 1..min(KVM's limit, %d) (default 1)\n"
           "  --console WHERE   stdio (default), none, or a file path to write\n"
           "  --console-rate KIB_PER_S  console output beyond this rate is dropped\n"
           "                    (default 1024, bursts of 4 s pass; 0: no limit)\n"
           "  --console-max MiB at most this much console output in all (default 64;\n"
           "                    0: no limit); drops are reported on stderr\n"
           "  --disk PATH[,ro][,cow[=SIZE]][,serial=ID]\n"
           "                    a virtio-blk disk (repeatable; the first is /dev/vda):\n"
           "                    ro = read-only; cow = the guest may write, but writes\n"
           "                    go to a private overlay (at most SIZE bytes, K/M/G)\n"
           "                    that vanishes with the VM; the file is never changed\n"
           "  --vsock-uds PATH  a virtio-vsock device; host programs connect to the Unix\n"
           "                    socket PATH and send \"CONNECT <port>\\n\" (Firecracker's\n"
           "                    hybrid vsock); the guest reaching CID 2 port P gets PATH_P\n"
           "  --cid N           the guest's vsock CID, 3..4294967294 (default 3)\n"
           "  --entry MODE      auto (default: PVH if the kernel has it), pvh, linux64\n"
           "  --kvm PATH        KVM device (default %s)\n"
           "  --allow-pvm       boot a Linux kernel even on a kvm-pvm host (only for\n"
           "                    PVM-aware guest kernels; a stock one fails there)\n"
           "  --seccomp MODE    kill (default: a syscall off the allowlist kills airlock),\n"
           "                    trap (name the syscall, exit 125), off (no filter)\n"
           TIMINGS_USAGE
           JAIL_USAGE,
           BOOT_DEFAULT_CMDLINE, (int)LAYOUT_MEM_MIN_MIB, (int)LAYOUT_MEM_MAX_MIB,
           BOOT_DEFAULT_MEM_MIB, MPTABLE_MAX_CPUS, BOOT_DEFAULT_KVM);
}

int boot_options_parse(struct boot_options *o, int argc, char **argv, char *err, size_t errlen)
{
    enum { OPT_HELP = 1 };
    static const struct option own[] = {{"help", no_argument, NULL, OPT_HELP}, {0}};
    struct option longopts[64];
    if (vm_longopts(VMO_FOR_BOOT, own, longopts, sizeof(longopts) / sizeof(longopts[0])) < 0) {
        snprintf(err, errlen, "internal error: too many options");
        return -EINVAL;
    }
    *o = (struct boot_options){
        .cmdline = BOOT_DEFAULT_CMDLINE, .mem_mib = BOOT_DEFAULT_MEM_MIB, .cpus = 1,
        .console = "stdio", .kvm_path = BOOT_DEFAULT_KVM, .entry = ENTRY_AUTO,
        .cid = VSOCK_GUEST_CID_DEFAULT,
        .console_rate_kib = CONSOLE_DEFAULT_RATE_KIB, .console_max_mib = CONSOLE_DEFAULT_MAX_MIB,
    };
    optind = 0; /* glibc: 0 also resets getopt's position inside an argument */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        if (c >= VMO_KERNEL && c < VMO_END) {
            if (vm_option_set(o, c, optarg, err, errlen))
                return -EINVAL;
            continue;
        }
        switch (c) {
        case OPT_HELP: boot_options_usage(); return 1;
        case ':':
            snprintf(err, errlen, "%s needs a value", argv[optind - 1]);
            return -EINVAL;
        default:
            if (optopt > ' ' && optopt < 0x7f)
                snprintf(err, errlen, "unknown option '-%c' (see airlock boot --help)", optopt);
            else
                snprintf(err, errlen, "unknown option '%s' (see airlock boot --help)",
                         argv[optind - 1]);
            return -EINVAL;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s' (see airlock boot --help)", argv[optind]);
        return -EINVAL;
    }
    if (vm_options_check_slots(o, 0, err, errlen))
        return -EINVAL;
    if (!o->kernel) {
        snprintf(err, errlen, "--kernel PATH is required (see airlock boot --help)");
        return -EINVAL;
    }
    return 0;
}
