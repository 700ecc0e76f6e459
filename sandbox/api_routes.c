#include "sandbox/api_routes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent_client/agent_conn.h"
#include "agent_client/command_defaults.h"
#include "sandbox/exec_stream.h"
#include "sandbox/files.h"
#include "sandbox/vm_proc.h"
#include "util/base64.h"
#include "util/exit_codes.h"
#include "util/version.h"

#define DEFAULT_MEM_MIB 256
#define MAX_LIST 256 /* allow / allow_ip entries */
#define MAX_VARS 256 /* env / labels entries */
#define MAX_TEXT 4096 /* one string field */

/* ---- JSON fields: each check names the field it refuses ---- */

struct fields {
    struct api_conn *c;
    json_t *obj;
    bool failed;
};

static void field_error(struct fields *f, const char *name, const char *fmt, const char *what)
{
    if (!f->failed)
        api_error(f->c, 400, name, fmt, what);
    f->failed = true;
}

/* A string with no NUL, at most MAX_TEXT bytes; NULL when absent. */
static const char *get_text(struct fields *f, const char *name)
{
    json_t *v = json_object_get(f->obj, name);
    if (!v || f->failed)
        return NULL;
    if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v) ||
        json_string_length(v) > MAX_TEXT) {
        field_error(f, name, "%s: want a string (no NUL, at most 4096 bytes)", name);
        return NULL;
    }
    return json_string_value(v);
}

/* A whole number in [min, max]; dflt when absent. */
static long long get_uint(struct fields *f, const char *name, long long min, long long max,
                          long long dflt)
{
    json_t *v = json_object_get(f->obj, name);
    if (!v || f->failed)
        return dflt;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        char why[160];
        snprintf(why, sizeof(why), "%s: want a whole number from %lld to %lld", name, min, max);
        field_error(f, name, "%s", why);
        return dflt;
    }
    return json_integer_value(v);
}

/* An array of strings (no NUL, none empty); NULL when absent. */
static json_t *get_list(struct fields *f, const char *name)
{
    json_t *v = json_object_get(f->obj, name), *e;
    size_t i;
    if (!v || f->failed)
        return NULL;
    bool ok = json_is_array(v) && json_array_size(v) <= MAX_LIST;
    json_array_foreach(v, i, e) ok = ok && json_is_string(e) && json_string_length(e) &&
                                     json_string_length(e) <= MAX_TEXT &&
                                     strlen(json_string_value(e)) == json_string_length(e);
    if (!ok) {
        field_error(f, name, "%s: want an array of at most 256 non-empty strings", name);
        return NULL;
    }
    return v;
}

/* An object of strings (names: no '=', none empty); NULL when absent. */
static json_t *get_vars(struct fields *f, const char *name)
{
    json_t *v = json_object_get(f->obj, name), *e;
    const char *k;
    if (!v || f->failed)
        return NULL;
    bool ok = json_is_object(v) && json_object_size(v) <= MAX_VARS;
    json_object_foreach(v, k, e) ok = ok && *k && !strchr(k, '=') && json_is_string(e) &&
                                      strlen(json_string_value(e)) == json_string_length(e) &&
                                      json_string_length(e) <= MAX_TEXT;
    if (!ok) {
        field_error(f, name, "%s: want an object of at most 256 string values (names without '=')",
                    name);
        return NULL;
    }
    return v;
}

/* Refuses names not in `known` (a typo must not pass as a default). */
static void only_known(struct fields *f, const char *const *known)
{
    const char *k;
    json_t *v;
    json_object_foreach(f->obj, k, v) {
        bool found = false;
        for (const char *const *p = known; *p && !found; p++)
            found = !strcmp(*p, k);
        if (!found) {
            field_error(f, k, "unknown field '%.100s'", k);
            return;
        }
    }
}

