#include "vmm/e2b/connect_call.h"

#include <stdarg.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/e2b/connect_wire.h"

static void hook(struct api_conn *c, int status, const char *field, const char *msg)
{
    struct connect_call *k = c->error_ctx;
    if (field)
        connect_fail(k, connect_code_for_http(status), "%s (%s)", msg, field);
    else
        connect_fail(k, connect_code_for_http(status), "%s", msg);
}

/* The media type without parameters ("application/json; charset=utf-8"). */
static bool type_is(const char *v, const char *want)
{
    size_t n = strlen(want);
    return !strncasecmp(v, want, n) && (!v[n] || v[n] == ';' || v[n] == ' ');
}

int connect_call_open(struct connect_call *k, struct api_conn *c, json_t **msg)
{
    memset(k, 0, sizeof(*k));
    k->c = c;
    c->error_hook = hook;
    c->error_ctx = k;
    *msg = NULL;
    char type[128], tmo[32];
    if (api_header(c, "Content-Type", type, sizeof(type)) != 1)
        type[0] = '\0';
    k->stream = type_is(type, "application/connect+json");
    if (strcmp(c->req.method, "POST")) {
        connect_fail(k, "unimplemented", "Connect calls are POSTs, not %s", c->req.method);
        return -1;
    }
    if (!k->stream && !type_is(type, "application/json")) {
        /* The protocol's answer to a codec it does not speak (binary
         * protobuf: the SDK sends JSON). */
        c->close = true;
        api_reply_bytes(c, 415, "application/json", NULL, "", 0);
        k->ended = true;
        return -1;
    }
    int t = api_header(c, "Connect-Timeout-Ms", tmo, sizeof(tmo));
    uint64_t ms = 0;
    if (t < 0 || (t == 1 && connect_timeout_parse(tmo, &ms))) {
        connect_fail(k, "invalid_argument", "Connect-Timeout-Ms: want 1 to 10 digits");
        return -1;
    }
    if (t == 1)
        k->deadline_ms = agent_mono_ms() + (int64_t)(ms ? ms : 1);
    if (c->req.body_len > CONNECT_MSG_MAX + 5) {
        connect_fail(k, "resource_exhausted", "the request message passes %u bytes",
                     CONNECT_MSG_MAX);
        return -1;
    }
    if (api_read_body(c)) { /* answered through the hook */
        k->ended = true;
        return -1;
    }
    const uint8_t *p = (const uint8_t *)c->body;
    size_t n = c->req.body_len;
    const char *why;
    if (k->stream && connect_request_envelope(p, n, &p, &n, &why)) {
        connect_fail(k, "invalid_argument", "%s", why);
        return -1;
    }
    json_error_t err;
    json_t *o = n ? json_loadb((const char *)p, n, JSON_REJECT_DUPLICATES, &err) : json_object();
    if (!o || !json_is_object(o)) {
        connect_fail(k, "invalid_argument", "the request message is not a JSON object%s%s",
                     o ? "" : ": ", o ? "" : err.text);
        json_decref(o);
        return -1;
    }
    *msg = o;
    return 0;
}

void connect_call_close(struct connect_call *k)
{
    if (k->c->error_ctx == k) {
        k->c->error_hook = NULL;
        k->c->error_ctx = NULL;
    }
}

static void stream_begin(struct connect_call *k)
{
    if (!k->began) {
        k->began = true;
        api_chunked_begin(k->c, 200, "application/connect+json");
    }
}

static void stream_write(struct connect_call *k, uint8_t flags, json_t *o)
{
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!text) {
        connect_cut(k);
        return;
    }
    size_t n = strlen(text);
    uint8_t *buf = malloc(CONNECT_HEAD_LEN + n);
    if (buf) {
        connect_envelope_head(buf, flags, (uint32_t)n);
        memcpy(buf + CONNECT_HEAD_LEN, text, n);
        api_chunked_write(k->c, buf, CONNECT_HEAD_LEN + n); /* one chunk: one envelope */
    } else {
        connect_cut(k);
    }
    free(buf);
    free(text);
}

void connect_send(struct connect_call *k, json_t *msg)
{
    if (k->ended) {
        json_decref(msg);
        return;
    }
    if (!k->stream) {
        k->ended = true;
        return api_reply(k->c, 200, msg);
    }
    stream_begin(k);
    stream_write(k, 0, msg);
}

void connect_fail(struct connect_call *k, const char *code, const char *fmt, ...)
{
    if (k->ended)
        return;
    k->ended = true;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    json_t *m = json_string(msg); /* NULL when it quotes bytes that are not UTF-8 */
    json_t *err = json_pack("{s:s,s:o}", "code", code,
                            "message", m ? m : json_string("(a message that was not UTF-8)"));
    if (!k->stream)
        return api_reply(k->c, connect_code_http(code), err);
    stream_begin(k);
    stream_write(k, CONNECT_FLAG_END, json_pack("{s:o}", "error", err));
    api_chunked_end(k->c);
}

void connect_end(struct connect_call *k)
{
    if (k->ended || !k->stream)
        return;
    k->ended = true;
    stream_begin(k);
    stream_write(k, CONNECT_FLAG_END, json_object());
    api_chunked_end(k->c);
}

void connect_cut(struct connect_call *k)
{
    k->ended = true;
    if (k->began || !k->stream)
        api_chunked_abort(k->c);
    else
        k->c->close = k->c->broken = true;
}
