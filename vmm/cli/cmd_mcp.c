/* `airlock mcp [sandbox options]`: a Model Context Protocol server on
 * stdio (JSON-RPC 2.0, one message per line) whose tools run commands and
 * move files in one sandbox of `airlock serve`: made on the first tool
 * call, with the shape and egress rules of our flags, and destroyed when
 * the session ends (stdin closes, or SIGTERM/SIGINT/SIGHUP).  Logs go to
 * stderr; stdout carries only protocol messages. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cli/commands.h"
#include "vmm/cli/sandbox_options.h"
#include "vmm/sandbox/api_client.h"
#include "vmm/sandbox/api_http.h"
#include "vmm/util/exit_codes.h"
#include "vmm/util/version.h"

#define MCP_LINE_MAX (4u << 20) /* one client message */
#define MCP_OUTPUT_MAX (1u << 20) /* of each stream, in a tool's answer */

static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

struct mcp {
    char sock[4096];
    json_t *create; /* the create body our flags made */
    char id[64];    /* the session's sandbox, once made */
    bool initialized; /* initialize was answered: MCP's lifecycle allows
                       * nothing else but ping before it */
};

static volatile sig_atomic_t stop_signal;
static void on_signal(int sig)
{
    stop_signal = sig;
}

static void send_msg(json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (text) {
        fputs(text, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        free(text);
    }
}

static void reply(json_t *id, json_t *result)
{
    send_msg(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

static void reply_error(json_t *id, int code, const char *msg)
{
    send_msg(json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                       "error", "code", code, "message", msg));
}

/* A tool's answer: text for the model, isError when the tool failed. */
static json_t *tool_text(const char *text, int is_error, json_t *structured)
{
    json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
                          text ? text : "", "isError", is_error);
    if (structured)
        json_object_set_new(r, "structuredContent", structured);
    return r;
}

static json_t *tool_error(const char *fmt, const char *arg)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), fmt, arg);
    return tool_text(buf, 1, NULL);
}

/* The session's sandbox, made on first use; NULL with err. */
static const char *sandbox(struct mcp *m, char *err, size_t errlen)
{
    if (m->id[0])
        return m->id;
    struct api_client c;
    if (api_client_request(&c, m->sock, "POST", "/v1/sandboxes", m->create, err, errlen))
        return NULL;
    json_t *j = api_client_json(&c, err, errlen);
    api_client_close(&c);
    const char *id = json_string_value(json_object_get(j, "id"));
    if (c.status != 201 || !id) {
        char buf[64];
        snprintf(err, errlen, "%s", api_client_error_text(j, c.status, buf, sizeof(buf)));
        json_decref(j);
        return NULL;
    }
    snprintf(m->id, sizeof(m->id), "%s", id);
    json_decref(j);
    fprintf(stderr, "airlock mcp: sandbox %s\n", m->id);
    return m->id;
}

/* Appends a stream line's bytes to buf (at most MCP_OUTPUT_MAX kept). */
static void collect(char **buf, size_t *len, bool *cut, json_t *line)
{
    size_t n = 0;
    unsigned char *raw;
    const char *p = api_client_line_data(line, &n, &raw);
    if (!p)
        return;
    if (*len + n > MCP_OUTPUT_MAX) {
        n = MCP_OUTPUT_MAX - *len;
        *cut = true;
    }
    char *more = realloc(*buf, *len + n + 1);
    if (more) {
        memcpy(more + *len, p, n);
        *len += n;
        more[*len] = '\0';
        *buf = more;
    }
    free(raw);
}

/* One command through the API: its exit record (NULL with err), its
 * output in *out and *errs (NUL-terminated, maybe cut). */
static json_t *run_command(struct mcp *m, json_t *body, char **out, char **errs, bool *cut,
                           char *err, size_t errlen)
{
    const char *id = sandbox(m, err, errlen);
    if (!id)
        return NULL;
    char path[160];
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/commands", id);
    struct api_client c;
    if (api_client_request(&c, m->sock, "POST", path, body, err, errlen))
        return NULL;
    if (c.status != 200) {
        json_t *j = api_client_json(&c, err, errlen);
        char buf[64];
        snprintf(err, errlen, "%s", api_client_error_text(j, c.status, buf, sizeof(buf)));
        json_decref(j);
        api_client_close(&c);
        return NULL;
    }
    size_t olen = 0, elen = 0;
    json_t *exit_rec = NULL, *line;
    while ((line = api_client_line(&c, err, errlen))) {
        const char *type = json_string_value(json_object_get(line, "type"));
        if (type && !strcmp(type, "stdout"))
            collect(out, &olen, cut, line);
        else if (type && !strcmp(type, "stderr"))
            collect(errs, &elen, cut, line);
        else if (type && !strcmp(type, "exit"))
            exit_rec = json_incref(line);
        json_decref(line);
    }
    api_client_close(&c);
    if (!exit_rec && !err[0])
        snprintf(err, errlen, "the daemon's stream ended without an exit record");
    return exit_rec;
}

