#include "vmm/sandbox/api_routes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/agent_client/command_defaults.h"
#include "vmm/image/image_ref.h"
#include "vmm/sandbox/api_commands.h"
#include "vmm/sandbox/api_events.h"
#include "vmm/sandbox/api_fields.h"
#include "vmm/sandbox/background.h"
#include "vmm/sandbox/events.h"
#include "vmm/sandbox/exec_stream.h"
#include "vmm/sandbox/sandbox_audit.h"
#include "vmm/sandbox/sandbox_boot.h"
#include "vmm/sandbox/sandbox_egress.h"
#include "vmm/sandbox/files.h"
#include "vmm/sandbox/image_defaults.h"
#include "vmm/sandbox/metrics.h"
#include "vmm/sandbox/sandbox_stats.h"
#include "vmm/sandbox/vm_proc.h"
#include "vmm/sandbox/watch_stream.h"
#include "vmm/util/base64.h"
#include "vmm/util/exit_codes.h"
#include "vmm/util/version.h"
#include "vmm/sandbox/api_create.h"
#include "vmm/sandbox/api_ports.h"
#include "vmm/sandbox/api_volumes.h"
#include "vmm/sandbox/sandbox_life.h"
#include "vmm/sandbox/sandbox_pause.h"
#include "vmm/sandbox/sandbox_ports.h"


/* ---- sandboxes ---- */

static json_t *sandbox_json(const struct sandbox *sb)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(sb->id));
    json_object_set_new(o, "state", json_string(sandbox_state_name(sb)));
    json_object_set_new(o, "image", json_string(sb->image));
    json_object_set_new(o, "mem", json_integer(sb->mem_mib));
    json_object_set_new(o, "cpus", json_integer(sb->cpus));
    json_object_set_new(o, "created_ms", json_integer(sb->created_ms));
    json_object_set_new(o, "create_ms", json_integer(sb->create_ms));
    json_object_set_new(o, "how", json_string(sb->how ? sb->how : "cold"));
    json_object_set_new(o, "snapshot", sb->snapshot[0] ? json_string(sb->snapshot) : json_null());
    json_object_set_new(o, "timeout_s", json_integer(sb->lease_s));
    json_object_set_new(o, "max_lifetime_s", json_integer(sb->max_lifetime_s));
    json_object_set_new(o, "commands_running", json_integer(sb->running));
    json_object_set_new(o, "watches", json_integer(sb->watches));
    json_object_set_new(o, "commands_run", json_integer((json_int_t)sb->commands));
    json_object_set(o, "labels", sb->labels);
    json_object_set(o, "env", sb->env);
    json_object_set_new(o, "ports", sandbox_ports_json((struct sandbox *)sb));
    json_object_set(o, "allow", sb->allow);
    json_object_set(o, "allow_ip", sb->allow_ip);
    sandbox_stats_json(sb, o);
    json_object_set_new(o, "volumes", sb->volumes ? json_incref(sb->volumes) : json_array());
    json_object_set_new(o, "on_timeout", json_string(sb->pause_on_timeout ? "pause" : "kill"));
    json_object_set_new(o, "pause_memory", json_boolean(!sb->timeout_fs_only));
    json_object_set_new(o, "memory_saved", sb->state == SB_PAUSED ? json_boolean(!sb->paused_fs_only)
                                                                   : json_null());
    json_object_set_new(o, "paused_ms", sb->paused_ms ? json_integer(sb->paused_ms) : json_null());
    json_object_set_new(o, "pauses", json_integer(sb->pauses));
    json_object_set_new(o, "resumes", json_integer(sb->resumes));
    return o;
}

