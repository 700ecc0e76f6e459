#include "vmm/e2b/e2b_control.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/e2b/e2b_sandbox.h"
#include "vmm/e2b/proto_json.h"
#include "vmm/http/http_query.h"
#include "vmm/sandbox/api_create.h"
#include "vmm/sandbox/api_fields.h"
#include "vmm/sandbox/events.h"
#include "vmm/sandbox/sandbox_life.h"
#include "vmm/sandbox/sandbox_pause.h"

/* E2B's default when a create gives no timeout (its openapi.yml). */
#define E2B_DEFAULT_TIMEOUT_S 15
#define E2B_LIST_MAX 100 /* a v2 page's most (the SDK asks for 100 at most) */

/* The name an E2B client gave for a /v1 field a check refused (its
 * create's fields became /v1's: create_request below). */
static const char *e2b_field(const char *field, char *buf, size_t cap)
{
    static const char *const map[][2] = {
        {"image", "templateID"}, {"timeout_s", "timeout"}, {"labels", "metadata"},
        {"env", "envVars"}, {"allow", "network.allowOut"}, {"allow_ip", "network.allowOut"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcmp(field, map[i][0]))
            return map[i][1];
    snprintf(buf, cap, "airlock.%s", field); /* the extension's own */
    return buf;
}

void e2b_rest_error_hook(struct api_conn *c, int status, const char *field, const char *msg)
{
    char buf[96];
    if (field)
        field = e2b_field(field, buf, sizeof(buf));
    json_t *m = json_sprintf(field ? "%s (%s)" : "%s", msg, field);
    api_reply(c, status, json_pack("{s:i,s:o}", "code", status,
                                   "message", m ? m : json_string("(a message that was not UTF-8)")));
}

void e2b_rest_error(struct api_conn *c, int status, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    e2b_rest_error_hook(c, status, NULL, msg);
}

bool e2b_control_path(const char *path)
{
    return !strcmp(path, "/sandboxes") || !strncmp(path, "/sandboxes/", 11) ||
           !strcmp(path, "/v2/sandboxes");
}

/* ---- a sandbox as E2B shows it ---- */

/* The wall clock's time of a monotonic one, through one offset taken
 * once, so a sandbox's endAt reads the same however often it is asked. */
static int64_t wall_offset_ms;
static void take_offset(void)
{
    wall_offset_ms = agent_wall_ms() - agent_mono_ms();
}

/* Under the registry's lock: when its lease runs out if nobody uses it. */
static int64_t end_at_ms(const struct sandbox *sb)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, take_offset);
    if (!sb->lease_s) /* never idles out: E2B has no "never", so far off */
        return agent_wall_ms() + 315360000000LL;
    return wall_offset_ms + sb->last_used_mono_ms + (int64_t)sb->lease_s * 1000;
}

/* Under the registry's lock: a ListedSandbox (detail: a SandboxDetail). */
static json_t *listed(const struct sandbox *sb, bool detail)
{
    json_t *o = json_object();
    const char *tmpl = sb->template_id[0] ? sb->template_id : sb->image;
    json_object_set_new(o, "templateID", json_string(tmpl));
    json_object_set_new(o, "alias", json_string(tmpl));
    json_object_set_new(o, "sandboxID", json_string(sb->id));
    json_object_set_new(o, "clientID", json_string("airlock"));
    json_object_set_new(o, "startedAt", pj_timestamp_new(sb->created_ms));
    json_object_set_new(o, "endAt", pj_timestamp_new(end_at_ms(sb)));
    json_object_set_new(o, "cpuCount", json_integer(sb->cpus));
    json_object_set_new(o, "memoryMB", json_integer(sb->mem_mib));
    json_object_set_new(o, "diskSizeMB", json_integer(0)); /* copy-on-write: no fixed size */
    json_object_set(o, "metadata", sb->labels);
    json_object_set_new(o, "state", json_string(sandbox_state_name(sb)));
    json_object_set_new(o, "envdVersion", json_string(E2B_ENVD_VERSION));
    if (detail) {
        json_object_set_new(o, "domain", json_null());
        json_object_set_new(o, "allowInternetAccess", json_false()); /* only the allowlist */
    }
    return o;
}