/* The body as a JSON object (an empty body is {}); NULL after a 4xx. */
static json_t *body_object(struct api_conn *c)
{
    if (api_read_body(c))
        return NULL;
    if (!c->req.body_len)
        return json_object();
    json_error_t e;
    json_t *o = json_loadb(c->body, c->req.body_len, JSON_REJECT_DUPLICATES, &e);
    if (!o) {
        api_error(c, 400, NULL, "the body is not JSON: %s (line %d, column %d)", e.text, e.line,
                  e.column);
        return NULL;
    }
    if (!json_is_object(o)) {
        json_decref(o);
        api_error(c, 400, NULL, "the body must be a JSON object");
        return NULL;
    }
    return o;
}

/* ---- sandboxes ---- */

static json_t *sandbox_json(const struct sandbox *sb)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(sb->id));
    json_object_set_new(o, "image", json_string(sb->image));
    json_object_set_new(o, "mem", json_integer(sb->mem_mib));
    json_object_set_new(o, "cpus", json_integer(sb->cpus));
    json_object_set_new(o, "created_ms", json_integer(sb->created_ms));
    json_object_set_new(o, "create_ms", json_integer(sb->create_ms));
    json_object_set_new(o, "timeout_s", json_integer(sb->lease_s));
    json_object_set_new(o, "max_lifetime_s", json_integer(sb->max_lifetime_s));
    json_object_set_new(o, "commands_running", json_integer(sb->running));
    json_object_set_new(o, "commands_run", json_integer((json_int_t)sb->commands));
    json_object_set(o, "labels", sb->labels);
    json_object_set(o, "env", sb->env);
    return o;
}

static int64_t wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The files of a sandbox's folder, then the folder. */
static void remove_dir(const struct sandbox *sb)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/vm.log", sb->dir);
    unlink(p);
    unlink(sb->sock); /* the VM removes it; not when it was killed */
    rmdir(sb->dir);
}

/* Stops the VM and frees the slot once unused; the caller's reference
 * is dropped. */
static void destroy(struct api_server *srv, struct sandbox *sb)
{
    if (registry_retire(&srv->reg, sb)) {
        vm_proc_stop(sb->pid, SANDBOX_STOP_MS);
        sb->pid = 0;
        remove_dir(sb);
    }
    registry_put(&srv->reg, sb);
}

/* The one-line reason a VM process gave on stderr ("airlock: ..."), and
 * the create field it is about (the flag it names). */
static void vm_reason(const struct sandbox *sb, char *msg, size_t cap, const char **field)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/vm.log", sb->dir);
    msg[0] = '\0';
    *field = NULL;
    FILE *f = fopen(p, "re");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "airlock: ", 9))
            continue;
        line[strcspn(line, "\n")] = '\0';
        snprintf(msg, cap, "%.500s", line + 9);
        static const struct { const char *flag, *field; } map[] = {
            {"--allow-ip", "allow_ip"}, {"--allow", "allow"}, {"--image", "image"},
            {"--mem", "mem"}, {"--cpus", "cpus"}, {"--append", "append"},
        };
        for (size_t i = 0; i < sizeof(map) / sizeof(map[0]) && !*field; i++)
            if (!strncmp(msg, map[i].flag, strlen(map[i].flag)))
                *field = map[i].field;
        break;
    }
    fclose(f);
}

