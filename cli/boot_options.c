#include "jail/seccomp.h"
#include "cli/boot_options.h"
#include "kvm/console.h"
#include "util/timings.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "memory/layout.h"
#include "boot/loader.h"
#include "util/parse.h"

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

enum { OPT_KERNEL = 1, OPT_INITRD, OPT_CMDLINE, OPT_MEM, OPT_CPUS, OPT_CONSOLE, OPT_ENTRY,
       OPT_KVM, OPT_ALLOW_PVM, OPT_DISK, OPT_VSOCK_UDS, OPT_CID, OPT_SECCOMP, OPT_JAIL,
       OPT_HELP = OPT_JAIL + JAIL_NOPTS };
enum { OPT_CONSOLE_RATE = 200, OPT_CONSOLE_MAX, OPT_TIMINGS };

static int parse_entry(const char *s, enum kernel_entry *out)
{
    if (!strcmp(s, "auto"))
        *out = ENTRY_AUTO;
    else if (!strcmp(s, "pvh"))
        *out = ENTRY_PVH;
    else if (!strcmp(s, "linux64"))
        *out = ENTRY_LINUX64;
    else
        return -EINVAL;
    return 0;
}

int boot_options_parse(struct boot_options *o, int argc, char **argv, char *err, size_t errlen)
{
    static const struct option longopts[] = {
        {"kernel", required_argument, NULL, OPT_KERNEL},
        {"initrd", required_argument, NULL, OPT_INITRD},
        {"cmdline", required_argument, NULL, OPT_CMDLINE},
        {"mem", required_argument, NULL, OPT_MEM},
        {"cpus", required_argument, NULL, OPT_CPUS},
        {"console", required_argument, NULL, OPT_CONSOLE},
        {"console-rate", required_argument, NULL, OPT_CONSOLE_RATE},
        {"console-max", required_argument, NULL, OPT_CONSOLE_MAX},
        {"entry", required_argument, NULL, OPT_ENTRY},
        {"kvm", required_argument, NULL, OPT_KVM},
        {"allow-pvm", no_argument, NULL, OPT_ALLOW_PVM},
        {"disk", required_argument, NULL, OPT_DISK},
        {"vsock-uds", required_argument, NULL, OPT_VSOCK_UDS},
        {"cid", required_argument, NULL, OPT_CID},
        {"seccomp", required_argument, NULL, OPT_SECCOMP},
        {"help", no_argument, NULL, OPT_HELP},
        {"timings", optional_argument, NULL, OPT_TIMINGS},
        JAIL_LONGOPTS(OPT_JAIL),
        {0},
    };
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
        uint64_t v;
        if (c >= OPT_JAIL && c < OPT_JAIL + JAIL_NOPTS) {
            if (jail_parse_flag(&o->jail, c - OPT_JAIL, optarg, err, errlen))
                return -EINVAL;
            continue;
        }
        switch (c) {
        case OPT_KERNEL: o->kernel = optarg; break;
        case OPT_INITRD: o->initrd = optarg; break;
        case OPT_CMDLINE: o->cmdline = optarg; break;
        case OPT_CONSOLE: o->console = optarg; break;
        case OPT_CONSOLE_RATE:
        case OPT_CONSOLE_MAX:
            if (console_parse_limit(c == OPT_CONSOLE_RATE ? "--console-rate" : "--console-max",
                                    optarg, c == OPT_CONSOLE_RATE ? &o->console_rate_kib
                                                                  : &o->console_max_mib,
                                    err, errlen))
                return -EINVAL;
            break;
        case OPT_KVM: o->kvm_path = optarg; break;
        case OPT_TIMINGS: {
            enum timings_format f;
            if (timings_parse(optarg, &f)) {
                snprintf(err, errlen, "--timings=%s: want --timings or --timings=json", optarg);
                return -EINVAL;
            }
            timings_enable(f);
            break;
        }
        case OPT_ALLOW_PVM: o->allow_pvm = true; break;
        case OPT_HELP: boot_options_usage(); return 1;
        case OPT_VSOCK_UDS: o->vsock_uds = optarg; break;
        case OPT_SECCOMP: {
            enum seccomp_mode m;
            if (seccomp_parse_mode(optarg, &m)) {
                snprintf(err, errlen, "--seccomp '%s': want kill, trap or off", optarg);
                return -EINVAL;
            }
            seccomp_set_mode(m);
            break;
        }
        case OPT_CID:
            if (parse_uint(optarg, UINT64_MAX, &v) || v < 3 || v > 0xfffffffeULL) {
                snprintf(err, errlen, "--cid '%s': want a whole number from 3 to 4294967294",
                         optarg);
                return -EINVAL;
            }
            o->cid = v;
            break;
        case OPT_DISK:
            if (o->ndisks == LAYOUT_VIRTIO_SLOTS) {
                snprintf(err, errlen, "--disk %s: at most %d disks", optarg, LAYOUT_VIRTIO_SLOTS);
                return -EINVAL;
            }
            o->disks[o->ndisks++] = optarg;
            break;
        case OPT_MEM:
            if (parse_uint(optarg, UINT64_MAX, &v) || v < LAYOUT_MEM_MIN_MIB || v > LAYOUT_MEM_MAX_MIB) {
                snprintf(err, errlen, "--mem '%s': want a whole number of MiB from %d to %d",
                         optarg, (int)LAYOUT_MEM_MIN_MIB, (int)LAYOUT_MEM_MAX_MIB);
                return -EINVAL;
            }
            o->mem_mib = v;
            break;
        case OPT_CPUS:
            if (parse_uint(optarg, UINT64_MAX, &v) || v < 1 || v > MPTABLE_MAX_CPUS) {
                snprintf(err, errlen, "--cpus '%s': want a whole number from 1 to %d", optarg,
                         MPTABLE_MAX_CPUS);
                return -EINVAL;
            }
            o->cpus = (unsigned)v;
            break;
        case OPT_ENTRY:
            if (parse_entry(optarg, &o->entry)) {
                snprintf(err, errlen, "--entry '%s': want auto, pvh or linux64", optarg);
                return -EINVAL;
            }
            break;
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
    if (o->ndisks + (o->vsock_uds ? 1 : 0) > LAYOUT_VIRTIO_SLOTS) {
        snprintf(err, errlen, "--disk and --vsock-uds: at most %d virtio devices in all",
                 LAYOUT_VIRTIO_SLOTS);
        return -EINVAL;
    }
    if (!o->kernel) {
        snprintf(err, errlen, "--kernel PATH is required (see airlock boot --help)");
        return -EINVAL;
    }
    return 0;
}
