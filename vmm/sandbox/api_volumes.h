/* The API's named volumes (docs/volumes.md), in the daemon's state folder:
 *   POST   /v1/volumes          {"name", "size_mib"} -> 201 the record
 *                               (400 naming the field, 409 a name taken)
 *   GET    /v1/volumes          {"volumes": [record...]}, by name
 *   GET    /v1/volumes/{name}   the record (404: none)
 *   DELETE /v1/volumes/{name}   204; 409 while a sandbox (or an
 *                               `airlock run`) holds it, naming each
 * A record: {"name", "size_mib", "used_bytes", "created_ms", "holders":
 * [{"sandbox": ID | "pid": N, "readonly": B}]}. */
#ifndef AIRLOCK_SANDBOX_API_VOLUMES_H
#define AIRLOCK_SANDBOX_API_VOLUMES_H

#include "vmm/sandbox/api_http.h"
#include "vmm/volume/volume_store.h"

/* name: the path's part after /v1/volumes/ (NULL: the collection). */
void api_volumes(const struct volume_store *vs, struct api_conn *c, const char *name);

#endif
