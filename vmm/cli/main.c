/* airlock: a minimal KVM monitor for throw-away microVMs. */
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cli/commands.h"
#include "vmm/util/exit_codes.h"
#include "vmm/jail/jail.h"
#include "vmm/report/surface.h"
#include "vmm/runtime/runtime_main.h"
#include "vmm/util/timings.h"
#include "vmm/util/version.h"


static void usage(FILE *f)
{
    fprintf(f, "usage: airlock COMMAND [options]\n"
               "\n"
               "commands:\n"
               "  boot      boot a kernel with its serial console on stdio\n"
               "  run       run a command in a fresh microVM\n"
               "  snapshot  boot a VM until its agent is ready and save it (run --from-snapshot)\n"
               "  serve     keep sandboxes (VMs across commands) behind an HTTP/JSON API\n"
               "  create    make a sandbox in airlock serve and print its id\n"
               "  exec      run a command in a sandbox (exit status as run's)\n"
               "  update    change a running sandbox's egress allowlist or lease\n"
               "  ls, rm    list sandboxes, destroy them\n"
               "  stats     what each sandbox costs the host (CPU, memory, disk, egress)\n"
               "  pause     save a sandbox to disk and end its VM (resume restores it)\n"
               "  cp        copy files and folders in and out of a sandbox (docker cp's rules)\n"
               "  image     import OCI/docker images and rootfs tarballs as root disks; ls, inspect, rm\n"
               "  volume    named volumes: disks that outlive sandboxes (create, ls, rm)\n"
               "  mcp       an MCP server on stdio whose tools use one sandbox\n"
               "  surface   print what a guest can reach in this build (--json for tools)\n"
               "\n"
               "airlock COMMAND --help describes each.\n");
}

/* A closed stdin/stdout/stderr would be reused by the next open(), and then
 * console I/O would hit a KVM or epoll fd: keep 0-2 taken by /dev/null. */
static void fill_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        int null = open("/dev/null", O_RDWR);
        if (null >= 0 && null != fd) {
            dup2(null, fd);
            close(null);
        }
    }
}

int main(int argc, char **argv)
{
    timings_mark(TM_START);
    fill_std_fds();
    jail_note_inherited_fds(); /* before we open anything ourselves */
    /* One malloc arena for every thread: a second arena makes glibc read
     * /sys/devices/system/cpu/online (an open() the seccomp filters do not
     * allow once the VM runs), and our threads seldom allocate at once. */
    mallopt(M_ARENA_MAX, 1);
    /* Under the name airlock-runtime (a link to this binary, as `make`
     * and `make install` make it): the OCI runtime. */
    const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;
    if (argc > 0 && !strcmp(base ? base + 1 : argv[0], RUNTIME_NAME))
        return runtime_main(argc, argv);
    if (argc < 2) {
        usage(stderr);
        return EXIT_AIRLOCK_ERROR;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "boot"))
        return cmd_boot(argc - 1, argv + 1);
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "snapshot"))
        return cmd_snapshot(argc - 1, argv + 1);
    if (!strcmp(cmd, "serve"))
        return cmd_serve(argc - 1, argv + 1);
    if (!strcmp(cmd, "create"))
        return cmd_create(argc - 1, argv + 1);
    if (!strcmp(cmd, "exec"))
        return cmd_exec(argc - 1, argv + 1);
    if (!strcmp(cmd, "update"))
        return cmd_update(argc - 1, argv + 1);
    if (!strcmp(cmd, "ls"))
        return cmd_ls(argc - 1, argv + 1);
    if (!strcmp(cmd, "cp"))
        return cmd_cp(argc - 1, argv + 1);
    if (!strcmp(cmd, "image"))
        return cmd_image(argc - 1, argv + 1);
    if (!strcmp(cmd, "stats"))
        return cmd_stats(argc - 1, argv + 1);
    if (!strcmp(cmd, "rm"))
        return cmd_rm(argc - 1, argv + 1);
    if (!strcmp(cmd, "volume"))
        return cmd_volume(argc - 1, argv + 1);
    if (!strcmp(cmd, "pause"))
        return cmd_pause(argc - 1, argv + 1);
    if (!strcmp(cmd, "resume"))
        return cmd_resume(argc - 1, argv + 1);
    if (!strcmp(cmd, "mcp"))
        return cmd_mcp(argc - 1, argv + 1);
    if (!strcmp(cmd, "sandbox-vm"))
        return cmd_sandbox_vm(argc - 1, argv + 1);
    if (!strcmp(cmd, "surface"))
        return cmd_surface(argc - 1, argv + 1);
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("airlock %s\n", AIRLOCK_VERSION);
        return 0;
    }
    fprintf(stderr, "airlock: unknown command '%s' (see airlock --help)\n", cmd);
    return EXIT_AIRLOCK_ERROR;
}