/* GET .../audit: the sandbox's records as they are in its log. */
static void audit_get(struct api_conn *c, struct sandbox *sb)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/%s", sb->dir, SANDBOX_AUDIT_FILE);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        api_error(c, 500, NULL, "cannot read the sandbox's audit log: %s", strerror(errno));
    } else {
        /* Up to the last whole record: one being written is for the next read. */
        uint64_t len = (uint64_t)st.st_size;
        char tail[4096];
        while (len) {
            size_t n = len < sizeof(tail) ? (size_t)len : sizeof(tail);
            if (pread(fd, tail, n, (off_t)(len - n)) != (ssize_t)n)
                break;
            char *nl = memrchr(tail, '\n', n);
            if (nl) {
                len -= n - (size_t)(nl + 1 - tail);
                break;
            }
            len -= n;
        }
        api_reply_fd(c, 200, "application/x-ndjson", fd, len);
    }
    if (fd >= 0)
        close(fd);
}

static void create(struct api_server *srv, struct api_conn *c)
{
    json_t *o = body_object(c);
    if (!o)
        return;
    struct sandbox *sb = api_create_sandbox(srv, c, o);
    json_decref(o);
    if (!sb)
        return;
    pthread_mutex_lock(&srv->reg.lock);
    json_t *out = sandbox_json(sb);
    pthread_mutex_unlock(&srv->reg.lock);
    registry_put(&srv->reg, sb);
    api_reply(c, 201, out);
}

static void list(struct api_server *srv, struct api_conn *c)
{
    json_t *arr = json_array();
    sandbox_stats_refresh(&srv->reg, SANDBOX_STATS_MAX_AGE_MS);
    pthread_mutex_lock(&srv->reg.lock);
    for (unsigned i = 0; i < SANDBOX_MAX; i++)
        if (srv->reg.slots[i].state == SB_RUNNING || srv->reg.slots[i].state == SB_PAUSED)
            json_array_append_new(arr, sandbox_json(&srv->reg.slots[i]));
    pthread_mutex_unlock(&srv->reg.lock);
    json_t *o = json_object();
    json_object_set_new(o, "sandboxes", arr);
    api_reply(c, 200, o);
}

/* PATCH: a new lease, counted from now ("timeout_s"), and a new egress
 * allowlist ("allow", "allow_ip": each replaces its list), together or
 * apart.  Everything is checked before anything changes; the allowlist
 * goes first, as the one change that can fail. */
static void update(struct api_server *srv, struct api_conn *c, struct sandbox *sb)
{
    json_t *o = body_object(c);
    if (!o)
        return;
    struct fields f = {c, o, false};
    only_known(&f, (const char *const[]){"timeout_s", "allow", "allow_ip", NULL});
    long long lease = get_uint(&f, "timeout_s", 0, 31536000, -1);
    json_t *allow = get_list(&f, "allow", FIELD_MAX_TEXT);
    json_t *allow_ip = get_list(&f, "allow_ip", FIELD_MAX_TEXT);
    char err[600];
    const char *field = NULL;
    if (!f.failed && lease < 0 && !allow && !allow_ip)
        field_error(&f, "timeout_s", "%s", "give timeout_s (the new lease in seconds; 0: never), "
                    "allow or allow_ip (the new egress allowlist)");
    if (!f.failed && sandbox_egress_check(allow, allow_ip, err, sizeof(err), &field))
        field_error(&f, field, "%s", err);
    int http = 0;
    if (!f.failed && (allow || allow_ip))
        http = sandbox_egress_replace(&srv->reg, sb, allow, allow_ip, err, sizeof(err), &field);
    json_decref(o);
    if (f.failed)
        return;
    if (http)
        return api_error(c, http, field, "%s", err);
    pthread_mutex_lock(&srv->reg.lock);
    if (lease >= 0)
        sb->lease_s = (unsigned)lease;
    sb->last_used_mono_ms = agent_mono_ms();
    json_t *out = sandbox_json(sb);
    pthread_mutex_unlock(&srv->reg.lock);
    api_reply(c, 200, out);
}

static bool method_is(struct api_conn *c, const char *m)
{
    return !strcmp(c->req.method, m);
}

