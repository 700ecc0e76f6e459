/* One --copy-in HOST:GUEST or --copy-out GUEST:HOST of `airlock run`: the
 * parsed argument and its host file, opened while the options are parsed
 * (a typo costs no boot, and the jail and the seccomp filters forbid
 * open() once the VM runs).  The copies themselves go over the agent
 * (vmm/cli/run_thread.c).  Either side may be a file or a folder, with
 * `docker cp`'s rules (as `airlock cp` has them) where they apply
 * (docs/copy.md): a file copied in is GUEST, or goes inside GUEST under
 * its own name when GUEST is a folder.
 *
 * A copy-in of a folder is packed at once into a tar in an unnamed
 * temporary file (vmm/cli/cp_local.c: links stay links, modes kept, devices
 * left out with a warning); the VM process extracts it through the agent
 * (vmm/sandbox/guest_put.c): into GUEST under HOST's own name when GUEST is a
 * folder already, else as GUEST itself (its parents made); HOST/. copies
 * what the folder holds into GUEST.  A folder onto a guest file fails.
 *
 * A copy-out creates no host file before the command has ended and its
 * copy is complete.  When HOST is an existing folder the copy goes inside
 * it, under GUEST's own name (that name must not be a folder already: a
 * copy-out replaces a file whole but never merges into a folder).
 * Parsing checks what it can without creating anything (that folder
 * exists and we may write there) and opens an unnamed file in it
 * (O_TMPFILE; where the filesystem has none, a hidden
 * ".NAME.airlock-XXXXXX" that is removed on every path).  The VM process
 * looks at GUEST: a file (or a link, followed) is copied into the unnamed
 * file as it is; a folder is walked and written into it as a tar
 * (vmm/sandbox/guest_tree.c), within the same 1 GiB.  Once a copy completed
 * it says which in a page shared with the parent (vmm/jail/detach.c), which,
 * outside the jail and after the VM process reported its status, gives
 * it its name: a file is linked under the hidden name and renamed over
 * HOST, so an existing HOST is replaced whole or not at all; a folder's
 * tar is unpacked into a hidden staging folder beside HOST
 * (vmm/cli/run_copy_tree.c) and renamed to HOST, never over anything.  A run
 * that fails before (or during) the copy leaves HOST as it was. */
#ifndef AIRLOCK_CLI_RUN_COPY_H
#define AIRLOCK_CLI_RUN_COPY_H

#include <stdbool.h>
#include <sys/stat.h>

/* A folder copy-out's bounds beside RUN_COPY_OUT_MAX of file data: the
 * guest names every count and length, and the waiting parent holds the
 * folders' names until their modes are set. */
#define RUN_COPY_TREE_MAX_ENTRIES 100000
#define RUN_COPY_TREE_MAX_NAMES   (64ull << 20)

/* What the VM process says of a copy-out in the shared page. */
enum run_copy_done { RUN_COPY_PENDING, RUN_COPY_FILE, RUN_COPY_TREE };

struct run_copy {
    const char *arg;   /* as the user wrote it, for messages */
    char *host, *guest;
    int fd;            /* copy-in: the host file, or a host folder's tar;
                        * copy-out: the unnamed (or hidden) file the copy,
                        * or a guest folder's tar, goes to */
    struct stat st;    /* copy-in: its size and mode, taken then too */
    bool tree;         /* copy-in: a host folder (fd is its tar) */
    bool contents;     /* copy-in: HOST/. (the tar holds what it holds) */
    char *top;         /* copy-in of a folder: its own name, the tar's top */
    bool onto_file;    /* copy-out: HOST is an existing file (a folder cannot replace it) */
    char *into;        /* copy-out into an existing folder: HOST/NAME (host points here) */
    char *tmp;         /* copy-out: the hidden name (made at once without
                        * O_TMPFILE, else only when the copy is named) */
    bool named;        /* ... which exists now */
    volatile int *done; /* copy-out: shared with the parent; an enum run_copy_done */
    char why[640];     /* a refusal's own words, when an errno would not say it */
};

/* Parses "A:B" (modifies arg) into c.  A copy-in opens its host file
 * read-only (a regular file) or packs its folder; a copy-out checks HOST
 * as above and opens its unnamed file.  0, -EINVAL for a malformed
 * argument or a copy-in host path that is neither, or -errno (-EISDIR:
 * HOST ends in '/' and does not exist; -EEXIST: HOST/NAME is a folder;
 * -ENOENT, -ENOTDIR, -EACCES: its folder); c->why, when set, says it
 * better than the errno. */
int run_copy_parse(char *arg, bool in, struct run_copy *c);

/* Frees what parsing allocated and closes the fd (the tests; airlock
 * itself keeps them until it exits).  A hidden name is not removed. */
void run_copy_release(struct run_copy *c);

/* VM process: the copy into c->fd is complete, a file or a folder's tar. */
void run_copy_completed(struct run_copy *c, enum run_copy_done what);

/* Parent (vmm/jail/detach.c's finish step), or the VM process when it runs
 * undetached: names a completed copy-out HOST, or drops it.  0, or
 * -errno after printing "airlock: --copy-out ARG: ..." (the run then
 * exits 125). */
int run_copy_finish(struct run_copy *c);

#endif
