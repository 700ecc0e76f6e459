#include "vmm/e2b/e2b_process.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/e2b/connect_call.h"
#include "vmm/e2b/e2b_user.h"
#include "vmm/e2b/proto_json.h"
#include "vmm/sandbox/api_commands.h"
#include "vmm/sandbox/background.h"
#include "vmm/sandbox/sandbox_life.h"

/* How long Start waits for the guest to say the command started. */
#define START_WAIT_MS 30000

/* ---- finding one ---- */

/* The process a selector ({"pid": N} or {"tag": "T"}) names, running,
 * with a reference; NULL with not_found (or invalid_argument) answered. */
static struct bg_cmd *select_process(struct api_server *srv, struct connect_call *k,
                                     struct sandbox *sb, const json_t *msg)
{
    json_t *sel = pj_field(msg, "process", NULL);
    json_t *pid_j = pj_field(sel, "pid", NULL), *tag_j = pj_field(sel, "tag", NULL);
    bool bad = false;
    const char *tag = pj_string(tag_j, &bad);
    uint32_t pid = 0;
    if (!sel || bad || (!pid_j && !tag) || (pid_j && pj_uint32(pid_j, 0, &pid))) {
        connect_fail(k, "invalid_argument", "process: want a selector, {\"pid\": N} or "
                     "{\"tag\": \"...\"}");
        return NULL;
    }
    struct bg_cmd *bc = NULL;
    if (pid_j) {
        bc = bg_find_pid(&srv->reg, sb, pid);
    } else {
        json_t *all = bg_list(&srv->reg, sb), *e;
        size_t i;
        json_array_foreach(json_object_get(all, "commands"), i, e) {
            const char *t = json_string_value(json_object_get(e, "tag"));
            if (t && !strcmp(t, tag) && json_is_true(json_object_get(e, "running"))) {
                bc = bg_find(&srv->reg, sb, json_string_value(json_object_get(e, "id")));
                break;
            }
        }
        json_decref(all);
    }
    if (bc && !bg_running(bc)) { /* envd forgets a process once it ended */
        bg_put(bc);
        bc = NULL;
    }
    if (!bc) {
        if (pid_j)
            connect_fail(k, "not_found", "process with pid %u not found", pid);
        else
            connect_fail(k, "not_found", "process with tag %.64s not found", tag);
    }
    return bc;
}

/* ---- events ---- */

static json_t *event(const char *kind, json_t *body)
{
    return json_pack("{s:{s:o}}", "event", kind, body);
}

struct follower {
    struct api_server *srv;
    struct sandbox *sb;
    struct connect_call *k;
    bool pty;
    int64_t keepalive_ms, last_ms; /* 0: none asked */
    bool sent_end;
};

static bool sandbox_gone(struct follower *f)
{
    pthread_mutex_lock(&f->srv->reg.lock);
    bool gone = f->sb->state != SB_RUNNING;
    pthread_mutex_unlock(&f->srv->reg.lock);
    return gone;
}

static bool on_data(void *ctx, bool err, const char *p, size_t n, uint64_t offset)
{
    (void)offset;
    struct follower *f = ctx;
    const char *stream = f->pty ? "pty" : err ? "stderr" : "stdout";
    connect_send(f->k, event("data", json_pack("{s:o}", stream, pj_bytes_new(p, n))));
    f->last_ms = agent_mono_ms();
    return !f->k->c->broken;
}

/* Output the buffer no longer had: the protocol has no word for it, and
 * the process's stdout must stay what it wrote, so nothing is sent (the
 * replay buffer is 1 MiB: a client reading as it comes loses nothing). */
static bool on_skipped(void *ctx, uint64_t offset, uint64_t bytes)
{
    (void)offset;
    (void)bytes;
    return !((struct follower *)ctx)->k->c->broken;
}