/* ---- snapshots ---- */

/* A request that takes no fields: its body is {} or none; else the
 * answer (400 naming the field) is given and false. */
static bool no_fields(struct api_conn *c)
{
    json_t *o = body_object(c);
    if (!o)
        return false;
    struct fields f = {c, o, false};
    only_known(&f, (const char *const[]){NULL});
    json_decref(o);
    return !f.failed;
}

static void take_snapshot(struct api_server *srv, struct api_conn *c, struct sandbox *sb)
{
    if (!no_fields(c)) /* nothing to give yet */
        return;
    json_t *out = NULL;
    char err[600];
    if (sb->volumes) /* a restore would attach the volume's file with no hold */
        return api_error(c, 409, NULL, "%s", "a sandbox with volumes cannot be snapshotted: its "
                         "volumes' disks are theirs, not the snapshot's");
    int http = snapshots_take(&srv->snaps, sb, &out, err, sizeof(err));
    if (http)
        return api_error(c, http, NULL, "%s", err);
    api_reply(c, 201, out);
}

/* /v1/snapshots and /v1/snapshots/{sid} (id NULL: the list). */
static void snapshot_routes(struct api_server *srv, struct api_conn *c, const char *id)
{
    if (!id) {
        if (!method_is(c, "GET"))
            return api_method_not_allowed(c, "GET");
        return api_reply(c, 200, snapshots_list(&srv->snaps));
    }
    struct snapshot_rec rec;
    if (method_is(c, "GET")) {
        if (!snapshots_find(&srv->snaps, id, &rec))
            return api_error(c, 404, NULL, "no snapshot '%.64s'", id);
        return api_reply(c, 200, snapshot_json(&rec));
    }
    if (method_is(c, "DELETE")) {
        if (!snapshots_delete(&srv->snaps, id))
            return api_error(c, 404, NULL, "no snapshot '%.64s'", id);
        return api_reply(c, 204, NULL);
    }
    api_method_not_allowed(c, "GET, DELETE");
}

/* ---- pause and resume ---- */

/* POST .../pause and .../resume: 200 with the sandbox's record. */
static void pause_or_resume(struct api_server *srv, struct api_conn *c, struct sandbox *sb,
                            bool pause)
{
    if (!method_is(c, "POST"))
        return api_method_not_allowed(c, "POST");
    json_t *o = body_object(c);
    if (!o)
        return;
    struct fields f = {c, o, false};
    only_known(&f, pause ? (const char *const[]){"memory", NULL} : (const char *const[]){NULL});
    bool memory = get_bool(&f, "memory", true);
    json_decref(o);
    if (f.failed)
        return;
    char err[600];
    int http = pause ? sandbox_pause(srv, sb, memory, err, sizeof(err))
                     : sandbox_resume(srv, sb, err, sizeof(err));
    if (http)
        return api_error(c, http, NULL, "%s", err);
    pthread_mutex_lock(&srv->reg.lock);
    json_t *out = sandbox_json(sb);
    pthread_mutex_unlock(&srv->reg.lock);
    api_reply(c, 200, out);
}

/* ---- routing ---- */


