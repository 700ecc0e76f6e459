/* Where an airlock finds its guest kernel and images: guest/ beside the
 * binary (the build tree: build/airlock -> build/guest/NAME), else
 * lib/airlock/ beside its bin/ (`make install`: /usr/local/bin/airlock ->
 * /usr/local/lib/airlock/NAME).  `airlock run` and the daemon (which keys
 * its cached snapshots by the image file) resolve names the same way. */
#ifndef AIRLOCK_UTIL_GUEST_PATHS_H
#define AIRLOCK_UTIL_GUEST_PATHS_H

#include <stddef.h>

/* NAME's path; the build tree's spelling when neither exists, so an
 * error names the path a developer expects. */
void guest_default_path(char *out, size_t cap, const char *name);

/* The guest kernel for a VM of `cpus` CPUs: for one CPU, vmlinux-up (the
 * same kernel with its one-CPU lock patch already in the file, see
 * guest/smp_unlock/smp_unlock.h) when it is there; vmlinux otherwise.
 * vmlinux-up must never boot with more than one CPU: its atomics have no
 * lock prefix. */
void guest_default_kernel(char *out, size_t cap, unsigned cpus);

#endif