/* argv for `airlock sandbox-vm`; strings point into `o` and `sb`. */
static int vm_argv(const struct sandbox *sb, json_t *allow, json_t *allow_ip, const char *append,
                   char **argv, size_t cap, char num[2][24])
{
    size_t n = 0;
    json_t *e;
    size_t i;
    argv[n++] = "airlock";
    argv[n++] = "sandbox-vm";
    argv[n++] = "--vsock-uds";
    argv[n++] = (char *)sb->sock;
    argv[n++] = "--image";
    argv[n++] = (char *)sb->image;
    snprintf(num[0], 24, "%u", sb->mem_mib);
    snprintf(num[1], 24, "%u", sb->cpus);
    argv[n++] = "--mem";
    argv[n++] = num[0];
    argv[n++] = "--cpus";
    argv[n++] = num[1];
    if (append) {
        argv[n++] = "--append";
        argv[n++] = (char *)append;
    }
    json_array_foreach(allow, i, e) {
        if (n + 3 > cap)
            return -E2BIG;
        argv[n++] = "--allow";
        argv[n++] = (char *)json_string_value(e);
    }
    json_array_foreach(allow_ip, i, e) {
        if (n + 3 > cap)
            return -E2BIG;
        argv[n++] = "--allow-ip";
        argv[n++] = (char *)json_string_value(e);
    }
    argv[n] = NULL;
    return 0;
}

static const char *const create_fields[] = {
    "image", "mem", "cpus", "allow", "allow_ip", "env", "labels", "timeout_s", "max_lifetime_s",
    "append", NULL,
};

