/* airlock: a minimal KVM monitor for throw-away microVMs. */
#include <stdio.h>
#include <string.h>

#include "vmm/commands.h"
#include "vmm/exit_codes.h"

#ifndef AIRLOCK_VERSION
#define AIRLOCK_VERSION "dev"
#endif

static void usage(FILE *f)
{
    fprintf(f, "usage: airlock COMMAND [options]\n"
               "\n"
               "commands:\n"
               "  boot      boot a kernel with its serial console on stdio\n"
               "\n"
               "airlock COMMAND --help describes each.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_AIRLOCK_ERROR;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "boot"))
        return cmd_boot(argc - 1, argv + 1);
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
