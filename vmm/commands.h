/* The subcommands of the airlock binary. */
#ifndef AIRLOCK_VMM_COMMANDS_H
#define AIRLOCK_VMM_COMMANDS_H

/* airlock boot [options]: argv[0] is "boot". */
int cmd_boot(int argc, char **argv);

#endif