/* The exit record as envd's EndEvent: Go's ProcessState words. */
static void on_end(void *ctx, json_t *exit)
{
    struct follower *f = ctx;
    if (sandbox_gone(f)) /* its VM went: the connection breaks, as E2B's does */
        return connect_cut(f->k);
    json_t *sig = json_object_get(exit, "signal");
    const char *err = json_string_value(json_object_get(exit, "error"));
    json_t *end = json_object();
    char status[64];
    if (json_is_integer(sig)) {
        int s = (int)json_integer_value(sig);
        const char *name = s > 0 && s < 65 ? strsignal(s) : NULL;
        snprintf(status, sizeof(status), "signal: %s", name ? name : "unknown");
        for (char *q = status + 8; *q; q++) /* Go writes them in lower case */
            *q = (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
        json_object_set_new(end, "exitCode", json_integer(-1));
        json_object_set_new(end, "exited", json_false());
    } else {
        json_int_t code = json_integer_value(json_object_get(exit, "exit_code"));
        snprintf(status, sizeof(status), "exit status %lld", (long long)code);
        json_object_set_new(end, "exitCode", json_integer(code));
        json_object_set_new(end, "exited", json_true());
    }
    json_object_set_new(end, "status", json_string(status));
    if (err)
        json_object_set_new(end, "error", json_string(err));
    else if (json_is_true(json_object_get(exit, "timed_out")))
        json_object_set_new(end, "error", json_string("the command timed out"));
    connect_send(f->k, event("end", end));
    f->sent_end = true;
}

static bool on_waiting(void *ctx)
{
    struct follower *f = ctx;
    struct api_conn *c = f->k->c;
    struct pollfd p = {.fd = c->fd, .events = POLLRDHUP};
    if (c->broken || (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))))
        return false;
    int64_t now = agent_mono_ms();
    if (f->k->deadline_ms && now >= f->k->deadline_ms) {
        connect_fail(f->k, "deadline_exceeded", "the call's Connect-Timeout-Ms passed");
        return false;
    }
    if (f->keepalive_ms && now - f->last_ms >= f->keepalive_ms) {
        connect_send(f->k, event("keepalive", json_object()));
        f->last_ms = now;
    }
    return !c->broken;
}

/* The start event, then the command's events from `offset` until its end,
 * the client's leaving, the call's deadline or the sandbox's going. */
static void stream_events(struct api_server *srv, struct connect_call *k, struct sandbox *sb,
                          struct bg_cmd *bc, uint32_t pid, bool pty, uint64_t offset)
{
    char ka[16];
    struct follower f = {srv, sb, k, pty, 0, agent_mono_ms(), false};
    if (api_header(k->c, "Keepalive-Ping-Interval", ka, sizeof(ka)) == 1 && atoi(ka) > 0)
        f.keepalive_ms = (int64_t)atoi(ka) * 1000;
    connect_send(k, event("start", json_pack("{s:I}", "pid", (json_int_t)pid)));
    static const struct bg_sink sink = {on_skipped, on_data, on_end, on_waiting};
    sandbox_hold(srv, sb, 1);
    bg_follow_with(bc, offset, true, &sink, &f);
    sandbox_hold(srv, sb, -1);
    if (f.sent_end)
        connect_end(k);
    else if (!k->ended && sandbox_gone(&f))
        connect_cut(k);
    else if (!k->ended) /* the client left: nobody to answer */
        connect_cut(k);
}

/* ---- the methods ---- */

/* StartRequest {process: {cmd, args, envs, cwd}, pty: {size: {cols, rows}},
 * tag, stdin} as /v1's command object. */
static json_t *start_request(struct connect_call *k, const json_t *msg, const struct e2b_user *u,
                             bool *pty_out)
{
    json_t *proc = pj_field(msg, "process", NULL);
    bool bad = false;
    const char *cmd = pj_string(pj_field(proc, "cmd", NULL), &bad);
    json_t *args = pj_field(proc, "args", NULL);
    json_t *envs = pj_string_map(pj_field(proc, "envs", NULL), &bad);
    const char *cwd = pj_string(pj_field(proc, "cwd", NULL), &bad);
    const char *tag = pj_string(pj_field(msg, "tag", NULL), &bad);
    bool in = pj_bool(pj_field(msg, "stdin", NULL), false, &bad);
    json_t *pty = pj_field(msg, "pty", NULL);
    json_t *size = pj_field(pty, "size", NULL);
    uint32_t cols = 0, rows = 0;
    if (pty && (pj_uint32(pj_field(size, "cols", NULL), 80, &cols) ||
                pj_uint32(pj_field(size, "rows", NULL), 24, &rows)))
        bad = true;
    if (args && !json_is_array(args))
        bad = true;
    if (bad || !cmd || !*cmd) {
        connect_fail(k, "invalid_argument", "StartRequest: want process.cmd (a string), "
                     "process.args (strings), process.envs (a map of strings), process.cwd, "
                     "tag, stdin and pty of their types");
        return NULL;
    }
    json_t *argv = json_array();
    json_array_append_new(argv, json_string(cmd));
    size_t i;
    json_t *a;
    json_array_foreach(args, i, a) json_array_append(argv, a); /* /v1 checks each */
    /* envd's defaults for the user, under what the caller gave. */
    json_t *env = envs ? json_deep_copy(envs) : json_object();
    if (!json_object_get(env, "HOME"))
        json_object_set_new(env, "HOME", json_string(u->home));
    if (!json_object_get(env, "USER"))
        json_object_set_new(env, "USER", json_string(u->name));
    if (!json_object_get(env, "LOGNAME"))
        json_object_set_new(env, "LOGNAME", json_string(u->name));
    char dir[4096];
    if (e2b_user_path(u, cwd ? cwd : "", dir, sizeof(dir))) {
        json_decref(argv);
        json_decref(env);
        connect_fail(k, "invalid_argument", "process.cwd: too long");
        return NULL;
    }
    char user[32];
    snprintf(user, sizeof(user), "%u:%u", u->uid, u->gid);
    json_t *o = json_pack("{s:o,s:o,s:s,s:s,s:b,s:i,s:b}", "argv", argv, "env", env, "cwd", dir,
                          "user", user, "background", 1, "timeout_s", 0, "stdin_open", in || pty);
    if (pty)
        json_object_set_new(o, "pty", json_pack("{s:I,s:I}", "cols", (json_int_t)cols,
                                                "rows", (json_int_t)rows));
    if (tag)
        json_object_set_new(o, "tag", json_string(tag));
    *pty_out = pty != NULL;
    return o;
}

