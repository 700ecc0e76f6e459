#include "vmm/sandbox/record_keeps.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vmm/forward/forward_spec.h"

#define PID_LIMIT       4194304          /* Linux's pid_max is at most 2^22 */
#define OUTPUT_MAX      (16777216ull << 20) /* max_output_mib's bound */
#define BYTES_MAX       (1ull << 62)     /* output counts: far past any real one */

static int bad(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* An object with exactly these members, each of its JSON type ('i'
 * integer, 's' string, 'b' boolean, 'o' object, 'x' object or null): the
 * member to blame ("" for a value that is no object), or NULL. */
struct member {
    const char *name;
    char type;
};

static const char *shape_bad(json_t *v, const struct member *m, size_t n)
{
    if (!json_is_object(v))
        return "";
    const char *k;
    json_t *e;
    json_object_foreach(v, k, e) {
        size_t i = 0;
        while (i < n && strcmp(m[i].name, k))
            i++;
        if (i == n)
            return k;
    }
    for (size_t i = 0; i < n; i++) {
        e = json_object_get(v, m[i].name);
        bool ok = m[i].type == 'i'   ? json_is_integer(e)
                  : m[i].type == 's' ? json_is_string(e)
                  : m[i].type == 'b' ? json_is_boolean(e)
                  : m[i].type == 'o' ? json_is_object(e)
                                     : json_is_object(e) || json_is_null(e);
        if (!ok)
            return m[i].name;
    }
    return NULL;
}

/* ---- ports ---- */

json_t *record_ports_json(const struct forward_info *ports, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:i,s:s,s:i}", "guest_port",
                                           (int)ports[i].spec.guest_port, "host_ip",
                                           ports[i].spec.host_ip, "host_port",
                                           (int)ports[i].spec.host_port));
    return a;
}

int record_ports_parse(json_t *a, struct forward_spec *out, size_t *n, char *err, size_t cap)
{
    *n = 0;
    if (!a)
        return 0;
    if (!json_is_array(a) || json_array_size(a) > FORWARD_MAX_PORTS)
        return bad(err, cap, "ports: want a list of at most %d ports", FORWARD_MAX_PORTS);
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) {
        static const struct member m[] = {{"guest_port", 'i'}, {"host_ip", 's'},
                                          {"host_port", 'i'}};
        const char *which = shape_bad(v, m, 3);
        if (which)
            return bad(err, cap, "ports[%zu]%s%.64s: missing, unknown or of the wrong type "
                       "(want {\"guest_port\": N, \"host_ip\": IP, \"host_port\": N})", i,
                       *which ? "." : "", which);
        json_int_t g = json_integer_value(json_object_get(v, "guest_port")),
                   h = json_integer_value(json_object_get(v, "host_port"));
        const char *ip = json_string_value(json_object_get(v, "host_ip"));
        /* A kept port was bound: its host port is a real one, never 0 (any). */
        if (h < 1 || h > 65535)
            return bad(err, cap, "ports[%zu].host_port: %lld is not a port, want 1..65535", i,
                       (long long)h);
        if (g < 1 || g > 65535)
            return bad(err, cap, "ports[%zu].guest_port: %lld is not a port, want 1..65535", i,
                       (long long)g);
        if (!*ip) /* the API's default, never a bound address */
            return bad(err, cap, "ports[%zu].host_ip: empty, want the address it was bound to", i);
        char why[200];
        const char *part = NULL;
        if (forward_spec_make_part(ip, (long)h, (long)g, &out[i], why, sizeof(why), &part))
            return bad(err, cap, "ports[%zu].%s: %s", i, part ? part : "host_ip", why);
        for (size_t k = 0; k < i; k++)
            if (out[k].guest_port == out[i].guest_port)
                return bad(err, cap, "ports[%zu].guest_port: %u is in the list twice", i,
                           out[i].guest_port);
    }
    *n = json_array_size(a);
    return 0;
}

/* ---- background commands ---- */