/* A create's or a connect's answer (a Sandbox). */
static json_t *created(struct api_server *srv, struct sandbox *sb)
{
    char token[65];
    if (e2b_access_token(srv, sb, token))
        return NULL;
    pthread_mutex_lock(&srv->reg.lock);
    const char *tmpl = sb->template_id[0] ? sb->template_id : sb->image;
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:n}", "templateID", tmpl, "alias", tmpl,
                          "sandboxID", sb->id, "clientID", "airlock", "envdVersion",
                          E2B_ENVD_VERSION, "envdAccessToken", token, "domain");
    pthread_mutex_unlock(&srv->reg.lock);
    explicit_bzero(token, sizeof(token));
    return o;
}

/* ---- create ---- */

/* E2B's allowOut entries into /v1's rules: addresses and CIDR blocks are
 * allow_ip rules, names allow rules.  -1 with the entry refused. */
static int split_allow_out(struct api_conn *c, json_t *list, json_t *allow, json_t *allow_ip)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        if (!json_is_string(e) || !json_string_length(e)) {
            e2b_rest_error(c, 400, "network.allowOut: want an array of non-empty strings");
            return -1;
        }
        const char *s = json_string_value(e);
        char addr[64];
        size_t n = strcspn(s, "/");
        unsigned char buf[16];
        bool ip = n < sizeof(addr) && (memcpy(addr, s, n), addr[n] = '\0',
                                       inet_pton(AF_INET, addr, buf) == 1 ||
                                       inet_pton(AF_INET6, addr, buf) == 1);
        json_array_append(ip ? allow_ip : allow, e);
    }
    return 0;
}

/* The /v1 create object a POST /sandboxes asks for; NULL with the error
 * answered.  *tmpl: its template's name. */