static void create(struct api_server *srv, struct api_conn *c)
{
    json_t *o = body_object(c);
    if (!o)
        return;
    struct fields f = {c, o, false};
    only_known(&f, create_fields);
    const char *image = get_text(&f, "image");
    const char *append = get_text(&f, "append");
    long long mem = get_uint(&f, "mem", 8, 1048576, DEFAULT_MEM_MIB);
    long long cpus = get_uint(&f, "cpus", 1, 64, 1);
    json_t *allow = get_list(&f, "allow"), *allow_ip = get_list(&f, "allow_ip");
    json_t *env = get_vars(&f, "env"), *labels = get_vars(&f, "labels");
    long long lease = get_uint(&f, "timeout_s", 0, 31536000, SANDBOX_DEFAULT_LEASE_S);
    long long life = get_uint(&f, "max_lifetime_s", 0, 31536000, 0);
    if (f.failed) {
        json_decref(o);
        return;
    }
    int why;
    struct sandbox *sb = registry_add(&srv->reg, (unsigned)mem, &why);
    if (!sb) {
        api_error(c, 503, why == -ENOMEM ? "mem" : NULL,
                  why == -ENOSPC ? "the daemon runs as many sandboxes as --max-sandboxes allows"
                  : why == -ENOMEM ? "this sandbox's memory would pass the daemon's --max-mem"
                                   : "cannot make a sandbox id");
        json_decref(o);
        return;
    }
    int64_t t0 = agent_mono_ms();
    sb->cpus = (unsigned)cpus;
    sb->lease_s = (unsigned)lease;
    sb->max_lifetime_s = (unsigned)life;
    sb->env = env ? json_incref(env) : json_object();
    sb->labels = labels ? json_incref(labels) : json_object();
    snprintf(sb->image, sizeof(sb->image), "%s", image ? image : "python");
    int dl = snprintf(sb->dir, sizeof(sb->dir), "%s/%s", srv->state_dir, sb->id);
    int sl = snprintf(sb->sock, sizeof(sb->sock), "%s/%s/agent.sock", srv->state_dir, sb->id);
    char *argv[16 + 4 * MAX_LIST + 1];
    char num[2][24];
    char log[PATH_MAX + 16];
    snprintf(log, sizeof(log), "%s/vm.log", sb->dir);
    int log_fd = -1, status = 0;
    pid_t pid = -1;
    char err[600] = "";
    if (dl >= (int)sizeof(sb->dir) || sl >= (int)sizeof(sb->sock) || mkdir(sb->dir, 0700) < 0 ||
        (log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
        snprintf(err, sizeof(err), "cannot make the sandbox's folder %.400s: %s", sb->dir,
                 strerror(errno));
    else if (vm_argv(sb, allow, allow_ip, append, argv, sizeof(argv) / sizeof(argv[0]), num) < 0)
        snprintf(err, sizeof(err), "too many allow rules");
    else if ((pid = vm_proc_spawn(argv, log_fd)) < 0)
        snprintf(err, sizeof(err), "cannot start the sandbox's VM: %s", strerror((int)-pid));
    if (log_fd >= 0)
        close(log_fd);
    int rc = err[0] ? -1 : vm_proc_wait_ready(pid, sb->sock, SANDBOX_READY_MS, &status, err,
                                               sizeof(err));
    json_decref(o);
    if (rc) {
        const char *field = NULL;
        char reason[512];
        int http = 500;
        if (rc == -ECHILD && WIFEXITED(status) && WEXITSTATUS(status) == EXIT_AIRLOCK_ERROR) {
            vm_reason(sb, reason, sizeof(reason), &field);
            if (reason[0]) { /* the VM refused what it was given: the client's input */
                snprintf(err, sizeof(err), "%s", reason);
                http = field ? 400 : 500;
            }
        }
        if (pid > 0)
            vm_proc_stop(pid, SANDBOX_STOP_MS);
        api_error(c, http, field, "%s", err);
        registry_retire(&srv->reg, sb);
        remove_dir(sb);
        registry_put(&srv->reg, sb);
        return;
    }
    pthread_mutex_lock(&srv->reg.lock);
    sb->pid = pid;
    sb->created_ms = wall_ms();
    sb->create_ms = (unsigned)(agent_mono_ms() - t0);
    sb->last_used_mono_ms = agent_mono_ms();
    sb->state = SB_RUNNING;
    json_t *out = sandbox_json(sb);
    pthread_mutex_unlock(&srv->reg.lock);
    json_object_set_new(out, "how", json_string("cold"));
    registry_put(&srv->reg, sb);
    api_reply(c, 201, out);
}

static void list(struct api_server *srv, struct api_conn *c)
{
    json_t *arr = json_array();
    pthread_mutex_lock(&srv->reg.lock);
    for (unsigned i = 0; i < SANDBOX_MAX; i++)
        if (srv->reg.slots[i].state == SB_RUNNING)
            json_array_append_new(arr, sandbox_json(&srv->reg.slots[i]));
    pthread_mutex_unlock(&srv->reg.lock);
    json_t *o = json_object();
    json_object_set_new(o, "sandboxes", arr);
    api_reply(c, 200, o);
}

/* ---- commands ---- */

static const char *const command_fields[] = {
    "argv", "cmd", "env", "cwd", "user", "timeout_s", "stdin", "stdin_b64", "max_output_mib", NULL,
};

/* "UID" or "UID:GID", numbers only. */
static int parse_user(const char *s, uint32_t *uid, uint32_t *gid)
{
    char *end;
    errno = 0;
    unsigned long u = strtoul(s, &end, 10);
    if (errno || end == s || u > 0xfffffffeul || (*end && *end != ':'))
        return -EINVAL;
    unsigned long g = u;
    if (*end == ':') {
        const char *gs = end + 1;
        g = strtoul(gs, &end, 10);
        if (errno || end == gs || *end || g > 0xfffffffeul)
            return -EINVAL;
    }
    *uid = (uint32_t)u;
    *gid = (uint32_t)g;
    return 0;
}

/* The environment: the command's own, then the sandbox's, then the
 * defaults, each name once (the first wins). */
static size_t build_env(const json_t *mine, const json_t *box, const char **envp, char **owned,
                        size_t cap)
{
    size_t n = 0, nowned = 0;
    const json_t *layers[2] = {mine, box};
    for (int l = 0; l < 2; l++) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)layers[l], k, v) {
            bool dup = false;
            size_t klen = strlen(k);
            for (size_t i = 0; i < n && !dup; i++)
                dup = !strncmp(envp[i], k, klen) && envp[i][klen] == '=';
            if (dup || n >= cap)
                continue;
            char *kv;
            if (asprintf(&kv, "%s=%s", k, json_string_value(v)) < 0)
                continue;
            owned[nowned++] = kv;
            envp[n++] = kv;
        }
    }
    for (unsigned i = 0; i < COMMAND_DEFAULT_ENVS && n < cap; i++) {
        size_t klen = strcspn(command_default_env[i], "=") + 1;
        bool dup = false;
        for (size_t j = 0; j < n && !dup; j++)
            dup = !strncmp(envp[j], command_default_env[i], klen);
        if (!dup)
            envp[n++] = command_default_env[i];
    }
    return n;
}