static void start(struct api_server *srv, struct connect_call *k, struct sandbox *sb, json_t *msg)
{
    struct e2b_user u;
    if (e2b_user_resolve(k->c, sb, &u))
        return;
    bool pty;
    json_t *o = start_request(k, msg, &u, &pty);
    if (!o)
        return;
    struct bg_cmd *bc = api_command_start(srv, k->c, sb, o); /* errors: Connect's shape */
    json_decref(o);
    if (!bc)
        return;
    uint32_t pid = bg_pid(bc, START_WAIT_MS);
    if (!pid) {
        json_t *rec = bg_json(bc);
        const char *why = json_string_value(json_object_get(json_object_get(rec, "exit"), "error"));
        connect_fail(k, "invalid_argument", "the process did not start: %s",
                     why ? why : "no word from the guest");
        json_decref(rec);
    } else {
        stream_events(srv, k, sb, bc, pid, pty, 0);
    }
    bg_put(bc);
}

static void reconnect(struct api_server *srv, struct connect_call *k, struct sandbox *sb,
                      json_t *msg)
{
    struct bg_cmd *bc = select_process(srv, k, sb, msg);
    if (!bc)
        return;
    json_t *rec = bg_json(bc);
    uint64_t now = (uint64_t)json_integer_value(json_object_get(rec, "output_bytes"));
    uint32_t pid = (uint32_t)json_integer_value(json_object_get(rec, "pid"));
    bool pty = json_object_get(rec, "pty") != NULL;
    json_decref(rec);
    stream_events(srv, k, sb, bc, pid, pty, now);
    bg_put(bc);
}

static void list(struct api_server *srv, struct connect_call *k, struct sandbox *sb)
{
    json_t *all = bg_list(&srv->reg, sb), *procs = json_array(), *e;
    size_t i;
    json_array_foreach(json_object_get(all, "commands"), i, e) {
        if (!json_is_true(json_object_get(e, "running")) || !json_object_get(e, "pid"))
            continue;
        json_t *argv = json_object_get(e, "argv");
        json_t *cfg = json_object();
        json_t *args = json_array();
        size_t j;
        json_t *a;
        json_array_foreach(argv, j, a) if (j) json_array_append(args, a);
        json_object_set(cfg, "cmd", json_array_size(argv) ? json_array_get(argv, 0)
                                                          : json_object_get(e, "cmd"));
        json_object_set_new(cfg, "args", args);
        json_object_set(cfg, "envs", json_object_get(e, "env") ? json_object_get(e, "env")
                                                              : json_object());
        if (json_object_get(e, "cwd"))
            json_object_set(cfg, "cwd", json_object_get(e, "cwd"));
        json_t *p = json_pack("{s:O,s:o}", "pid", json_object_get(e, "pid"), "config", cfg);
        if (json_object_get(e, "tag"))
            json_object_set(p, "tag", json_object_get(e, "tag"));
        json_array_append_new(procs, p);
    }
    json_decref(all);
    connect_send(k, json_pack("{s:o}", "processes", procs));
}

static void stdin_result(struct connect_call *k, int rc)
{
    if (!rc)
        connect_send(k, json_object());
    else if (rc == -EBADF)
        connect_fail(k, "failed_precondition", "the process's stdin is not open (start it with "
                     "stdin: true; it is closed once CloseStdin was called)");
    else if (rc == -EPIPE)
        connect_fail(k, "not_found", "the process has ended");
    else if (rc == -ETIMEDOUT)
        connect_fail(k, "deadline_exceeded", "the process did not read its stdin for %d s",
                     BG_STDIN_WAIT_MS / 1000);
    else
        connect_fail(k, "internal", "cannot write the process's stdin: %s", strerror(-rc));
}

