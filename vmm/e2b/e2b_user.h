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

/* The same for a name given another way (/files' ?username=): NULL or ""
 * means the default user. */
int e2b_user_resolve_name(struct api_conn *c, struct sandbox *sb, const char *name,
                          struct e2b_user *u);

/* The guest's /etc/passwd and /etc/group, for owner and group names. */
struct e2b_names {
    char *passwd, *group;
    size_t pn, gn;
};
/* Reads both through an agent connection (missing files are empty).
 * 0 or -errno. */
int e2b_names_load(int agent, struct e2b_names *n);
void e2b_names_free(struct e2b_names *n);
/* uid's or gid's name into buf (the number when the guest has none). */
const char *e2b_uid_name(const struct e2b_names *n, uint32_t uid, char *buf, size_t cap);
const char *e2b_gid_name(const struct e2b_names *n, uint32_t gid, char *buf, size_t cap);

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