void api_handle(struct api_server *srv, struct api_conn *c)
{
    char path[HTTP_TARGET_MAX + 1];
    snprintf(path, sizeof(path), "%s", c->req.target);
    path[strcspn(path, "?")] = '\0';
    if (!strcmp(path, "/v1/version")) {
        if (!method_is(c, "GET"))
            return api_method_not_allowed(c, "GET");
        json_t *o = json_object();
        json_object_set_new(o, "version", json_string(AIRLOCK_VERSION));
        json_object_set_new(o, "api", json_string("v1"));
        return api_reply(c, 200, o);
    }
    if (!strcmp(path, "/v1/pool")) {
        if (!method_is(c, "GET"))
            return api_method_not_allowed(c, "GET");
        return api_reply(c, 200, pool_json(&srv->pool));
    }
    if (!strcmp(path, "/v1/metrics")) {
        if (!method_is(c, "GET"))
            return api_method_not_allowed(c, "GET");
        return metrics_get(srv, c);
    }
    if (!strcmp(path, "/v1/events")) {
        if (!method_is(c, "GET"))
            return api_method_not_allowed(c, "GET");
        return api_events(c);
    }
    if (!strncmp(path, "/v1/snapshots", 13) && (!path[13] || path[13] == '/'))
        return snapshot_routes(srv, c, path[13] ? path + 14 : NULL);
    if (!strncmp(path, "/v1/volumes", 11) && (!path[11] || path[11] == '/'))
        return api_volumes(&srv->volumes, c, path[11] ? path + 12 : NULL);
    if (!strcmp(path, "/v1/sandboxes")) {
        if (method_is(c, "GET"))
            return list(srv, c);
        if (method_is(c, "POST"))
            return create(srv, c);
        return api_method_not_allowed(c, "GET, POST");
    }
    const char *prefix = "/v1/sandboxes/";
    if (strncmp(path, prefix, strlen(prefix)))
        return api_error(c, 404, NULL, "no such path: %.200s", path);
    char *id = path + strlen(prefix);
    char *rest = strchr(id, '/');
    if (rest)
        *rest++ = '\0';
    bool commands = rest && !strncmp(rest, "commands", 8) && (!rest[8] || rest[8] == '/');
    bool ports = rest && !strncmp(rest, "ports", 5) && (!rest[5] || rest[5] == '/');
    bool watch = rest && !strcmp(rest, "watch");
    bool life = rest && (!strcmp(rest, "pause") || !strcmp(rest, "resume"));
    if (rest && !commands && !ports && !watch && !life && !files_route_known(rest) &&
        strcmp(rest, "audit") && strcmp(rest, "snapshot"))
        return api_error(c, 404, NULL, "no such path: %.200s", c->req.target);
    struct sandbox *sb = registry_find(&srv->reg, id);
    if (!sb)
        return api_error(c, 404, NULL, "no sandbox '%.64s'", id);
    if (life) {
        pause_or_resume(srv, c, sb, !strcmp(rest, "pause"));
        registry_put(&srv->reg, sb);
        return;
    }
    /* What uses the sandbox renews its lease, as it starts and as it ends
     * (an upload or a stdin write may take long): every request but a GET,
     * and the GETs that read the guest's files.  The GETs of the daemon's
     * own records (the sandbox, its commands' records, its audit) do not,
     * so a dashboard polling them keeps no sandbox alive.  A command,
     * reading a command's output, and a watch of its files hold the lease
     * while they last (api_commands.c, watch_stream.c): each is someone
     * using the sandbox now, and each ends when its client hangs up. */
    bool uses = !method_is(c, "GET") || (rest && files_route_known(rest)) || watch ||
                (ports && api_ports_is_route(rest + 5)); /* a guest port's HTTP */
    /* What uses it needs its VM: a paused sandbox resumes first (a DELETE
     * needs none, nor do the daemon's own records). */
    char err[600];
    int http = uses && !(!rest && method_is(c, "DELETE")) ? sandbox_resume(srv, sb, err, sizeof(err))
                                                          : 0;
    if (http) {
        api_error(c, http, NULL, "cannot resume sandbox %s: %s", sb->id, err);
        registry_put(&srv->reg, sb);
        return;
    }
    if (uses)
        sandbox_touch(srv, sb);
    if (rest && files_route_known(rest)) {
        files_route(c, sb, rest);
    } else if (watch) {
        if (method_is(c, "GET"))
            watch_get(c, &srv->reg, sb);
        else
            api_method_not_allowed(c, "GET");
    } else if (rest && !strcmp(rest, "snapshot")) {
        if (method_is(c, "POST"))
            take_snapshot(srv, c, sb);
        else
            api_method_not_allowed(c, "POST");
    } else if (rest && !strcmp(rest, "audit")) {
        if (method_is(c, "GET"))
            audit_get(c, sb);
        else
            api_method_not_allowed(c, "GET");
    } else if (commands) {
        api_commands(srv, c, sb, rest + 8);
    } else if (ports) {
        /* A guest port's own HTTP (a WebSocket may stay for hours) holds
         * the lease while it lasts, as a command does. */
        bool held = api_ports_is_route(rest + 5);
        pthread_mutex_lock(&srv->reg.lock);
        sb->proxying += held;
        pthread_mutex_unlock(&srv->reg.lock);
        api_ports(c, sb, rest + 5);
        pthread_mutex_lock(&srv->reg.lock);
        sb->proxying -= held;
        pthread_mutex_unlock(&srv->reg.lock);
    } else if (method_is(c, "GET")) {
        sandbox_stats_refresh_one(&srv->reg, sb, SANDBOX_STATS_MAX_AGE_MS);
        pthread_mutex_lock(&srv->reg.lock);
        json_t *o = sandbox_json(sb);
        pthread_mutex_unlock(&srv->reg.lock);
        api_reply(c, 200, o);
    } else if (method_is(c, "DELETE")) {
        registry_ref(&srv->reg, sb); /* destroy drops one; ours is dropped below */
        sandbox_destroy(srv, sb);
        events_emit(EVENT_KILLED, sb->id, NULL); /* the slot waits for our reference */
        api_reply(c, 204, NULL);
    } else if (method_is(c, "PATCH")) {
        update(srv, c, sb);
    } else {
        api_method_not_allowed(c, "GET, PATCH, DELETE");
    }
    if (uses)
        sandbox_touch(srv, sb);
    registry_put(&srv->reg, sb);
}

