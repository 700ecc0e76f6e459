/* One --copy-in HOST:GUEST or --copy-out GUEST:HOST of `airlock run`: the
 * parsed argument and its host file, opened while the options are parsed
 * (a typo costs no boot, and the jail and the seccomp filters forbid
 * open() once the VM runs).  The copies themselves go over the agent
 * (cli/run_thread.c).
 *
 * A copy-out creates no host file before the command has ended and its
 * copy is complete: parsing checks what it can without creating anything
 * (HOST's directory exists and we may write there, HOST is not a
 * directory) and opens an unnamed file in that directory (O_TMPFILE;
 * where the filesystem has none, a hidden ".NAME.airlock-XXXXXX" that is
 * removed on every path).  The VM process writes into it; once a copy
 * completed it says so in a page shared with the parent (jail/detach.c),
 * which, outside the jail and after the VM process reported its status,
 * gives the file its name: link (or the hidden name) then rename over
 * HOST, so an existing HOST is replaced whole or not at all.  A run that
 * fails before (or during) the copy leaves HOST as it was. */
#ifndef AIRLOCK_CLI_RUN_COPY_H
#define AIRLOCK_CLI_RUN_COPY_H

#include <stdbool.h>
#include <sys/stat.h>

struct run_copy {
    const char *arg;   /* as the user wrote it, for messages */
    char *host, *guest;
    int fd;            /* copy-in: the host file; copy-out: the unnamed (or
                        * hidden) file the copy goes to */
    struct stat st;    /* copy-in: its size and mode, taken then too */
    char *tmp;         /* copy-out: the hidden name (made at once without
                        * O_TMPFILE, else only when the copy is named) */
    bool named;        /* ... which exists now */
    volatile int *done; /* copy-out: shared with the parent; 1 once complete */
};

/* Parses "A:B" (modifies arg) into c.  A copy-in opens its host file
 * read-only (it must be a regular file); a copy-out checks HOST as above
 * and opens its unnamed file.  0, -EINVAL for a malformed argument or a
 * copy-in host path that is not a regular file, or -errno (-EISDIR: HOST
 * is a directory; -ENOENT, -ENOTDIR, -EACCES: its directory). */
int run_copy_parse(char *arg, bool in, struct run_copy *c);

/* Frees what parsing allocated and closes the fd (the tests; airlock
 * itself keeps them until it exits).  A hidden name is not removed. */
void run_copy_release(struct run_copy *c);

/* VM process: the copy into c->fd is complete. */
void run_copy_completed(struct run_copy *c);

/* Parent (jail/detach.c's finish step), or the VM process when it runs
 * undetached: names a completed copy-out HOST, or drops it.  0, or
 * -errno after printing "airlock: --copy-out ARG: ..." (the run then
 * exits 125). */
int run_copy_finish(struct run_copy *c);

#endif
