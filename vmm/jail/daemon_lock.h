/* `airlock serve` locking itself down once it has started: its listeners
 * are bound, its state folder is open and its spawner (vmm/util/
 * spawner.h) is forked, so from here on it needs no capability but the
 * few DAEMON_CAPS_KEPT names, and no syscall off its seccomp list
 * (the "daemon" kind of vmm/jail/seccomp.h).  Called from the main thread
 * before any other thread exists (capabilities are per thread); the
 * filter goes on with SECCOMP_FILTER_FLAG_TSYNC all the same, so no thread
 * a library started escapes it. */
#ifndef AIRLOCK_JAIL_DAEMON_LOCK_H
#define AIRLOCK_JAIL_DAEMON_LOCK_H

#include <stddef.h>

#include "vmm/jail/seccomp.h"

/* Drops every capability but the kept ones (from the bounding set when
 * we may: CAP_SETPCAP; effective, permitted and inheritable; the ambient
 * set cleared), then installs the daemon's filter in `mode` (off: neither,
 * said on stderr).  0, or -errno with why saying what failed. */
int daemon_lock(enum seccomp_mode mode, char *why, size_t whylen);

/* The capabilities a root daemon keeps, and why: "CAP_KILL ..." lines. */
extern const char *const daemon_caps_kept[];

#endif