static void send_input(struct api_server *srv, struct connect_call *k, struct sandbox *sb,
                       json_t *msg)
{
    json_t *input = pj_field(msg, "input", NULL);
    json_t *data = pj_field(input, "stdin", NULL);
    if (!data)
        data = pj_field(input, "pty", NULL);
    bool bad = false;
    size_t n;
    unsigned char *bytes = pj_bytes(data, &n, &bad);
    if (bad || !data) {
        free(bytes);
        return connect_fail(k, "invalid_argument", "input: want {\"stdin\": BASE64} or "
                            "{\"pty\": BASE64}");
    }
    struct bg_cmd *bc = select_process(srv, k, sb, msg);
    if (bc) {
        size_t written;
        stdin_result(k, bg_write_stdin(bc, bytes, n, false, &written));
        bg_put(bc);
    }
    free(bytes);
}

static void close_stdin(struct api_server *srv, struct connect_call *k, struct sandbox *sb,
                        json_t *msg)
{
    struct bg_cmd *bc = select_process(srv, k, sb, msg);
    if (!bc)
        return;
    size_t written;
    stdin_result(k, bg_write_stdin(bc, NULL, 0, true, &written));
    bg_put(bc);
}

static void send_signal(struct api_server *srv, struct connect_call *k, struct sandbox *sb,
                        json_t *msg)
{
    static const char *const names[] = {"SIGNAL_UNSPECIFIED", "SIGNAL_SIGTERM", "SIGNAL_SIGKILL"};
    static const int values[] = {0, SIGTERM, SIGKILL};
    int signo;
    if (pj_enum(pj_field(msg, "signal", NULL), names, values, 3, &signo) || !signo)
        return connect_fail(k, "invalid_argument", "signal: want SIGNAL_SIGTERM or SIGNAL_SIGKILL");
    struct bg_cmd *bc = select_process(srv, k, sb, msg);
    if (!bc)
        return;
    int rc = bg_signal(bc, signo);
    if (rc == -ESRCH)
        connect_fail(k, "not_found", "the process has ended");
    else if (rc)
        connect_fail(k, "internal", "cannot signal the process: %s", strerror(-rc));
    else
        connect_send(k, json_object());
    bg_put(bc);
}

static void update(struct api_server *srv, struct connect_call *k, struct sandbox *sb, json_t *msg)
{
    json_t *size = pj_field(pj_field(msg, "pty", NULL), "size", NULL);
    uint32_t cols, rows;
    if (!size || pj_uint32(pj_field(size, "cols", NULL), 0, &cols) ||
        pj_uint32(pj_field(size, "rows", NULL), 0, &rows) || !cols || !rows || cols > 65535 ||
        rows > 65535)
        return connect_fail(k, "invalid_argument", "pty.size: want cols and rows, 1 to 65535");
    struct bg_cmd *bc = select_process(srv, k, sb, msg);
    if (!bc)
        return;
    int rc = bg_resize(bc, (uint16_t)rows, (uint16_t)cols);
    if (rc == -ENOTTY)
        connect_fail(k, "failed_precondition", "the process was not started on a terminal");
    else if (rc == -ESRCH)
        connect_fail(k, "not_found", "the process has ended");
    else if (rc)
        connect_fail(k, "resource_exhausted", "cannot resize the terminal now: %s", strerror(-rc));
    else
        connect_send(k, json_object());
    bg_put(bc);
}

void e2b_process(struct api_server *srv, struct api_conn *c, struct sandbox *sb, const char *method)
{
    struct connect_call k;
    json_t *msg;
    if (connect_call_open(&k, c, &msg)) {
        connect_call_close(&k);
        return;
    }
    bool streaming = !strcmp(method, "Start") || !strcmp(method, "Connect");
    if (streaming != k.stream && (!strcmp(method, "Start") || !strcmp(method, "Connect") ||
                                  !strcmp(method, "List") || !strcmp(method, "SendInput") ||
                                  !strcmp(method, "SendSignal") || !strcmp(method, "CloseStdin") ||
                                  !strcmp(method, "Update")))
        connect_fail(&k, "invalid_argument", "process.Process/%s is a %s call", method,
                     streaming ? "server-streaming (application/connect+json)"
                               : "unary (application/json)");
    else if (!strcmp(method, "Start"))
        start(srv, &k, sb, msg);
    else if (!strcmp(method, "Connect"))
        reconnect(srv, &k, sb, msg);
    else if (!strcmp(method, "List"))
        list(srv, &k, sb);
    else if (!strcmp(method, "SendInput"))
        send_input(srv, &k, sb, msg);
    else if (!strcmp(method, "CloseStdin"))
        close_stdin(srv, &k, sb, msg);
    else if (!strcmp(method, "SendSignal"))
        send_signal(srv, &k, sb, msg);
    else if (!strcmp(method, "Update"))
        update(srv, &k, sb, msg);
    else
        connect_fail(&k, "unimplemented", "process.Process/%.64s is not served by airlock "
                     "(StreamInput needs HTTP/2: use SendInput)", method);
    json_decref(msg);
    connect_call_close(&k);
}