static json_t *call_run(struct mcp *m, json_t *args)
{
    const char *cmd = json_string_value(json_object_get(args, "command"));
    if (!cmd)
        return tool_error("%s", "run_command needs \"command\" (a shell command line)");
    json_t *body = json_pack("{s:s}", "cmd", cmd);
    json_t *v;
    if ((v = json_object_get(args, "cwd")) && json_is_string(v))
        json_object_set(body, "cwd", v);
    if ((v = json_object_get(args, "timeout_s")) && json_is_integer(v))
        json_object_set(body, "timeout_s", v);
    /* The API takes a body of at most API_BODY_MAX: said here by name,
     * before a sandbox is made for a command that cannot run. */
    size_t size = json_dumpb(body, NULL, 0, JSON_COMPACT);
    if (size > API_BODY_MAX) {
        char why[300];
        snprintf(why, sizeof(why), "run_command: the command's request is %zu bytes, over the "
                 "API's limit of %u bytes (1 MiB, the command and its JSON escapes)", size,
                 API_BODY_MAX);
        json_decref(body);
        return tool_error("%s", why);
    }
    char *out = NULL, *errs = NULL, err[600] = "";
    bool cut = false;
    json_t *rec = run_command(m, body, &out, &errs, &cut, err, sizeof(err));
    json_decref(body);
    if (!rec) {
        free(out);
        free(errs);
        return tool_error("airlock: %s", err);
    }
    int code = (int)json_integer_value(json_object_get(rec, "exit_code"));
    size_t cap = (out ? strlen(out) : 0) + (errs ? strlen(errs) : 0) + 256;
    char *text = malloc(cap);
    if (text)
        snprintf(text, cap, "%s%s%s%sexit code %d%s%s", out ? out : "",
                 out && *out && out[strlen(out) - 1] != '\n' ? "\n" : "",
                 errs && *errs ? "stderr:\n" : "", errs ? errs : "", code,
                 json_is_true(json_object_get(rec, "timed_out")) ? " (timed out)" : "",
                 cut ? " (output cut at 1 MiB per stream)" : "");
    json_t *structured = json_pack("{s:i, s:s, s:s, s:O}", "exit_code", code, "stdout",
                                   out ? out : "", "stderr", errs ? errs : "", "timed_out",
                                   json_object_get(rec, "timed_out"));
    json_t *r = tool_text(text, 0, structured);
    free(text);
    free(out);
    free(errs);
    json_decref(rec);
    return r;
}

static json_t *call_write(struct mcp *m, json_t *args)
{
    const char *path = json_string_value(json_object_get(args, "path"));
    json_t *content = json_object_get(args, "content");
    if (!path || !json_is_string(content))
        return tool_error("%s", "write_file needs \"path\" and \"content\" (text)");
    char err[600], q[8192];
    const char *id = sandbox(m, err, sizeof(err));
    if (!id)
        return tool_error("airlock: %s", err);
    if (api_client_path(q, sizeof(q), id, "files", path))
        return tool_error("%s", "write_file: the path is too long");
    struct api_client c;
    if (api_client_request_raw(&c, m->sock, "PUT", q, json_string_value(content),
                               json_string_length(content), err, sizeof(err)))
        return tool_error("airlock: %s", err);
    json_t *j = api_client_json(&c, err, sizeof(err));
    api_client_close(&c);
    char buf[700];
    if (c.status != 200) {
        snprintf(buf, sizeof(buf), "%s", api_client_error_text(j, c.status, err, sizeof(err)));
        json_decref(j);
        return tool_text(buf, 1, NULL);
    }
    json_decref(j);
    snprintf(buf, sizeof(buf), "wrote %zu bytes to %s", json_string_length(content), path);
    return tool_text(buf, 0, NULL);
}

