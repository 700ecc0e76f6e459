/* e2fsprogs' tools (mke2fs, debugfs, e2fsck) run as child processes with
 * a fixed argv, never through a shell: found on PATH, else in /usr/sbin
 * and /sbin (a user's PATH on Debian has no sbin); each dies with the
 * process that runs it (PR_SET_PDEATHSIG), and a signal caught by
 * image_stop.h kills it.  Their output goes to a file the caller keeps
 * for its error message. */
#ifndef AIRLOCK_IMAGE_E2FS_TOOL_H
#define AIRLOCK_IMAGE_E2FS_TOOL_H

#include <stddef.h>

/* Runs argv with stdin from `in` (or /dev/null) and stdout/stderr into
 * `log`; its exit status (128 + the signal that killed it), or -errno
 * (-EINTR once an import was stopped). */
int e2fs_tool_run(char *const argv[], const char *in, int log);

/* The last line written to `log`, for an error message. */
void e2fs_tool_last_line(int log, char *out, size_t cap);

#endif
