/* A create's volumes (the "mounts" entries with "volume", create_mounts.h;
 * docs/volumes.md): each held for the sandbox (its id: the hold outlives
 * its VM process and goes only when the sandbox is destroyed,
 * sandbox_life.c) and checked with e2fsck before its VM is started. */
#ifndef AIRLOCK_SANDBOX_CREATE_VOLUMES_H
#define AIRLOCK_SANDBOX_CREATE_VOLUMES_H

#include <stddef.h>

#include <jansson.h>

#include "vmm/sandbox/create_mounts.h"
#include "vmm/volume/volume_store.h"

/* Holds and checks every volume of cm for sandbox `id`, and makes each
 * one's spec the --disk of its file.  0 with *shown the sandbox record's
 * "volumes" ([{"volume", "target", "readonly", "check"}], NULL without
 * volumes); else the HTTP status (404: no such volume, 409: held by
 * another, naming it, 500) with err and *field ("mounts[I].volume"; in
 * field_buf), and nothing held. */
int create_volumes_hold(const struct volume_store *vs, const char *id, struct create_mounts *cm,
                        json_t **shown, char *err, size_t cap, char *field_buf, size_t fcap);

#endif