static json_t *create_request(struct api_conn *c, json_t *in, const char **tmpl)
{
    static const char *const known[] = {
        "templateID", "timeout", "autoPause", "autoPauseMemory", "autoResume", "secure",
        "allow_internet_access", "network", "metadata", "envVars", "mcp", "volumeMounts",
        "airlock", NULL,
    };
    const char *k;
    json_t *v;
    json_object_foreach(in, k, v) {
        bool ok = false;
        for (size_t i = 0; known[i] && !ok; i++)
            ok = !strcmp(known[i], k);
        if (!ok) {
            e2b_rest_error(c, 400, "unknown field '%.64s'", k);
            return NULL;
        }
    }
    bool bad = false;
    *tmpl = pj_string(json_object_get(in, "templateID"), &bad);
    if (bad || (*tmpl && (!**tmpl || strlen(*tmpl) > 127))) {
        e2b_rest_error(c, 400, "templateID: want a template name (an airlock image)");
        return NULL;
    }
    if (!*tmpl)
        *tmpl = E2B_DEFAULT_TEMPLATE;
    /* allow_internet_access: the SDKs send true unless told otherwise, so
     * a true here is no request for anything: airlock never opens general
     * egress.  The sandbox reaches what network.allowOut names (airlock's
     * allowlist) and nothing else, and its detail says
     * allowInternetAccess: false (docs/e2b.md). */
    json_t *inet = json_object_get(in, "allow_internet_access");
    if (inet && !json_is_boolean(inet)) {
        e2b_rest_error(c, 400, "allow_internet_access: want true or false");
        return NULL;
    }
    json_t *ap = json_object_get(in, "autoPause");
    if (ap && !json_is_boolean(ap)) {
        e2b_rest_error(c, 400, "autoPause: want true or false");
        return NULL;
    }
    /* autoResume needs nothing: a request to a paused airlock sandbox
     * resumes it, whatever it was made with. */
    if (json_object_get(in, "mcp") && !json_is_null(json_object_get(in, "mcp"))) {
        e2b_rest_error(c, 400, "mcp: airlock runs no MCP gateway in sandboxes (airlock mcp is "
                       "the host's MCP server)");
        return NULL;
    }
    if (json_array_size(json_object_get(in, "volumeMounts"))) {
        e2b_rest_error(c, 400, "volumeMounts: airlock has no E2B volumes; use the airlock "
                       "extension's mounts");
        return NULL;
    }
    json_t *o = json_object();
    const char *image = strcmp(*tmpl, E2B_DEFAULT_TEMPLATE) ? *tmpl : E2B_DEFAULT_IMAGE;
    json_object_set_new(o, "image", json_string(image));
    json_t *t = json_object_get(in, "timeout");
    if (t && !json_is_integer(t)) {
        e2b_rest_error(c, 400, "timeout: want whole seconds");
        json_decref(o);
        return NULL;
    }
    json_object_set_new(o, "timeout_s", json_integer(t ? json_integer_value(t)
                                                       : E2B_DEFAULT_TIMEOUT_S));
    if (json_is_true(ap)) /* its timeout pauses it instead of killing it */
        json_object_set_new(o, "on_timeout", json_string("pause"));
    json_t *apm = json_object_get(in, "autoPauseMemory");
    if (apm && !json_is_boolean(apm)) {
        e2b_rest_error(c, 400, "autoPauseMemory: want true or false");
        json_decref(o);
        return NULL;
    }
    if (json_is_true(ap) && json_is_false(apm)) /* a filesystem-only pause */
        json_object_set_new(o, "pause_memory", json_false());
    if (json_object_get(in, "metadata"))
        json_object_set(o, "labels", json_object_get(in, "metadata"));
    if (json_object_get(in, "envVars"))
        json_object_set(o, "env", json_object_get(in, "envVars"));
    json_t *net = json_object_get(in, "network");
    if (net && !json_is_null(net)) {
        json_t *out = json_object_get(net, "allowOut");
        json_t *deny = json_object_get(net, "denyOut");
        const char *nk;
        json_t *nv;
        json_object_foreach(net, nk, nv) {
            if (strcmp(nk, "allowOut") && strcmp(nk, "denyOut") && strcmp(nk, "allowPublicTraffic")) {
                e2b_rest_error(c, 400, "network.%.64s: not supported by airlock (it takes "
                               "allowOut and denyOut)", nk);
                json_decref(o);
                return NULL;
            }
        }
        if ((out && !json_is_array(out)) || (deny && !json_is_array(deny))) {
            e2b_rest_error(c, 400, "network.allowOut, network.denyOut: want arrays of strings");
            json_decref(o);
            return NULL;
        }
        /* denyOut needs nothing: whatever allowOut does not name is denied,
         * and E2B's allowed entries win over denied ones. */
        if (json_array_size(out)) {
            json_t *allow = json_array(), *allow_ip = json_array();
            json_object_set_new(o, "allow", allow);
            json_object_set_new(o, "allow_ip", allow_ip);
            if (split_allow_out(c, out, allow, allow_ip)) {
                json_decref(o);
                return NULL;
            }
        }
    }
    json_t *ext = json_object_get(in, "airlock");
    if (ext && !json_is_object(ext)) {
        e2b_rest_error(c, 400, "airlock: want an object of airlock's create fields");
        json_decref(o);
        return NULL;
    }
    const char *ek;
    json_t *ev;
    json_object_foreach(ext, ek, ev) {
        static const char *const mapped[] = {"image", "timeout_s", "labels", "env", NULL};
        bool taken = false;
        for (size_t i = 0; mapped[i] && !taken; i++)
            taken = !strcmp(mapped[i], ek);
        if (taken || json_object_get(o, ek)) {
            e2b_rest_error(c, 400, "airlock.%.64s: given by E2B's own field (templateID, "
                           "timeout, metadata, envVars, network)", ek);
            json_decref(o);
            return NULL;
        }
        json_object_set(o, ek, ev);
    }
    return o;
}

static json_t *body_json(struct api_conn *c)
{
    if (api_read_body(c))
        return NULL;
    json_error_t err;
    json_t *o = c->req.body_len ? json_loadb(c->body, c->req.body_len, JSON_REJECT_DUPLICATES, &err)
                                : json_object();
    if (!json_is_object(o)) {
        e2b_rest_error(c, 400, "the body is not a JSON object%s%s", o ? "" : ": ", o ? "" : err.text);
        json_decref(o);
        return NULL;
    }
    return o;
}

/* POST .../pause's body: {"memory": bool} (default true; false: E2B's
 * filesystem-only pause).  false after answering 400. */
static bool pause_body(struct api_conn *c, bool *memory)
{
    json_t *in = body_json(c);
    if (!in)
        return false;
    json_t *m = json_object_get(in, "memory");
    bool ok = !m || json_is_boolean(m);
    *memory = !m || json_is_true(m);
    json_decref(in);
    if (!ok)
        e2b_rest_error(c, 400, "memory: want true or false");
    return ok;
}

