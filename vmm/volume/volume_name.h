/* A named volume's name and size, as every caller takes them (the API's
 * POST /v1/volumes and create "mounts", `airlock volume`, `--volume`):
 * untrusted text, checked before it names a file. */
#ifndef AIRLOCK_VOLUME_VOLUME_NAME_H
#define AIRLOCK_VOLUME_VOLUME_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* [A-Za-z0-9][A-Za-z0-9_.-]{0,63}: a file name of its own (never ".",
 * "..", a '/' or a leading '.', which the store's temporaries use). */
#define VOLUME_NAME_MAX 64
/* MiB: 1 MiB to 1 TiB, a sparse file (only what the guest writes takes
 * room); 1 GiB when none is given. */
#define VOLUME_SIZE_MIN_MIB     1u
#define VOLUME_SIZE_MAX_MIB     (1u << 20)
#define VOLUME_SIZE_DEFAULT_MIB 1024u

/* Whether the len bytes at name are a volume name (a NUL among them is not). */
bool volume_name_ok(const char *name, size_t len);

/* A size in MiB as decimal digits only, in [VOLUME_SIZE_MIN_MIB,
 * VOLUME_SIZE_MAX_MIB].  0, or -EINVAL. */
int volume_size_parse(const char *text, uint32_t *mib);

#endif
