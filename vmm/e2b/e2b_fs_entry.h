/* envd's EntryInfo from an agent entry, and the path rules it needs: pure
 * functions (unit-tested). */
#ifndef AIRLOCK_E2B_E2B_FS_ENTRY_H
#define AIRLOCK_E2B_E2B_FS_ENTRY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/e2b/e2b_user.h"

/* path cleaned as Go's filepath.Clean does for an absolute path: no
 * empty or "." parts, ".." taken back (never above "/"), no trailing
 * '/'.  0, or -1 when it is not absolute or out (cap bytes) is short. */
int e2b_clean_path(const char *path, char *out, size_t cap);

/* Go's os.FileMode.String() of a kind and permission bits (07777):
 * "-rw-r--r--", "drwxr-xr-x", "Lrwxrwxrwx", "dtrwxrwxrwx"... into out
 * (at least 16 bytes). */
void e2b_permissions(uint32_t kind, uint32_t mode, char *out);

/* EntryInfo's proto JSON for the entry at absolute `path`: name (its last
 * part), type, path, size (a string), mode, permissions, owner, group
 * (names from `names`), modifiedTime, symlinkTarget (a link's target
 * made absolute against its folder).  NULL when a name or path cannot be
 * JSON (bytes that are not UTF-8). */
json_t *e2b_entry_info(const struct e2b_names *names, const char *path,
                       const struct agent_entry *e);

#endif
