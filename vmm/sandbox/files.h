/* Single files in and out of a sandbox, through the agent's FILE_PUT and
 * FILE_GET (written as root, exactly the bytes given or no file at all):
 *   PUT /v1/sandboxes/{id}/files?path=/ABS&mode=OCTAL&user=UID:GID&parents=true
 *                                      body: the bytes -> 200 {"path", "size"}
 *                                      (user: the file's owner, root's by
 *                                      default; parents: missing folders
 *                                      on its way made, owned likewise)
 *   GET /v1/sandboxes/{id}/files?path=/ABS
 *                                      -> 200 application/octet-stream
 * At most FILES_MAX bytes each way (413); the guest's errno comes back as
 * 404 (no such file or folder), 400 (a folder, a bad path) or 403. */
#ifndef AIRLOCK_SANDBOX_FILES_H
#define AIRLOCK_SANDBOX_FILES_H

#include <stdbool.h>

#include "vmm/sandbox/api_http.h"
#include "vmm/sandbox/registry.h"

#define FILES_MAX (64ull << 20)

void files_put(struct api_conn *c, const struct sandbox *sb);
void files_get(struct api_conn *c, const struct sandbox *sb);
/* Guest file `path` as the answer (200, its bytes, at most FILES_MAX):
 * 0 once answered (also with a 503 when the agent does not answer), or
 * the guest's -errno with nothing sent, for the caller to answer in its
 * API's words. */
int files_send(struct api_conn *c, const struct sandbox *sb, const char *path);
/* DELETE .../files?path=/ABS[&recursive=true]: 204; 409 for a folder that
 * holds entries without recursive; 404 when nothing is there. */
void files_delete(struct api_conn *c, const struct sandbox *sb);
/* POST .../directory?path=/ABS[&parents=true][&mode=OCTAL][&user=UID[:GID]]:
 * 201 {"path", "created": true}, or 200 with false when it was a folder
 * already; 409 when a file is in the way. */
void files_mkdir(struct api_conn *c, const struct sandbox *sb);
/* POST .../move?from=/ABS&to=/ABS[&no_replace=true]: 200, the moved
 * entry as stat answers it (404 when from is missing, 409 when no_replace
 * finds something at to). */
void files_move(struct api_conn *c, const struct sandbox *sb);

/* The sandbox's file paths: "files", "directory", "stat", "archive", "move"
 * (what follows /v1/sandboxes/{id}/).  files_route serves one with its
 * methods (405 for others). */
bool files_route_known(const char *rest);
void files_route(struct api_conn *c, const struct sandbox *sb, const char *rest);

#endif