/* A command run as root whose stdout is the tool's text (read_file): it
 * must be complete UTF-8 (a file's content), else a tool error; its
 * stderr is the tool error when it fails. */
static json_t *root_command_text(struct mcp *m, json_t *body, const char *path)
{
    char *out = NULL, *errs = NULL, err[600] = "";
    bool cut = false;
    json_t *rec = run_command(m, body, &out, &errs, &cut, err, sizeof(err));
    json_decref(body);
    json_t *text = out ? json_stringn(out, strlen(out)) : json_string("");
    json_t *r;
    if (!rec)
        r = tool_error("airlock: %s", err);
    else if (json_integer_value(json_object_get(rec, "exit_code")) != 0)
        r = tool_text(errs && *errs ? errs : "the command failed", 1, NULL);
    else if (cut)
        r = tool_error("%s: larger than 1 MiB; read it in parts with run_command", path);
    else if (!text)
        r = tool_error("%s: not UTF-8 text", path);
    else
        r = tool_text(json_string_value(text), 0, NULL);
    json_decref(text);
    free(out);
    free(errs);
    json_decref(rec);
    return r;
}

static json_t *call_read(struct mcp *m, json_t *args)
{
    const char *path = json_string_value(json_object_get(args, "path"));
    if (!path)
        return tool_error("%s", "read_file needs \"path\"");
    return root_command_text(m, json_pack("{s:[s,s,s], s:s}", "argv", "cat", "--", path, "user", "0"),
                             path);
}

/* The directory route's listing as text, one entry a line ("d 755 4096
 * name", "l 777 7 name -> target"), and as structuredContent. */
static json_t *call_list(struct mcp *m, json_t *args)
{
    const char *path = json_string_value(json_object_get(args, "path"));
    if (!path)
        path = "/";
    char err[600], q[8192];
    const char *id = sandbox(m, err, sizeof(err));
    if (!id)
        return tool_error("airlock: %s", err);
    if (api_client_path(q, sizeof(q), id, "directory", path))
        return tool_error("%s", "list_directory: the path is too long");
    struct api_client c;
    if (api_client_request(&c, m->sock, "GET", q, NULL, err, sizeof(err)))
        return tool_error("airlock: %s", err);
    json_t *j = api_client_json(&c, err, sizeof(err));
    api_client_close(&c);
    if (c.status != 200) {
        json_t *r = tool_text(api_client_error_text(j, c.status, err, sizeof(err)), 1, NULL);
        json_decref(j);
        return r;
    }
    json_t *entries = json_object_get(j, "entries"), *e;
    size_t i, cap = 64 + 320 * json_array_size(entries), len = 0;
    char *text = malloc(cap);
    if (!text) {
        json_decref(j);
        return tool_error("%s", "list_directory: out of memory");
    }
    text[0] = '\0';
    json_array_foreach(entries, i, e) {
        const char *type = json_string_value(json_object_get(e, "type"));
        const char *name = json_string_value(json_object_get(e, "name"));
        const char *target = json_string_value(json_object_get(e, "target"));
        int n = snprintf(text + len, cap - len, "%c %o %lld %.255s%s%.255s\n",
                         type && !strcmp(type, "dir") ? 'd' : type && !strcmp(type, "symlink")
                         ? 'l' : type && !strcmp(type, "file") ? '-' : '?',
                         (unsigned)json_integer_value(json_object_get(e, "mode")) & 07777u,
                         (long long)json_integer_value(json_object_get(e, "size")),
                         name ? name : "(not UTF-8)", target ? " -> " : "",
                         target ? target : "");
        if (n > 0 && (size_t)n < cap - len)
            len += (size_t)n;
    }
    json_t *r = tool_text(text, 0, json_pack("{s:O}", "entries", entries));
    free(text);
    json_decref(j);
    return r;
}