static void create(struct api_server *srv, struct api_conn *c)
{
    json_t *in = body_json(c);
    if (!in)
        return;
    const char *tmpl;
    json_t *o = create_request(c, in, &tmpl);
    if (o) {
        struct sandbox *sb = api_create_sandbox(srv, c, o); /* its errors: E2B's shape */
        json_decref(o);
        if (sb) {
            pthread_mutex_lock(&srv->reg.lock);
            snprintf(sb->template_id, sizeof(sb->template_id), "%s", tmpl);
            pthread_mutex_unlock(&srv->reg.lock);
            json_t *out = created(srv, sb);
            if (out) {
                registry_put(&srv->reg, sb);
                api_reply(c, 201, out);
            } else {
                sandbox_destroy(srv, sb);
                e2b_rest_error(c, 500, "no randomness for the sandbox's access token");
            }
        }
    }
    json_decref(in);
}

/* ---- listing ---- */

/* A metadata filter: "k=v&k2=v2", each part URL-encoded. */
#define META_PAIRS 32
struct meta {
    unsigned n;
    char key[META_PAIRS][256], val[META_PAIRS][256];
};

/* 0, or -1 when it is not such pairs (or more than META_PAIRS). */
static int meta_parse(const char *query, struct meta *m)
{
    m->n = 0;
    for (const char *p = query; *p;) {
        size_t n = strcspn(p, "&");
        char part[1024], probe[1100];
        if (n >= sizeof(part) || m->n == META_PAIRS)
            return -1;
        memcpy(part, p, n);
        part[n] = '\0';
        char *eq = strchr(part, '=');
        if (!eq || eq == part)
            return -1;
        *eq = '\0';
        /* each half decoded by the query parser, as "?x=HALF" */
        snprintf(probe, sizeof(probe), "?x=%s", part);
        if (query_param(probe, "x", m->key[m->n], sizeof(m->key[0])) != 1)
            return -1;
        snprintf(probe, sizeof(probe), "?x=%s", eq + 1);
        if (query_param(probe, "x", m->val[m->n], sizeof(m->val[0])) < 0)
            return -1;
        m->n++;
        p += n + (p[n] == '&');
    }
    return 0;
}

/* Under the registry's lock: whether sb's labels hold every pair. */
static bool meta_match(const struct sandbox *sb, const struct meta *m)
{
    for (unsigned i = 0; i < m->n; i++) {
        const char *have = json_string_value(json_object_get(sb->labels, m->key[i]));
        if (!have || strcmp(have, m->val[i]))
            return false;
    }
    return true;
}

/* One sandbox a list may show: when it started, and its id. */
struct row {
    int64_t started_ms;
    char id[SANDBOX_ID_HEX + 1];
    json_t *item;
};

static int by_start_asc(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->started_ms != y->started_ms)
        return x->started_ms < y->started_ms ? -1 : 1;
    return strcmp(x->id, y->id);
}

static int by_start_desc(const void *a, const void *b)
{
    return by_start_asc(b, a);
}

/* GET /sandboxes and /v2/sandboxes: running sandboxes whose labels hold
 * every metadata pair, of the template asked, started at or after
 * startedAfter, by start time (v2: "order" asc or desc, newest first by
 * default; pages of "limit" with X-Next-Token, the start time and id of
 * the page's last sandbox). */
