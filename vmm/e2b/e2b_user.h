/* The guest user an envd request acts as.  The SDK names one with
 * `Authorization: Basic base64("NAME:")` (envd's convention; the
 * password part is empty) and otherwise means the sandbox's default user:
 * the image's configured user when it has one, else "user" (E2B's
 * templates' account, which airlock's python image has too) when the
 * guest has it, else root.  Names are looked up in the guest's own
 * /etc/passwd (guest bytes: read bounded, parsed by libc's fgetpwent). */
#ifndef AIRLOCK_E2B_E2B_USER_H
#define AIRLOCK_E2B_E2B_USER_H

#include <stdint.h>

#include "vmm/sandbox/api_routes.h"

#define E2B_USER_NAME_MAX 32
#define E2B_PASSWD_MAX    (1u << 20)

struct e2b_user {
    char name[E2B_USER_NAME_MAX + 1];
    uint32_t uid, gid;
    char home[256];
};

/* The request's user into *u.  0, or -1 with the error answered on c
 * (401 for a malformed Authorization or a name the guest does not have,
 * as envd answers; 503 when the agent does not answer). */
int e2b_user_resolve(struct api_conn *c, struct sandbox *sb, struct e2b_user *u);

/* A path as the user gives it: relative ones are under their home; into
 * out (cap bytes), -1 when too long. */
int e2b_user_path(const struct e2b_user *u, const char *path, char *out, size_t cap);

/* The pure parts (e2b_passwd.c: unit-tested and fuzzed). */

/* A lookup in passwd bytes already read: by name (NULL: by uid).  0 with
 * *u, -1 when absent or unusable (a home that is not absolute or too long). */
int e2b_passwd_find(const char *bytes, size_t n, const char *name, uint32_t uid, struct e2b_user *u);

/* The user an Authorization value names ("Basic " + base64 of "NAME:"):
 * 1 with name, 0 when the value is empty (none named), -1 malformed. */
int e2b_basic_name(const char *auth, char name[E2B_USER_NAME_MAX + 1]);

#endif
