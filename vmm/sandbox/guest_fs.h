/* What the folder routes (directory, stat, archive) share: the path
 * parameter, one agent connection with a deadline, and the guest's errno
 * as an answer naming the path. */
#ifndef AIRLOCK_SANDBOX_GUEST_FS_H
#define AIRLOCK_SANDBOX_GUEST_FS_H

#include <jansson.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/sandbox/api_http.h"
#include "vmm/sandbox/registry.h"

/* How long the daemon waits for each answer of the agent: a guest that
 * stops answering fails the request (504) instead of holding its thread. */
#define GUEST_FS_WAIT_S 60

/* The `path` query parameter into path (AGENT_MAX_PATH bytes): absolute,
 * no NUL; "/a/b/" loses its trailing '/'.  0, or -1 with a 400 sent. */
int guest_fs_path(struct api_conn *c, char *path);
/* A connection to the sandbox's agent with GUEST_FS_WAIT_S on each
 * receive: the fd, or -1 with a 503 sent. */
int guest_fs_dial(struct api_conn *c, const struct sandbox *sb);
/* The answer for a guest errno (or the transport's) about `path`:
 * 404 it or a folder on its way is missing, 403 refused, 413 too large,
 * 502 a broken answer, 504 no answer in time, 503 no agent, else 400 (a
 * folder where a file was wanted, a bad path). */
void guest_fs_error(struct api_conn *c, const char *path, int e);
int guest_fs_status(int e);
/* An entry as JSON: type, size, mode, mtime, target (symlinks), and the
 * name when given ("name", or "name_b64" when it is not UTF-8; likewise
 * "target_b64"). */
json_t *guest_fs_entry_json(const struct agent_entry *e, const char *name);
/* s as o's "key", or as "key_b64" when it is not UTF-8 (JSON cannot carry
 * it). */
void guest_fs_set_text(json_t *o, const char *key, const char *s);

#endif