/* ---- the server ---- */

/* A freed slot's background commands go with it (none runs, nobody
 * reads one: each held a reference to the sandbox). */
static void release_sandbox(struct sandbox *sb)
{
    bg_table_free(sb->bg);
}

/* A connection to one of a paused sandbox's ports resumes it. */
static int port_wake(void *ctx, struct sandbox *sb)
{
    struct api_server *srv = ctx;
    pthread_mutex_lock(&srv->reg.lock);
    bool paused = sb->state == SB_PAUSED;
    pthread_mutex_unlock(&srv->reg.lock);
    char err[600];
    if (paused && sandbox_resume(srv, sb, err, sizeof(err))) {
        fprintf(stderr, "airlock: sandbox %s: a connection to its port could not resume it: %s\n",
                sb->id, err);
        return -EAGAIN;
    }
    return 0;
}

void api_server_init(struct api_server *srv, unsigned max, uint64_t max_mem_mib)
{
    registry_init(&srv->reg, max, max_mem_mib);
    srv->reg.release = release_sandbox;
    sandbox_ports_on_dial(port_wake, srv);
    srv->audit_fd = -1;
    pthread_mutex_init(&srv->audit_lock, NULL);
}

/* ---- supervision ---- */

void api_supervise(struct api_server *srv)
{
    int64_t now = agent_mono_ms();
    for (unsigned i = 0; i < SANDBOX_MAX; i++) {
        struct sandbox *sb = &srv->reg.slots[i];
        pthread_mutex_lock(&srv->reg.lock);
        bool due = false, pause = false;
        const char *why = NULL; /* its event's reason, when one is due */
        if (sb->state == SB_POOLED && vm_proc_ended(sb->pid, NULL)) {
            sb->pid = 0;
            due = true;
            sb->refs++;
        } else if (sb->state == SB_RUNNING) {
            int64_t age_ms = now - sb->last_used_mono_ms;
            bool ended = vm_proc_ended(sb->pid, NULL);
            if (ended)
                sb->pid = 0; /* reaped: its pid is not ours to signal any more */
            /* Connections through its ports hold the lease too; their
             * lock comes after the registry's, as in sandbox_json. */
            bool connected = sandbox_ports_busy(sb) > 0;
            if (connected) /* its lease counts from its last connection's end */
                sb->last_used_mono_ms = now;
            bool idle = !sb->running && !sb->proxying && !sb->watches && !connected;
            bool lease_out = idle && sb->lease_s && age_ms > (int64_t)sb->lease_s * 1000;
            bool lived = sb->max_lifetime_s &&
                         agent_wall_ms() - sb->created_ms > (int64_t)sb->max_lifetime_s * 1000;
            due = ended || (lease_out && !(sb->pause_on_timeout && !sb->no_pause)) || lived;
            why = ended ? NULL : lived ? "max_lifetime" : "idle";
            pause = !due && lease_out;
            if (pause)
                sb->last_used_mono_ms = now; /* once: the pause takes it from here */
            if (due || pause)
                sb->refs++;
        }
        bool running = sb->state == SB_RUNNING && !due && !pause;
        if (running)
            sb->refs++;
        bool listed = due && sb->state == SB_RUNNING; /* a pooled VM was nobody's */
        char id[SANDBOX_ID_HEX + 1];
        memcpy(id, sb->id, sizeof(id));
        pthread_mutex_unlock(&srv->reg.lock);
        /* Its lease ran out all the same: said first, and before the
         * pause's own event, which comes from the pausing thread. */
        if (pause)
            events_emit(EVENT_LEASE_EXPIRED, id,
                        json_pack("{s:s,s:s}", "reason", "idle", "on_timeout", "pause"));
        if (pause)
            sandbox_pause_async(srv, sb); /* takes the reference */
        if (due)
            sandbox_destroy(srv, sb);
        if (listed && why)
            events_emit(EVENT_LEASE_EXPIRED, id, json_pack("{s:s}", "reason", why));
        else if (listed)
            events_emit(EVENT_EXITED, id, NULL);
        if (running) {
            sandbox_forward_audit(srv, sb);
            registry_put(&srv->reg, sb);
        }
    }
    sandbox_stats_refresh(&srv->reg, SANDBOX_STATS_REFRESH_MS);
}