static void list(struct api_server *srv, struct api_conn *c, bool v2)
{
    char meta[2048] = "", state[64] = "", limit_s[16] = "", next[64] = "", order[8] = "",
         after_s[64] = "", tmpl[128] = "";
    if (query_param(c->req.target, "metadata", meta, sizeof(meta)) < 0 ||
        query_param(c->req.target, "state", state, sizeof(state)) < 0 ||
        query_param(c->req.target, "limit", limit_s, sizeof(limit_s)) < 0 ||
        query_param(c->req.target, "nextToken", next, sizeof(next)) < 0 ||
        query_param(c->req.target, "order", order, sizeof(order)) < 0 ||
        query_param(c->req.target, "startedAfter", after_s, sizeof(after_s)) < 0 ||
        query_param(c->req.target, "template", tmpl, sizeof(tmpl)) < 0)
        return e2b_rest_error(c, 400, "a query parameter is malformed or too long");
    char *end = NULL;
    unsigned long limit = limit_s[0] ? strtoul(limit_s, &end, 10) : E2B_LIST_MAX;
    if ((limit_s[0] && (*end || !limit || limit > E2B_LIST_MAX)))
        return e2b_rest_error(c, 400, "limit: want 1 to %d", E2B_LIST_MAX);
    if (order[0] && strcmp(order, "asc") && strcmp(order, "desc"))
        return e2b_rest_error(c, 400, "order: want asc or desc");
    int64_t after = 0;
    if (after_s[0] && pj_timestamp_parse(after_s, &after))
        return e2b_rest_error(c, 400, "startedAfter: want an RFC 3339 time");
    static __thread struct meta m;
    if (meta_parse(meta, &m))
        return e2b_rest_error(c, 400, "metadata: want at most %d key=value pairs joined by '&'",
                              META_PAIRS);
    struct row cursor = {0};
    if (next[0] && (sscanf(next, "%" SCNd64 "-%16[0-9a-f]", &cursor.started_ms, cursor.id) != 2))
        return e2b_rest_error(c, 400, "nextToken: not one this server gave");
    bool asc = !strcmp(order, "asc");
    /* "running", "paused" or both, comma-separated (none: both). */
    bool want_running = !state[0] || strstr(state, "running");
    bool want_paused = !state[0] || strstr(state, "paused");
    bool running = want_running || want_paused;
    struct row *rows = calloc(SANDBOX_MAX, sizeof(*rows));
    if (!rows)
        return e2b_rest_error(c, 500, "out of memory");
    size_t n = 0;
    pthread_mutex_lock(&srv->reg.lock);
    for (unsigned i = 0; i < SANDBOX_MAX && running; i++) {
        struct sandbox *sb = &srv->reg.slots[i];
        if (!((sb->state == SB_RUNNING && want_running) || (sb->state == SB_PAUSED && want_paused)) ||
            sb->created_ms < after)
            continue;
        const char *t = sb->template_id[0] ? sb->template_id : sb->image;
        if (tmpl[0] && strcmp(tmpl, t))
            continue;
        if (!meta_match(sb, &m))
            continue;
        rows[n].started_ms = sb->created_ms;
        snprintf(rows[n].id, sizeof(rows[n].id), "%s", sb->id);
        rows[n++].item = listed(sb, false);
    }
    pthread_mutex_unlock(&srv->reg.lock);
    int (*cmp)(const void *, const void *) = asc ? by_start_asc : by_start_desc;
    qsort(rows, n, sizeof(*rows), cmp);
    json_t *arr = json_array();
    size_t taken = 0;
    bool more = false;
    char last[64] = "";
    for (size_t i = 0; i < n; i++) {
        if (next[0] && cmp(&rows[i], &cursor) <= 0)
            continue; /* on an earlier page */
        if (v2 && taken == limit) {
            more = true;
            break;
        }
        json_array_append(arr, rows[i].item);
        snprintf(last, sizeof(last), "%" PRId64 "-%s", rows[i].started_ms, rows[i].id);
        taken++;
    }
    for (size_t i = 0; i < n; i++)
        json_decref(rows[i].item);
    free(rows);
    char extra[96] = "";
    if (more)
        snprintf(extra, sizeof(extra), "X-Next-Token: %s\r\n", last);
    api_reply_with(c, 200, extra, arr);
}

/* ---- one sandbox ---- */

/* {"timeout": N} or {"duration": N}: the lease, N seconds from now.  A
 * connect (answer) only ever lengthens it, as E2B's does. */
static void set_lease(struct api_server *srv, struct api_conn *c, struct sandbox *sb,
                      const char *name, int answer)
{
    json_t *in = body_json(c);
    if (!in)
        return;
    json_t *t = json_object_get(in, name);
    if (!json_is_integer(t) || json_integer_value(t) < 0 || json_integer_value(t) > 31536000) {
        json_decref(in);
        return e2b_rest_error(c, 400, "%s: want whole seconds, 0 to 31536000", name);
    }
    int64_t now = agent_mono_ms(), want = (int64_t)json_integer_value(t);
    pthread_mutex_lock(&srv->reg.lock);
    int64_t left_ms = sb->last_used_mono_ms + (int64_t)sb->lease_s * 1000 - now;
    if (!answer || (sb->lease_s && want * 1000 > left_ms)) {
        sb->lease_s = (unsigned)want;
        sb->last_used_mono_ms = now;
    }
    pthread_mutex_unlock(&srv->reg.lock);
    json_decref(in);
    if (!answer)
        return api_reply_bytes(c, 204, NULL, NULL, NULL, 0);
    json_t *out = created(srv, sb);
    if (!out)
        return e2b_rest_error(c, 500, "no randomness for the sandbox's access token");
    api_reply(c, answer, out);
}