static void command(struct api_server *srv, struct api_conn *c, struct sandbox *sb)
{
    json_t *o = body_object(c);
    if (!o)
        return;
    struct fields f = {c, o, false};
    only_known(&f, command_fields);
    json_t *argv_j = get_list(&f, "argv");
    const char *cmd = get_text(&f, "cmd");
    json_t *env = get_vars(&f, "env");
    const char *cwd = get_text(&f, "cwd");
    const char *user = get_text(&f, "user");
    long long timeout = get_uint(&f, "timeout_s", 0, COMMAND_MAX_TIMEOUT_S, COMMAND_DEFAULT_TIMEOUT_S);
    long long max_out = get_uint(&f, "max_output_mib", 0, 16777216, COMMAND_DEFAULT_MAX_OUTPUT_MIB);
    json_t *stdin_j = json_object_get(o, "stdin"), *stdin_b64 = json_object_get(o, "stdin_b64");
    unsigned char *stdin_raw = NULL;
    size_t stdin_len = 0;
    if (!f.failed && stdin_j && !json_is_string(stdin_j))
        field_error(&f, "stdin", "%s: want a string", "stdin");
    if (!f.failed && stdin_j && stdin_b64)
        field_error(&f, "stdin_b64", "%s", "give stdin (text) or stdin_b64 (base64), not both");
    if (!f.failed && stdin_b64 &&
        (!json_is_string(stdin_b64) || !(stdin_raw = base64_decode(json_string_value(stdin_b64),
                                                                   &stdin_len))))
        field_error(&f, "stdin_b64", "%s", "stdin_b64: want base64 (RFC 4648, padded)");
    if (!f.failed && !!argv_j == !!cmd)
        field_error(&f, argv_j ? "cmd" : "argv", "%s", "give either argv (an array) or cmd (a shell string)");
    if (!f.failed && argv_j && !json_array_size(argv_j))
        field_error(&f, "argv", "%s", "argv: want at least one string");
    struct agent_exec_req req;
    agent_exec_req_init(&req);
    if (!f.failed && user && parse_user(user, &req.uid, &req.gid))
        field_error(&f, "user", "user '%.64s': want UID or UID:GID (numbers)", user);
    if (f.failed) {
        free(stdin_raw);
        json_decref(o);
        return;
    }
    const char *args[MAX_LIST + 1];
    size_t argc = 0;
    if (cmd) {
        args[argc++] = "/bin/sh";
        args[argc++] = "-c";
        args[argc++] = cmd;
    } else {
        json_t *e;
        size_t i;
        json_array_foreach(argv_j, i, e) args[argc++] = json_string_value(e);
    }
    const char *envp[2 * MAX_VARS + COMMAND_DEFAULT_ENVS + 1];
    char *owned[2 * MAX_VARS];
    memset(owned, 0, sizeof(owned));
    req.argv = args;
    req.argc = (uint32_t)argc;
    json_t *none = json_object();
    req.envc = (uint32_t)build_env(env ? env : none, sb->env, envp, owned,
                                   sizeof(envp) / sizeof(envp[0]) - 1);
    json_decref(none);
    req.envp = envp;
    req.cwd = cwd;
    req.timeout_ms = (uint32_t)(timeout * 1000);
    req.rlim_nproc = COMMAND_DEFAULT_NPROC;
    req.rlim_nofile = COMMAND_DEFAULT_NOFILE;
    struct exec_input in = {stdin_j ? json_string_value(stdin_j) : (const char *)stdin_raw,
                            stdin_j ? json_string_length(stdin_j) : stdin_len};
    pthread_mutex_lock(&srv->reg.lock);
    sb->running++;
    sb->commands++;
    pthread_mutex_unlock(&srv->reg.lock);
    int rc = exec_stream_run(c, sb->sock, &req, &in, (uint64_t)max_out << 20);
    pthread_mutex_lock(&srv->reg.lock);
    sb->running--;
    sb->last_used_mono_ms = agent_mono_ms();
    pthread_mutex_unlock(&srv->reg.lock);
    if (rc)
        api_error(c, 503, NULL, "the sandbox's agent does not answer: %s", strerror(-rc));
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
        free(owned[i]);
    free(stdin_raw);
    json_decref(o);
}