/* POST .../ports: the host address that reaches the guest port. */
static json_t *call_expose(struct mcp *m, json_t *args)
{
    json_t *gp = json_object_get(args, "guest_port"), *hp = json_object_get(args, "host_port");
    if (!json_is_integer(gp) || (hp && !json_is_integer(hp)))
        return tool_error("%s", "expose_port needs \"guest_port\" (and an optional "
                          "\"host_port\") as numbers");
    char err[600], q[128];
    const char *id = sandbox(m, err, sizeof(err));
    if (!id)
        return tool_error("airlock: %s", err);
    snprintf(q, sizeof(q), "/v1/sandboxes/%s/ports", id);
    json_t *body = json_pack("{s:O, s:I}", "guest_port", gp, "host_port",
                             hp ? json_integer_value(hp) : (json_int_t)0);
    struct api_client c;
    int rc = api_client_request(&c, m->sock, "POST", q, body, err, sizeof(err));
    json_decref(body);
    if (rc)
        return tool_error("airlock: %s", err);
    json_t *j = api_client_json(&c, err, sizeof(err));
    api_client_close(&c);
    json_t *r = c.status != 201
        ? tool_text(api_client_error_text(j, c.status, err, sizeof(err)), 1, NULL)
        : tool_text(json_string_value(json_object_get(j, "address")) ?: "?", 0, json_incref(j));
    json_decref(j);
    return r;
}

static json_t *tools_list(void)
{
    return json_pack(
        "{s:[{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}}, s:[s]}},"
        "    {s:s, s:s, s:{s:s, s:{s:{s:s}, s:{s:s}}, s:[s,s]}},"
        "    {s:s, s:s, s:{s:s, s:{s:{s:s}}, s:[s]}},"
        "    {s:s, s:s, s:{s:s, s:{s:{s:s}}}},"
        "    {s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}}, s:[s]}}]}",
        "tools",
        "name", "run_command", "description",
        "Run a shell command (/bin/sh -c) in this session's sandbox, a microVM kept for the "
        "whole session: files and installed packages stay between calls. Returns stdout, "
        "stderr and the exit code. The command may be a long script or heredoc: up to 1 MiB "
        "(1048576 bytes) with its JSON escapes.",
        "inputSchema", "type", "object", "properties",
        "command", "type", "string", "description", "the shell command line",
        "cwd", "type", "string", "description", "working directory (default /)",
        "timeout_s", "type", "integer", "description", "seconds before it is killed (default 3600)",
        "required", "command",
        "name", "write_file", "description", "Write a text file in the sandbox (as root, mode 644).",
        "inputSchema", "type", "object", "properties", "path", "type", "string", "content",
        "type", "string", "required", "path", "content",
        "name", "read_file", "description", "Read a text file from the sandbox.",
        "inputSchema", "type", "object", "properties", "path", "type", "string", "required",
        "path",
        "name", "list_directory", "description",
        "List a directory of the sandbox: one entry a line, its type (d, -, l), mode, size "
        "and name.",
        "inputSchema", "type", "object", "properties", "path", "type", "string",
        "name", "expose_port", "description",
        "Make a TCP server the sandbox runs on 127.0.0.1:guest_port reachable from the host: "
        "returns the host address (IP:PORT) that reaches it.",
        "inputSchema", "type", "object", "properties",
        "guest_port", "type", "integer", "description", "the port the server listens on in the sandbox",
        "host_port", "type", "integer", "description", "the host port (default 0: any free one)",
        "required", "guest_port");
}

/* JSON-RPC 2.0's id: a string or a number (MCP: never null). */
static bool id_ok(const json_t *id)
{
    return json_is_string(id) || json_is_number(id);
}

