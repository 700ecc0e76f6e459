/* A container's folder under the runtime's --root, and what `state`
 * reports about it.
 *
 * ROOT/ID/ holds:
 *   state.json  what create recorded (bundle, rootfs, created, the
 *               stand-in's pid and its start time, annotations), written
 *               under a temporary name and renamed, so a reader never sees
 *               half of one;
 *   start       a FIFO that exists while the container is "created": the
 *               init stand-in blocks writing to it until `start` reads;
 *   paused      exists while the VM is paused;
 *   execs/PID   one per `exec` stand-in (its start time inside), for
 *               `kill --all` and `ps`;
 *   agent.sock  the VM's agent (hybrid vsock), vm.log its stderr.
 *
 * The status is never stored: it is read off the stand-in process (alive,
 * and the same process: its start time in /proc/PID/stat matches), the
 * FIFO and the paused marker, so a stand-in that died any way at all
 * reads as "stopped". */
#ifndef AIRLOCK_RUNTIME_CONTAINER_STATE_H
#define AIRLOCK_RUNTIME_CONTAINER_STATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "vmm/util/proc_start.h"

#define RUNTIME_DEFAULT_ROOT "/run/airlock-runtime"
#define CONTAINER_ID_MAX 1024

enum container_status {
    CONTAINER_CREATING, /* the folder exists, the stand-in is not recorded yet */
    CONTAINER_CREATED,
    CONTAINER_RUNNING,
    CONTAINER_PAUSED,
    CONTAINER_STOPPED,
};

struct container {
    char id[CONTAINER_ID_MAX + 1];
    char dir[PATH_MAX];
    json_t *state; /* state.json, NULL before create recorded it */
    pid_t pid;     /* the init stand-in, 0 before */
    uint64_t pid_start;
};

/* Whether id is one runc would take: [A-Za-z0-9_+.-], not "." or "..". */
bool container_id_ok(const char *id);

/* Opens the container `id` under root: 0; -ENOENT when there is none;
 * else -errno.  container_close releases it. */
int container_open(const char *root, const char *id, struct container *c);
void container_close(struct container *c);

/* Makes ROOT/ID (and ROOT): 0, -EEXIST when the id is taken, or -errno. */
int container_make(const char *root, const char *id, struct container *c);

/* Writes state.json from c->state (atomically): 0 or -errno. */
int container_save(const struct container *c);

/* A path inside the container's folder. */
void container_path(const struct container *c, const char *name, char *out, size_t cap);

/* proc_start_time: vmm/util/proc_start.h (a pid with its start time). */

/* The status now (see above). */
enum container_status container_status(const struct container *c);
const char *container_status_name(enum container_status s);

/* The state JSON `airlock-runtime state` prints (runtime spec's "state"
 * plus "rootfs" and "created" as runc prints them): a new reference. */
json_t *container_state_json(const struct container *c);

/* Records an exec stand-in (execs/PID) / removes its record. */
int container_add_exec(const struct container *c, pid_t pid);
void container_drop_exec(const struct container *c, pid_t pid);
/* The exec stand-ins still alive (records of dead ones are removed):
 * how many were put in pids (at most cap). */
unsigned container_execs(const struct container *c, pid_t *pids, unsigned cap);

/* Removes the folder and everything in it. */
void container_remove(const struct container *c);

#endif
