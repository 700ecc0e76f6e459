/* Where airlock's own parameters (the virtio_mmio.device= announcements)
 * go in a user's kernel command line.  Linux stops parsing its parameters
 * at the first "--" token and hands everything after it to init as
 * arguments, so a parameter appended after `init=/bin/sh -- -c "..."`
 * reaches init, not the kernel (the root disk is then never found).
 * Tokens are split as Linux's next_arg() (kernel/params.c) splits them:
 * on whitespace outside double quotes, a quote toggling "inside". */
#ifndef AIRLOCK_BOOT_KERNEL_CMDLINE_H
#define AIRLOCK_BOOT_KERNEL_CMDLINE_H

#include <stddef.h>

/* The offset in `line` at which a parameter is still the kernel's: the
 * start of the first "--" token (bare, or quoted as "--", as parse_args
 * sees it), or of a token whose quote never closes (the kernel would
 * read the rest of the line as that one token), else strlen(line). */
size_t kcmdline_insert_at(const char *line);

/* Writes `line` with `params` (one or more space-separated parameters)
 * inserted at kcmdline_insert_at(line) into out (capacity cap, always
 * NUL-terminated when cap > 0): 0, or -E2BIG when it does not fit. */
int kcmdline_insert(char *out, size_t cap, const char *line, const char *params);

/* The inverse: writes the line kcmdline_insert(line, params) was made
 * from, given what it made (`full`) and params, into out (capacity cap).
 * 0; -ENOENT when params is not in full as kcmdline_insert puts it;
 * -E2BIG when it does not fit. */
int kcmdline_remove(char *out, size_t cap, const char *full, const char *params);

#endif
