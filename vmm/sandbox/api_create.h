/* A sandbox made as a create request describes it (POST /v1/sandboxes's
 * fields): from the warm pool, a snapshot, or a cold boot.  The one way
 * every API makes a sandbox (the E2B layer's creates come here too). */
#ifndef AIRLOCK_SANDBOX_API_CREATE_H
#define AIRLOCK_SANDBOX_API_CREATE_H

#include <jansson.h>

#include "vmm/sandbox/api_routes.h"

/* The new sandbox, running, with a reference the caller drops
 * (registry_put); or NULL with the error answered on c (naming the field
 * it refuses).  o is the request's object (the caller's). */
struct sandbox *api_create_sandbox(struct api_server *srv, struct api_conn *c, json_t *o);

/* A limit flag a resumed VM gets again (the static string), or NULL for
 * one that shaped the VM's disks (the snapshot keeps that) or none. */
const char *api_create_resume_flag(const char *flag);

#endif