json_t *record_commands_json(const struct bg_saved *c, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(
            a, json_pack("{s:s,s:O,s:O,s:I,s:I,s:b,s:b,s:I,s:I,s:I}", "id", c[i].id, "info",
                         c[i].info, "exit", c[i].exit ? c[i].exit : json_null(), "output_bytes",
                         (json_int_t)c[i].output_bytes, "pid", (json_int_t)c[i].pid, "tty",
                         c[i].tty, "stdin_open", c[i].stdin_open, "timeout_ms",
                         (json_int_t)c[i].timeout_ms, "max_output", (json_int_t)c[i].max_output,
                         "buffer", (json_int_t)c[i].buffer));
    return a;
}

static bool whole_in(json_t *v, json_int_t lo, json_int_t hi)
{
    return json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi;
}

static bool strings_of(json_t *v, bool object)
{
    const char *k;
    json_t *e;
    size_t i;
    if (object ? !json_is_object(v) : !json_is_array(v) || !json_array_size(v))
        return false;
    if (object) {
        json_object_foreach(v, k, e) if (!json_is_string(e)) return false;
    } else {
        json_array_foreach(v, i, e) if (!json_is_string(e)) return false;
    }
    return true;
}

/* What the API shows of a command: only the members bg_start and the
 * runner put there, each of its type.  The member to blame, or NULL. */
static const char *info_bad(json_t *info, const struct bg_saved *s)
{
    if (!json_is_object(info))
        return "";
    const char *k;
    json_t *v;
    int argv_or_cmd = 0;
    json_object_foreach(info, k, v) {
        bool ok;
        if (!strcmp(k, "id"))
            ok = json_is_string(v) && !strcmp(json_string_value(v), s->id);
        else if (!strcmp(k, "pid"))
            ok = s->pid && whole_in(v, s->pid, s->pid);
        else if (!strcmp(k, "argv"))
            ok = strings_of(v, false) && ++argv_or_cmd;
        else if (!strcmp(k, "cmd"))
            ok = json_is_string(v) && ++argv_or_cmd;
        else if (!strcmp(k, "env"))
            ok = strings_of(v, true);
        else if (!strcmp(k, "cwd") || !strcmp(k, "tag"))
            ok = json_is_string(v);
        else if (!strcmp(k, "pty")) {
            json_int_t c, r;
            ok = s->tty && !json_unpack(v, "{s:I,s:I!}", "cols", &c, "rows", &r) && c >= 1 &&
                 c <= 65535 && r >= 1 && r <= 65535;
        } else if (!strcmp(k, "started_ms") || !strcmp(k, "output_lost"))
            ok = whole_in(v, 0, (json_int_t)BYTES_MAX);
        else
            return k;
        if (!ok)
            return k;
    }
    if (argv_or_cmd != 1 || !json_object_get(info, "id") || !json_object_get(info, "started_ms"))
        return ""; /* the whole: argv or cmd, id and started_ms, each once */
    return NULL;
}

/* exec_exit_record's shape; the member to blame, or NULL. */
static const char *exit_bad(json_t *x)
{
    json_error_t je;
    const char *type;
    json_t *code, *sig, *error, *ms;
    int timed_out, truncated;
    if (json_unpack_ex(x, &je, JSON_STRICT, "{s:s,s:o,s:o,s:o,s:b,s:b,s:o}", "type", &type,
                       "exit_code", &code, "signal", &sig, "error", &error, "timed_out",
                       &timed_out, "output_truncated", &truncated, "duration_ms", &ms))
        return "exit";
    if (strcmp(type, "exit"))
        return "exit.type";
    if (!whole_in(code, 0, 255))
        return "exit.exit_code";
    if (!json_is_null(sig) && !whole_in(sig, 1, 64))
        return "exit.signal";
    if (!json_is_null(error) && !json_is_string(error))
        return "exit.error";
    return whole_in(ms, 0, (json_int_t)BYTES_MAX) ? NULL : "exit.duration_ms";
}

