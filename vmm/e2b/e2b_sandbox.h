/* What the E2B layer's two planes share about a sandbox: the envd
 * version it claims, the sandbox plane's access token, and the template
 * name it reports. */
#ifndef AIRLOCK_E2B_E2B_SANDBOX_H
#define AIRLOCK_E2B_E2B_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/sandbox/api_routes.h"

/* The envd version the sandboxes report: the SDK switches features on by
 * it (its src/envd/versions.ts), so it names the newest whose features
 * this layer implements: stdin (0.3.0), a default user (0.4.0), closing
 * stdin (0.5.2), octet-stream uploads (0.5.7). */
#define E2B_ENVD_VERSION "0.5.7"
/* The template a create without one gets, and the image it names. */
#define E2B_DEFAULT_TEMPLATE "base"
#define E2B_DEFAULT_IMAGE    "python"

/* The sandbox's access token into out (65 bytes), made on first use:
 * 32 random bytes as hex.  0, or -1 when the kernel gives no randomness. */
int e2b_access_token(struct api_server *srv, struct sandbox *sb, char out[65]);
/* Whether `given` is the sandbox's token (constant time; a sandbox that
 * never handed one out has none, and nothing matches it). */
bool e2b_access_token_ok(struct api_server *srv, struct sandbox *sb, const char *given);

#endif
