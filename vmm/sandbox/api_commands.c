#include "vmm/sandbox/api_commands.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/agent_client/command_defaults.h"
#include "vmm/http/http_query.h"
#include "vmm/sandbox/api_fields.h"
#include "vmm/sandbox/api_pty.h"
#include "vmm/sandbox/background.h"
#include "vmm/sandbox/exec_stream.h"
#include "vmm/sandbox/sandbox_audit.h"
#include "vmm/sandbox/sandbox_life.h"
#include "vmm/util/base64.h"

static const char *const command_fields[] = {
    "argv", "cmd", "env", "cwd", "user", "timeout_s", "stdin", "stdin_b64", "max_output_mib",
    "background", "stdin_open", "buffer_kib", "nproc", "nofile", "fsize_mib", "pty", "tag", NULL,
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

/* A command request's fields, checked, as the agent's request and the
 * background record's parts.  The strings point into the body object
 * (kept by the caller) or into `owned`. */
struct command_call {
    struct agent_exec_req req;
    const char *args[FIELD_MAX_LIST + 1];
    const char *envp[2 * FIELD_MAX_VARS + COMMAND_DEFAULT_ENVS + 1];
    char *owned[2 * FIELD_MAX_VARS];
    unsigned char *stdin_raw;
    struct exec_input in;
    bool background, stdin_open, on_pty;
    struct pty_size pty;
    long long buffer_kib, max_out;
    json_t *describe; /* what the background record shows of the request */
};

static void command_call_free(struct command_call *k)
{
    for (size_t i = 0; i < sizeof(k->owned) / sizeof(k->owned[0]); i++)
        free(k->owned[i]);
    free(k->stdin_raw);
    json_decref(k->describe);
    free(k);
}

/* The body's fields checked into a new call; NULL with the 400 answered
 * (or on no memory, with a 503). */
static struct command_call *command_parse(struct api_server *srv, struct api_conn *c,
                                          struct sandbox *sb, json_t *o)
{
    struct command_call *k = calloc(1, sizeof(*k));
    if (!k) {
        api_error(c, 503, NULL, "%s", "out of memory");
        return NULL;
    }
    struct fields f = {c, o, false};
    only_known(&f, command_fields);
    json_t *argv_j = get_list(&f, "argv", COMMAND_MAX_ARG);
    const char *cmd = get_string(&f, "cmd", COMMAND_MAX_TEXT);
    json_t *env = get_vars(&f, "env");
    const char *cwd = get_text(&f, "cwd");
    const char *user = get_text(&f, "user");
    const char *tag = get_text(&f, "tag");
    long long timeout = get_uint(&f, "timeout_s", 0, COMMAND_MAX_TIMEOUT_S, COMMAND_DEFAULT_TIMEOUT_S);
    k->max_out = get_uint(&f, "max_output_mib", 0, 16777216, COMMAND_DEFAULT_MAX_OUTPUT_MIB);
    json_t *stdin_j = json_object_get(o, "stdin"), *stdin_b64 = json_object_get(o, "stdin_b64");
    size_t stdin_len = 0;
    if (!f.failed && stdin_j && !json_is_string(stdin_j))
        field_error(&f, "stdin", "%s: want a string", "stdin");
    if (!f.failed && stdin_j && stdin_b64)
        field_error(&f, "stdin_b64", "%s", "give stdin (text) or stdin_b64 (base64), not both");
    if (!f.failed && stdin_b64 &&
        (!json_is_string(stdin_b64) || !(k->stdin_raw = base64_decode(json_string_value(stdin_b64),
                                                                      &stdin_len))))
        field_error(&f, "stdin_b64", "%s", "stdin_b64: want base64 (RFC 4648, padded)");
    if (!f.failed && !!argv_j == !!cmd)
        field_error(&f, argv_j ? "cmd" : "argv", "%s", "give either argv (an array) or cmd (a shell string)");
    if (!f.failed && argv_j && !json_array_size(argv_j))
        field_error(&f, "argv", "%s", "argv: want at least one string");
    long long nproc = get_uint(&f, "nproc", 1, 1 << 22, COMMAND_DEFAULT_NPROC);
    long long nofile = get_uint(&f, "nofile", 4, 1 << 20, COMMAND_DEFAULT_NOFILE);
    long long fsize = get_uint(&f, "fsize_mib", 1, 1LL << 24, -1); /* as run --fsize */
    k->on_pty = get_pty(&f, "pty", &k->pty);
    k->background = get_bool(&f, "background", false);
    k->stdin_open = get_bool(&f, "stdin_open", false);
    k->buffer_kib = get_uint(&f, "buffer_kib", BG_BUFFER_MIN >> 10, BG_BUFFER_MAX >> 10,
                             BG_BUFFER_DEFAULT >> 10);
    if (!f.failed && !k->background &&
        (k->stdin_open || json_object_get(o, "buffer_kib") || tag))
        field_error(&f, k->stdin_open ? "stdin_open" : tag ? "tag" : "buffer_kib", "%s",
                    "stdin_open, buffer_kib and tag are for background commands "
                    "(\"background\": true)");
    struct agent_exec_req *req = &k->req;
    agent_exec_req_init(req);
    if (k->on_pty) { /* one stream (stdout), the terminal's */
        req->flags |= AGENT_EXEC_F_TTY;
        req->tty_rows = k->pty.rows;
        req->tty_cols = k->pty.cols;
    }
    if (!f.failed && user && parse_user(user, &req->uid, &req->gid))
        field_error(&f, "user", "user '%.64s': want UID or UID:GID (numbers)", user);
    if (!f.failed && !user && sb->user_error[0])
        field_error(&f, "user", "the image's %s: give \"user\"", sb->user_error);
    if (!user && sb->has_user) {
        req->uid = sb->uid;
        req->gid = sb->gid;
    }
    if (f.failed) {
        command_call_free(k);
        return NULL;
    }
    size_t argc = 0;
    if (cmd) {
        req->flags |= AGENT_EXEC_F_SCRIPT; /* past 64 KiB it goes through a memfd */
        k->args[argc++] = "/bin/sh";
        k->args[argc++] = "-c";
        k->args[argc++] = cmd;
    } else {
        json_t *e;
        size_t i;
        json_array_foreach(argv_j, i, e) k->args[argc++] = json_string_value(e);
    }
    req->argv = k->args;
    req->argc = (uint32_t)argc;
    json_t *none = json_object();
    req->envc = (uint32_t)build_env(env ? env : none, sb->env, k->envp, k->owned,
                                    sizeof(k->envp) / sizeof(k->envp[0]) - 1);
    json_decref(none);
    req->envp = k->envp;
    req->cwd = cwd ? cwd : sb->cwd[0] ? sb->cwd : NULL;
    req->timeout_ms = (uint32_t)(timeout * 1000);
    req->rlim_nproc = (uint64_t)nproc;
    req->rlim_nofile = (uint64_t)nofile;
    if (fsize > 0)
        req->rlim_fsize = (uint64_t)fsize << 20;
    k->in = (struct exec_input){stdin_j ? json_string_value(stdin_j) : (const char *)k->stdin_raw,
                                stdin_j ? json_string_length(stdin_j) : stdin_len};
    k->describe = json_object();
    json_object_set(k->describe, cmd ? "cmd" : "argv", cmd ? json_object_get(o, "cmd") : argv_j);
    if (env)
        json_object_set(k->describe, "env", env);
    if (cwd)
        json_object_set_new(k->describe, "cwd", json_string(cwd));
    if (tag)
        json_object_set_new(k->describe, "tag", json_string(tag));
    if (k->on_pty)
        json_object_set_new(k->describe, "pty", json_pack("{s:i,s:i}", "cols", k->pty.cols,
                                                          "rows", k->pty.rows));
    pthread_mutex_lock(&srv->reg.lock);
    sb->commands++;
    pthread_mutex_unlock(&srv->reg.lock);
    return k;
}

/* The call started in the background: its record with a reference, and
 * *stdin_written; or NULL with the error answered. */
static struct bg_cmd *start_background(struct api_server *srv, struct api_conn *c,
                                       struct sandbox *sb, struct command_call *k,
                                       size_t *stdin_written)
{
    struct bg_spec spec = {.req = &k->req, .in = &k->in, .stdin_open = k->stdin_open,
                           .buffer = (size_t)k->buffer_kib << 10,
                           .max_output = (uint64_t)k->max_out << 20, .describe = k->describe};
    char id[BG_ID_MAX];
    int rc = bg_start(&srv->reg, sb, &spec, id);
    struct bg_cmd *bc = rc ? NULL : bg_find(&srv->reg, sb, id);
    *stdin_written = 0;
    if (bc) {
        if (k->stdin_open && k->in.data) /* the first bytes, then it stays open */
            bg_write_stdin(bc, k->in.data, k->in.len, false, stdin_written);
    } else if (rc == -ENOSPC) {
        api_error(c, 503, NULL, "%d background commands run in this sandbox already", BG_MAX);
    } else if (rc == -ENOMEM) {
        api_error(c, 503, "buffer_kib", "the buffers of this sandbox's background commands "
                  "would pass %u MiB", BG_BUFFER_BUDGET >> 20);
    } else {
        api_error(c, 503, NULL, "the sandbox's agent does not answer: %s",
                  strerror(rc ? -rc : ENOENT));
    }
    return bc;
}

struct bg_cmd *api_command_start(struct api_server *srv, struct api_conn *c, struct sandbox *sb,
                                 json_t *o)
{
    json_object_set_new(o, "background", json_true());
    struct command_call *k = command_parse(srv, c, sb, o);
    if (!k)
        return NULL;
    size_t written;
    struct bg_cmd *bc = start_background(srv, c, sb, k, &written);
    command_call_free(k);
    return bc;
}

static void run_command(struct api_server *srv, struct api_conn *c, struct sandbox *sb)
{
    json_t *o = body_object(c);
    if (!o)
        return;
    struct command_call *k = command_parse(srv, c, sb, o);
    if (!k) {
        json_decref(o);
        return;
    }
    uint64_t max_out = (uint64_t)k->max_out << 20;
    if (k->background) {
        size_t written;
        struct bg_cmd *bc = start_background(srv, c, sb, k, &written);
        if (bc) {
            json_t *rec = bg_json(bc);
            if (k->stdin_open && k->in.data)
                json_object_set_new(rec, "stdin_written", json_integer((json_int_t)written));
            api_reply(c, 201, rec);
            bg_put(bc);
        }
    } else {
        sandbox_hold(srv, sb, 1);
        pthread_mutex_lock(&srv->reg.lock);
        sb->foreground++;
        pthread_mutex_unlock(&srv->reg.lock);
        struct exec_outcome done;
        sandbox_audit_exec(sb, &k->req);
        int rc = exec_stream_run(c, sb->sock, &k->req, &k->in, max_out, &done);
        if (rc)
            sandbox_audit_exit(sb, &k->req, max_out, rc, &(struct agent_exec_result){0}, 0);
        else
            sandbox_audit_exit(sb, &k->req, max_out, done.rc, &done.res, (uint64_t)done.ms);
        pthread_mutex_lock(&srv->reg.lock);
        sb->foreground--;
        pthread_mutex_unlock(&srv->reg.lock);
        sandbox_hold(srv, sb, -1);
        if (rc)
            api_error(c, 503, NULL, "the sandbox's agent does not answer: %s", strerror(-rc));
    }
    command_call_free(k);
    json_decref(o);
}

/* ---- background commands ---- */

/* "TERM", "SIGTERM", "term" or a number 1..64: the signal, or 0. */
static int parse_signal(json_t *v)
{
    if (json_is_integer(v))
        return json_integer_value(v) >= 1 && json_integer_value(v) <= 64
                   ? (int)json_integer_value(v) : 0;
    if (!json_is_string(v))
        return 0;
    const char *name = json_string_value(v);
    if (!strncasecmp(name, "SIG", 3))
        name += 3;
    for (int n = 1; n < 32; n++) {
        const char *abbrev = sigabbrev_np(n);
        if (abbrev && !strcasecmp(abbrev, name))
            return n;
    }
    return 0;
}

static void send_signal(struct api_conn *c, struct bg_cmd *bc, const char *id)
{
    json_t *o = body_object(c);
    if (!o)
        return;
    struct fields f = {c, o, false};
    only_known(&f, (const char *const[]){"signal", NULL});
    int signo = f.failed ? 0 : parse_signal(json_object_get(o, "signal"));
    if (!f.failed && !signo)
        field_error(&f, "signal", "%s", "signal: want a name (TERM, SIGINT, ...) or a number "
                                        "from 1 to 64");
    if (!f.failed) {
        int rc = bg_signal(bc, signo);
        if (rc == -ESRCH)
            api_error(c, 409, NULL, "command %s has ended", id);
        else if (rc)
            api_error(c, 500, NULL, "cannot signal command %s: %s", id, strerror(-rc));
        else
            api_reply(c, 200, json_pack("{s:i}", "signal", signo));
    }
    json_decref(o);
}

static void write_stdin(struct api_conn *c, struct bg_cmd *bc, const char *id)
{
    bool eof = false;
    if (query_bool(c->req.target, "eof", &eof) < 0)
        return api_error(c, 400, "eof", "eof: want true or false");
    if (api_read_body(c))
        return;
    size_t written;
    int rc = bg_write_stdin(bc, c->body, c->req.body_len, eof, &written);
    if (rc == -EBADF)
        api_error(c, 409, NULL, "command %s's stdin is not open (start it with \"stdin_open\": "
                  "true; it is closed once eof was sent)", id);
    else if (rc == -EPIPE)
        api_error(c, 409, NULL, "command %s has ended: its stdin is closed", id);
    else if (rc == -ETIMEDOUT)
        api_error(c, 503, NULL, "command %s did not read its stdin for %d s: %zu of %zu bytes "
                  "written", id, BG_STDIN_WAIT_MS / 1000, written, (size_t)c->req.body_len);
    else if (rc)
        api_error(c, 500, NULL, "cannot write command %s's stdin: %s", id, strerror(-rc));
    else
        api_reply(c, 200, json_pack("{s:I,s:b}", "written", (json_int_t)written, "eof", eof));
}

static void output(struct api_server *srv, struct api_conn *c, struct sandbox *sb,
                   struct bg_cmd *bc)
{
    char off_s[24];
    int qo = query_param(c->req.target, "offset", off_s, sizeof(off_s));
    char *end = NULL;
    errno = 0;
    unsigned long long offset = qo == 1 ? strtoull(off_s, &end, 10) : 0;
    if (qo < 0 || (qo == 1 && (errno || end == off_s || *end || off_s[0] == '-')))
        return api_error(c, 400, "offset", "offset: want a byte count (a whole number)");
    bool follow = false;
    if (query_bool(c->req.target, "follow", &follow) < 0)
        return api_error(c, 400, "follow", "follow: want true or false");
    sandbox_hold(srv, sb, 1);
    bg_follow(c, bc, offset, follow);
    sandbox_hold(srv, sb, -1);
}

/* /commands/{cid}[/output|/stdin|/signal|/resize] */
static void one_command(struct api_server *srv, struct api_conn *c, struct sandbox *sb,
                        const char *sub)
{
    char id[BG_ID_MAX + 1];
    size_t idlen = strcspn(sub, "/");
    const char *what = sub[idlen] ? sub + idlen + 1 : NULL;
    if (!idlen || idlen > BG_ID_MAX - 1 ||
        (what && strcmp(what, "output") && strcmp(what, "stdin") && strcmp(what, "signal") &&
         strcmp(what, "resize")))
        return api_error(c, 404, NULL, "no such path: %.200s", c->req.target);
    memcpy(id, sub, idlen);
    id[idlen] = '\0';
    struct bg_cmd *bc = bg_find(&srv->reg, sb, id);
    if (!bc)
        return api_error(c, 404, NULL, "no background command '%s' in sandbox %s", id, sb->id);
    if (!what) {
        if (!strcmp(c->req.method, "GET"))
            api_reply(c, 200, bg_json(bc));
        else if (!strcmp(c->req.method, "DELETE")) {
            bg_remove(bc);
            api_reply(c, 204, NULL);
        } else
            api_method_not_allowed(c, "GET, DELETE");
    } else if (!strcmp(what, "output")) {
        if (!strcmp(c->req.method, "GET"))
            output(srv, c, sb, bc);
        else
            api_method_not_allowed(c, "GET");
    } else if (strcmp(c->req.method, "POST")) {
        api_method_not_allowed(c, "POST");
    } else if (!strcmp(what, "stdin")) {
        write_stdin(c, bc, id);
    } else if (!strcmp(what, "resize")) {
        api_pty_resize(c, bc, id);
    } else {
        send_signal(c, bc, id);
    }
    bg_put(bc);
}

void api_commands(struct api_server *srv, struct api_conn *c, struct sandbox *sb, const char *sub)
{
    if (!*sub) {
        if (!strcmp(c->req.method, "POST"))
            run_command(srv, c, sb);
        else if (!strcmp(c->req.method, "GET"))
            api_reply(c, 200, bg_list(&srv->reg, sb));
        else
            api_method_not_allowed(c, "GET, POST");
        return;
    }
    one_command(srv, c, sb, sub + 1);
}