static void handle(struct mcp *m, json_t *msg)
{
    json_t *id = json_object_get(msg, "id");
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *params = json_object_get(msg, "params");
    if (!json_is_object(msg) || !method ||
        strcmp(json_string_value(json_object_get(msg, "jsonrpc")) ?: "", "2.0")) {
        if (id || !json_is_object(msg))
            reply_error(id_ok(id) ? id : NULL, -32600, "Invalid Request");
        return;
    }
    if (!id) /* a notification (notifications/initialized, cancelled): no answer */
        return;
    /* JSON-RPC 2.0: an id is a string or a number; MCP: never null.  The
     * answer's id is null, as for any id that cannot be read. */
    if (!id_ok(id)) {
        reply_error(NULL, -32600, "Invalid Request: id must be a string or a number");
        return;
    }
    if (!m->initialized && strcmp(method, "initialize") && strcmp(method, "ping")) {
        reply_error(id, -32600, "Invalid Request: send initialize first");
        return;
    }
    if (!strcmp(method, "initialize")) {
        m->initialized = true;
        const char *want = json_string_value(json_object_get(params, "protocolVersion"));
        const char *ver = versions[0];
        for (size_t i = 0; want && i < sizeof(versions) / sizeof(versions[0]); i++)
            if (!strcmp(want, versions[i]))
                ver = versions[i];
        reply(id, json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}, s:s}", "protocolVersion", ver,
                            "capabilities", "tools", "listChanged", 0, "serverInfo", "name",
                            "airlock", "version", AIRLOCK_VERSION, "instructions",
                            "The tools act on one sandbox (a microVM) kept for this session and "
                            "destroyed when it ends. Network access is only what airlock's "
                            "allowlist permits."));
    } else if (!strcmp(method, "ping")) {
        reply(id, json_object());
    } else if (!strcmp(method, "tools/list")) {
        reply(id, tools_list());
    } else if (!strcmp(method, "tools/call")) {
        const char *name = json_string_value(json_object_get(params, "name"));
        json_t *args = json_object_get(params, "arguments");
        if (!args)
            args = json_object_get(params, "args"); /* absent: {} below */
        json_t *empty = json_object();
        if (!json_is_object(args))
            args = empty;
        json_t *r = !name ? NULL
                  : !strcmp(name, "run_command") ? call_run(m, args)
                  : !strcmp(name, "write_file") ? call_write(m, args)
                  : !strcmp(name, "read_file") ? call_read(m, args)
                  : !strcmp(name, "list_directory") ? call_list(m, args)
                  : !strcmp(name, "expose_port") ? call_expose(m, args) : NULL;
        json_decref(empty);
        if (r)
            reply(id, r);
        else
            reply_error(id, -32602, "Unknown tool");
    } else {
        reply_error(id, -32601, "Method not found");
    }
}

/* Destroys the session's sandbox. */
static void end_session(struct mcp *m)
{
    if (!m->id[0])
        return;
    char path[160], err[512];
    snprintf(path, sizeof(path), "/v1/sandboxes/%s", m->id);
    struct api_client c;
    if (!api_client_request(&c, m->sock, "DELETE", path, NULL, err, sizeof(err)))
        api_client_close(&c);
    fprintf(stderr, "airlock mcp: sandbox %s destroyed\n", m->id);
    m->id[0] = '\0';
}

/* The next message (one line, at most MCP_LINE_MAX bytes, its line end
 * dropped) into line: 1; 0 when it was longer (the rest of it is read
 * and dropped); -1 at the end of stdin or on a signal. */
static int read_message(char *line, size_t *len)
{
    size_t n = 0;
    bool over = false;
    int ch;
    while ((ch = getchar()) != EOF && ch != '\n') {
        if (n < MCP_LINE_MAX)
            line[n++] = (char)ch;
        else
            over = true;
    }
    if (ch == EOF && n == 0 && !over)
        return -1;
    while (n && line[n - 1] == '\r')
        n--;
    line[n] = '\0';
    *len = n;
    return over ? 0 : 1;
}

int cmd_mcp(int argc, char **argv)
{
    static struct mcp m;
    const char *sock_flag = NULL;
    int rc = sandbox_create_options(argc, argv, "mcp",
                                    "usage: airlock mcp [options]\n" CREATE_OPTIONS_USAGE
                                    "An MCP server on stdio: tools run_command, write_file, read_file\n"
                                    "and list_directory act on one sandbox of airlock serve, made with\n"
                                    "these options on first use and destroyed when the session ends.\n",
                                    &m.create, &sock_flag);
    char err[512];
    if (!rc && api_client_socket(sock_flag, m.sock, sizeof(m.sock), err, sizeof(err))) {
        fprintf(stderr, "airlock: %s\n", err);
        rc = EXIT_AIRLOCK_ERROR;
    }
    if (rc) {
        json_decref(m.create);
        return rc < 0 ? 0 : rc;
    }
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: getchar returns */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    char *line = malloc(MCP_LINE_MAX + 1);
    size_t n;
    int more;
    while (line && !stop_signal && (more = read_message(line, &n)) >= 0) {
        if (more == 0) {
            reply_error(NULL, -32600, "Invalid Request: a message over 4 MiB");
            continue;
        }        if (!n)
            continue;
        json_error_t je;
        json_t *msg = json_loadb(line, n, 0, &je);
        if (!msg) {
            reply_error(NULL, -32700, "Parse error");
            continue;
        }
        if (json_is_array(msg)) /* batches were dropped from MCP in 2025-06-18 */
            reply_error(NULL, -32600, "Invalid Request: batches are not accepted");
        else
            handle(&m, msg);
        json_decref(msg);
    }
    free(line);
    end_session(&m);
    json_decref(m.create);
    return 0;
}