/* ---- routing ---- */

/* A request that used the sandbox renews its lease. */
static void touch(struct api_server *srv, struct sandbox *sb)
{
    pthread_mutex_lock(&srv->reg.lock);
    sb->last_used_mono_ms = agent_mono_ms();
    pthread_mutex_unlock(&srv->reg.lock);
}

static bool method_is(struct api_conn *c, const char *m)
{
    return !strcmp(c->req.method, m);
}

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
    if (rest && strcmp(rest, "commands") && !files_route_known(rest))
        return api_error(c, 404, NULL, "no such path: %.200s", c->req.target);
    struct sandbox *sb = registry_get(&srv->reg, id);
    if (!sb)
        return api_error(c, 404, NULL, "no sandbox '%.64s'", id);
    if (rest && files_route_known(rest)) {
        touch(srv, sb);
        files_route(c, sb, rest);
        touch(srv, sb);
    } else if (rest) {
        if (method_is(c, "POST"))
            command(srv, c, sb);
        else
            api_method_not_allowed(c, "POST");
    } else if (method_is(c, "GET")) {
        pthread_mutex_lock(&srv->reg.lock);
        json_t *o = sandbox_json(sb);
        pthread_mutex_unlock(&srv->reg.lock);
        api_reply(c, 200, o);
    } else if (method_is(c, "DELETE")) {
        registry_ref(&srv->reg, sb); /* destroy drops one; ours is dropped below */
        destroy(srv, sb);
        api_reply(c, 204, NULL);
    } else {
        api_method_not_allowed(c, "GET, DELETE");
    }
    registry_put(&srv->reg, sb);
}

/* ---- supervision ---- */

void api_supervise(struct api_server *srv)
{
    int64_t now = agent_mono_ms();
    for (unsigned i = 0; i < SANDBOX_MAX; i++) {
        struct sandbox *sb = &srv->reg.slots[i];
        pthread_mutex_lock(&srv->reg.lock);
        bool due = false;
        if (sb->state == SB_RUNNING) {
            int64_t age_ms = now - sb->last_used_mono_ms;
            bool ended = vm_proc_ended(sb->pid, NULL);
            if (ended)
                sb->pid = 0; /* reaped: its pid is not ours to signal any more */
            due = ended ||
                  (!sb->running && sb->lease_s && age_ms > (int64_t)sb->lease_s * 1000) ||
                  (sb->max_lifetime_s &&
                   wall_ms() - sb->created_ms > (int64_t)sb->max_lifetime_s * 1000);
            if (due)
                sb->refs++;
        }
        pthread_mutex_unlock(&srv->reg.lock);
        if (due)
            destroy(srv, sb);
    }
}

void api_destroy_all(struct api_server *srv)
{
    for (unsigned i = 0; i < SANDBOX_MAX; i++) {
        struct sandbox *sb = &srv->reg.slots[i];
        pthread_mutex_lock(&srv->reg.lock);
        bool live = sb->state == SB_RUNNING;
        if (live)
            sb->refs++;
        pthread_mutex_unlock(&srv->reg.lock);
        if (live)
            destroy(srv, sb);
    }
}
