/* One --copy-in HOST:GUEST or --copy-out GUEST:HOST of `airlock run`: the
 * parsed argument and its host file, opened while the options are parsed
 * (a typo costs no boot, and the seccomp filters forbid open() once the VM
 * runs).  The copies themselves go over the agent (cli/cmd_run.c). */
#ifndef AIRLOCK_CLI_RUN_COPY_H
#define AIRLOCK_CLI_RUN_COPY_H

#include <stdbool.h>
#include <sys/stat.h>

struct run_copy {
    const char *arg;   /* as the user wrote it, for messages */
    char *host, *guest;
    int fd;            /* the host file, opened while parsing (the seccomp
                        * filter forbids open() once the VM runs) */
    struct stat st;    /* copy-in: its size and mode, taken then too */
};

/* Parses "A:B" (modifies arg) into c and opens the host file: read-only for
 * a copy-in (which must be a regular file), created for a copy-out (it is
 * emptied when the copy begins).  0, -EINVAL for a malformed argument or a
 * host path that is not a regular file, or -errno from open. */
int run_copy_parse(char *arg, bool in, struct run_copy *c);

#endif