void api_stop_all(struct api_server *srv)
{
    pool_stop(&srv->pool);
    for (unsigned i = 0; i < SANDBOX_MAX; i++) {
        struct sandbox *sb = &srv->reg.slots[i];
        pthread_mutex_lock(&srv->reg.lock);
        enum sandbox_state st = sb->state;
        bool live = st == SB_RUNNING || st == SB_POOLED || (st == SB_PAUSED && srv->on_exit_kill);
        if (live)
            sb->refs++;
        pthread_mutex_unlock(&srv->reg.lock);
        if (!live)
            continue;
        char err[600];
        int http = st == SB_RUNNING && !srv->on_exit_kill ? sandbox_pause(srv, sb, true, err, sizeof(err))
                                                          : -1;
        if (http > 0)
            fprintf(stderr, "airlock: sandbox %s could not be paused (%s): it goes with the "
                    "daemon\n", sb->id, err);
        if (http)
            sandbox_destroy(srv, sb);
        else
            registry_put(&srv->reg, sb);
    }
    /* What stays is in the state folder: their folders of this run go
     * (their audit records copied out first). */
    for (unsigned i = 0; i < SANDBOX_MAX; i++) {
        struct sandbox *sb = &srv->reg.slots[i];
        if (sb->state != SB_PAUSED)
            continue;
        int e = sandbox_pause_rewrite(srv, sb);
        if (e)
            fprintf(stderr, "airlock: paused sandbox %s: its record could not be written again "
                    "(%s): the next daemon gets its ports and commands as they were when it "
                    "paused\n", sb->id, strerror(-e));
        sandbox_forward_audit(srv, sb);
        sandbox_teardown(sb);
    }
    snapshots_delete_all(&srv->snaps);
}
