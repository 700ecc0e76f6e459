/* An imported image's config (vmm/image/image_ref.h) as the defaults of its
 * sandbox's commands, as `airlock run --image` takes them: its Env under
 * the create's "env" (which wins), its WorkingDir and User where a
 * command gives no "cwd" or "user".  A sandbox runs the commands it is
 * given: Entrypoint and Cmd are not used. */
#ifndef AIRLOCK_SANDBOX_IMAGE_DEFAULTS_H
#define AIRLOCK_SANDBOX_IMAGE_DEFAULTS_H

#include <jansson.h>

#include "vmm/sandbox/registry.h"

/* Sets sb->env (a new object: env's entries, then the image's), sb->cwd
 * and the user fields from rec (NULL: a built-in image, env only). */
void image_defaults_apply(struct sandbox *sb, const json_t *rec, json_t *env);

#endif
