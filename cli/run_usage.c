/* `airlock run --help`: the flags, their defaults and units, kept apart
 * from the parser so cmd_run.c stays about running. */
#include "cli/run_usage.h"

#include <stdio.h>

#include "jail/jail.h"
#include "util/timings.h"

void run_usage(void)
{
    printf("usage: airlock run [options] -- CMD [ARGS...]\n"
           "\n"
           "Runs CMD in a fresh microVM (the default kernel, the image as a copy-on-write\n"
           "root, the guest agent as PID 1) and exits with its status: 128+N if signal N\n"
           "killed it, 124 on --timeout, 126 if it cannot run, 127 if not found, 125 for\n"
           "airlock's own errors.  The VM and all its writes are gone afterwards.\n"
           "\n"
           "  --timeout SEC     kill CMD's process group after SEC seconds (exit 124;\n"
           "                    default 3600, 0: none)\n"
           "  -e K=V            set an environment variable (repeatable)\n"
           "  -w DIR            working directory in the guest (default /)\n"
           "  --user UID[:GID]  run as this user (default 65534, nobody)\n"
           "  -i                pass our stdin to CMD\n"
           "  --nproc N         RLIMIT_NPROC for CMD's user (default 1024)\n"
           "  --nofile N        RLIMIT_NOFILE (default 4096)\n"
           "  --fsize MiB       RLIMIT_FSIZE, the largest file CMD may write (default: none)\n"
           "  --max-output MiB  stdout and stderr together beyond this are dropped and\n"
           "                    reported; CMD keeps running (default 1024)\n"
           "  --disk-cap MiB    the root image's copy-on-write overlay: writes beyond it\n"
           "                    fail in the guest with I/O errors (default 1024)\n"
           "  --console-rate KIB_PER_S, --console-max MiB  console limits (with --console;\n"
           "                    defaults 1024 and 64, 0: none)\n"
           "  --allow HOST[:PORT]     let CMD reach HOST (\"*.example.com\": its subdomains)\n"
           "                    through the guest's proxy; PORT 443 unless given, * any\n"
           "  --allow-ip CIDR[:PORT] let CMD reach these addresses (also loopback/private)\n"
           "  --egress-max-conns N   egress connections open at once (default 16)\n"
           "  --egress-max-mib N     bytes each way per connection, MiB (default 1024)\n"
           "  --egress-rate N        new egress connections per minute (default 120)\n"
           "  --audit FILE      append JSON-lines records: exec, exit, every egress attempt\n"
           "  --quiet           do not report denied egress on stderr\n"
           "  --mem MiB, --cpus N, --disk SPEC (extra disks, /dev/vdb on)\n"
           "  --image NAME|PATH root image: python (the default: guest/python.ext4 beside\n"
           "                    airlock), small (the busybox rootfs.ext4), or a file\n"
           "  --kernel PATH     guest kernel (default: guest/vmlinux beside airlock)\n"
           "  --console FILE    keep the guest's console in FILE (debugging)\n"
           "  --vsock-uds PATH  also let host programs reach guest ports as with boot:\n"
           "                    connect to the Unix socket PATH, write \"CONNECT <port>\\n\";\n"
           "                    the guest reaching CID 2 port P (not airlock's own) gets PATH_P\n"
           "  --seccomp MODE    kill (default), trap (name a forbidden syscall), off\n"
           JAIL_USAGE
           TIMINGS_USAGE
           "  --append STR      extra kernel command-line arguments\n"
           "  --copy-in HOST:GUEST   copy a host file into the guest before CMD\n"
           "  --copy-out GUEST:HOST  copy a guest file out after CMD (at most 1 GiB)\n"
           "  --from-snapshot DIR    restore the VM `airlock snapshot` saved in DIR instead\n"
           "                    of booting (it fixes --mem, --cpus, --image, --kernel,\n"
           "                    --disk, --append and --disk-cap; each restore is private)\n"
           "\n"
           "airlock snapshot --out DIR [--compress] [the options above that shape the VM]\n"
           "boots as run would, waits until the guest agent is ready, saves the VM into DIR\n"
           "(new or empty: state.dtb, memory, diskN.cow; --compress: zlib memory) and stops.\n");
}