/* "1".."4294967295" without a leading 0, as bg_start's "%u". */
static bool is_cid(const char *s)
{
    size_t n = strlen(s);
    if (!n || n > 10 || s[0] == '0')
        return false;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return n < 10 || strcmp(s, "4294967295") <= 0;
}

static int one_command(json_t *v, struct bg_saved *s, size_t i, char *err, size_t cap)
{
    static const struct member m[] = {
        {"id", 's'},  {"info", 'o'},       {"exit", 'x'},       {"output_bytes", 'i'},
        {"pid", 'i'}, {"tty", 'b'},        {"stdin_open", 'b'}, {"timeout_ms", 'i'},
        {"max_output", 'i'}, {"buffer", 'i'}};
    const char *which = shape_bad(v, m, sizeof(m) / sizeof(m[0]));
    if (which)
        return bad(err, cap, "commands[%zu]%s%.64s: missing, unknown or of the wrong type", i,
                   *which ? "." : "", which);
    const char *id;
    json_t *info, *exit;
    json_int_t out, pid, timeout, max_out, buffer;
    int tty, stdin_open;
    json_unpack(v, "{s:s,s:o,s:o,s:I,s:I,s:b,s:b,s:I,s:I,s:I}", "id", &id, "info", &info, "exit",
                &exit, "output_bytes", &out, "pid", &pid, "tty", &tty, "stdin_open",
                &stdin_open, "timeout_ms", &timeout, "max_output", &max_out, "buffer", &buffer);
    const char *field = !is_cid(id)                                    ? "id"
                        : out < 0 || (uint64_t)out > BYTES_MAX          ? "output_bytes"
                        : pid < 0 || pid > PID_LIMIT                    ? "pid"
                        : timeout < 0 || timeout > UINT32_MAX           ? "timeout_ms"
                        : max_out < 0 || (uint64_t)max_out > OUTPUT_MAX ? "max_output"
                        : buffer < BG_BUFFER_MIN || buffer > BG_BUFFER_MAX ? "buffer"
                                                                          : NULL;
    if (field)
        return bad(err, cap, "commands[%zu].%s: out of its range", i, field);
    *s = (struct bg_saved){.info = info, .exit = json_is_null(exit) ? NULL : exit,
                           .output_bytes = (uint64_t)out, .pid = (uint32_t)pid, .tty = tty,
                           .stdin_open = stdin_open, .timeout_ms = (uint32_t)timeout,
                           .max_output = (uint64_t)max_out, .buffer = (uint32_t)buffer};
    snprintf(s->id, sizeof(s->id), "%s", id);
    if (s->exit && (field = exit_bad(s->exit)))
        return bad(err, cap, "commands[%zu].%s: not an exit record", i, field);
    if ((field = info_bad(info, s)))
        return bad(err, cap, "commands[%zu].info%s%.64s: not what a command's record holds", i,
                   *field ? "." : "", field);
    return 0;
}

int record_commands_parse(json_t *a, struct bg_saved *out, size_t *n, char *err, size_t cap)
{
    *n = 0;
    if (!a)
        return 0;
    if (!json_is_array(a) || json_array_size(a) > BG_MAX)
        return bad(err, cap, "commands: want a list of at most %d commands", BG_MAX);
    size_t i;
    json_t *v;
    uint64_t buffers = 0;
    json_array_foreach(a, i, v) {
        if (one_command(v, &out[i], i, err, cap))
            return -1;
        if ((buffers += out[i].buffer) > BG_BUFFER_BUDGET)
            return bad(err, cap, "commands[%zu].buffer: the buffers pass %u MiB together", i,
                       BG_BUFFER_BUDGET >> 20);
        for (size_t k = 0; k < i; k++)
            if (!strcmp(out[k].id, out[i].id))
                return bad(err, cap, "commands[%zu].id: %s is in the list twice", i, out[i].id);
    }
    *n = json_array_size(a);
    return 0;
}