/* POST .../connect (200 running, 201 resumed) and the older .../resume
 * (201; 409 when it runs). */
static void resume(struct api_server *srv, struct api_conn *c, struct sandbox *sb, bool connect)
{
    pthread_mutex_lock(&srv->reg.lock);
    bool paused = sb->state == SB_PAUSED;
    pthread_mutex_unlock(&srv->reg.lock);
    if (!paused && !connect)
        return e2b_rest_error(c, 409, "sandbox \"%s\" is already running", sb->id);
    char err[600];
    int http = paused ? sandbox_resume(srv, sb, err, sizeof(err)) : 0;
    if (http)
        return e2b_rest_error(c, http, "sandbox \"%s\" cannot be resumed: %s", sb->id, err);
    set_lease(srv, c, sb, "timeout", paused ? 201 : 200);
}

static void one(struct api_server *srv, struct api_conn *c, const char *id, const char *what)
{
    struct sandbox *sb = registry_find(&srv->reg, id);
    if (!sb)
        return e2b_rest_error(c, 404, "sandbox \"%.64s\" not found", id);
    const char *m = c->req.method;
    if (!what) {
        if (!strcmp(m, "GET")) {
            pthread_mutex_lock(&srv->reg.lock);
            json_t *o = listed(sb, true);
            pthread_mutex_unlock(&srv->reg.lock);
            api_reply(c, 200, o);
        } else if (!strcmp(m, "DELETE")) {
            registry_ref(&srv->reg, sb); /* sandbox_destroy drops one, ours goes below */
            sandbox_destroy(srv, sb);
            events_emit(EVENT_KILLED, sb->id, NULL);
            api_reply_bytes(c, 204, NULL, NULL, NULL, 0);
        } else {
            e2b_rest_error(c, 405, "%s is not allowed on a sandbox (GET, DELETE)", m);
        }
    } else if (strcmp(m, "POST")) {
        e2b_rest_error(c, 405, "%s is not allowed here (POST)", m);
    } else if (!strcmp(what, "timeout")) {
        set_lease(srv, c, sb, "timeout", 0);
    } else if (!strcmp(what, "refreshes")) {
        set_lease(srv, c, sb, "duration", 0);
    } else if (!strcmp(what, "connect") || !strcmp(what, "resume")) {
        resume(srv, c, sb, what[0] == 'c');
    } else if (!strcmp(what, "pause")) {
        char err[600];
        bool memory;
        int http = pause_body(c, &memory) ? sandbox_pause(srv, sb, memory, err, sizeof(err)) : -1;
        if (http > 0)
            e2b_rest_error(c, http, "%s", err);
        else if (!http)
            api_reply_bytes(c, 204, NULL, NULL, NULL, 0);
    } else if (!strcmp(what, "snapshots")) {
        e2b_rest_error(c, 501, "airlock sandboxes cannot %s yet", what);
    } else {
        e2b_rest_error(c, 404, "no such path: %.200s", c->req.target);
    }
    registry_put(&srv->reg, sb);
}

void e2b_control(struct api_server *srv, struct api_conn *c, const char *path)
{
    c->error_hook = e2b_rest_error_hook;
    c->error_ctx = NULL;
    const char *m = c->req.method;
    if (!strcmp(path, "/sandboxes") || !strcmp(path, "/v2/sandboxes")) {
        bool v2 = path[1] == 'v';
        if (!strcmp(m, "GET"))
            list(srv, c, v2);
        else if (!v2 && !strcmp(m, "POST"))
            create(srv, c);
        else
            e2b_rest_error(c, 405, "%s is not allowed here", m);
    } else {
        char id[SANDBOX_ID_HEX + 2];
        const char *p = path + strlen("/sandboxes/");
        size_t n = strcspn(p, "/");
        if (n > SANDBOX_ID_HEX) {
            e2b_rest_error(c, 404, "sandbox \"%.64s\" not found", p);
        } else {
            memcpy(id, p, n);
            id[n] = '\0';
            one(srv, c, id, p[n] ? p + n + 1 : NULL);
        }
    }
    c->error_hook = NULL;
}
