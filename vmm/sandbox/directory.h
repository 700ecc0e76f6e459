/* A guest folder's entries and one path's kind, through the agent's LIST
 * and STAT:
 *   GET /v1/sandboxes/{id}/directory?path=/ABS[&depth=N]
 *       -> 200 {"path", "entries": [{"name", "type", "size", "mode",
 *              "mtime", "uid", "gid", "target"}...]}   (in name order;
 *              with depth N > 1 the subfolders' entries too, to that
 *              depth, each after its folder, with "rel": its path below
 *              the folder listed; type file|dir|symlink|other;
 *              mode the permission bits; "name_b64"/"target_b64" for
 *              bytes that are not UTF-8); 400 when it is not a folder
 *   GET /v1/sandboxes/{id}/stat?path=/ABS
 *       -> 200 {"path", "type", "size", "mode", "mtime", "target"}
 *              (lstat: a symlink is reported, not followed)
 * Both 404 when the path does not exist.  A listing holds at most
 * DIRECTORY_MAX_ENTRIES entries (413 past them): the guest decides how
 * many it sends, the daemon how many it keeps. */
#ifndef AIRLOCK_SANDBOX_DIRECTORY_H
#define AIRLOCK_SANDBOX_DIRECTORY_H

#include "vmm/sandbox/api_http.h"
#include "vmm/sandbox/registry.h"

#define DIRECTORY_MAX_ENTRIES 65536 /* the same as GUEST_LIST_MAX_ENTRIES */

void directory_list(struct api_conn *c, const struct sandbox *sb);
void directory_stat(struct api_conn *c, const struct sandbox *sb);

#endif
