/* Single files in and out of a sandbox, through the agent's FILE_PUT and
 * FILE_GET (written as root, exactly the bytes given or no file at all):
 *   PUT /v1/sandboxes/{id}/files?path=/ABS&mode=OCTAL   body: the bytes
 *                                      -> 200 {"path", "size"}
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

/* The sandbox's file paths: "files", "directory", "stat", "archive"
 * (what follows /v1/sandboxes/{id}/).  files_route serves one with its
 * methods (405 for others). */
bool files_route_known(const char *rest);
void files_route(struct api_conn *c, const struct sandbox *sb, const char *rest);

#endif
