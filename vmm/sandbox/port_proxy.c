#include "vmm/sandbox/port_proxy.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/agent_conn.h"
#include "vmm/forward/forward.h"
#include "vmm/sandbox/vm_proc.h"

/* Fields that are about this hop, not the request: the guest gets its
 * own Connection, and never the daemon's credential. */
static bool hop_field(const char *line, size_t len, bool token)
{
    static const char *const hop[] = {"connection", "keep-alive", "proxy-connection",
                                      "proxy-authorization", "te", "trailer"};
    const char *colon = memchr(line, ':', len);
    size_t n = colon ? (size_t)(colon - line) : len;
    for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]); i++)
        if (n == strlen(hop[i]) && !strncasecmp(line, hop[i], n))
            return true;
    return token && n == 13 && !strncasecmp(line, "authorization", 13);
}

/* Is this field NAME with a value that has `word` (a token list)? */
static bool field_has(const char *line, size_t len, const char *name, const char *word)
{
    size_t n = strlen(name);
    if (len <= n || strncasecmp(line, name, n) || line[n] != ':')
        return false;
    char v[512];
    snprintf(v, sizeof(v), "%.*s", (int)(len - n - 1), line + n + 1);
    for (char *p = v; *p; p++)
        *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    return strstr(v, word) != NULL;
}

/* The head for the guest: the request line with `path`, the client's
 * fields but this hop's, and Connection: close (or Upgrade). */
static char *guest_head(const struct api_conn *c, const char *path, const char *prefix,
                        size_t *len)
{
    size_t cap = c->raw_head_len + strlen(path) + strlen(prefix) + 128;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t o = (size_t)snprintf(out, cap, "%s %s HTTP/1.1\r\n", c->req.method, path);
    const char *p = memchr(c->raw_head, '\n', c->raw_head_len), *end = c->raw_head + c->raw_head_len;
    bool upgrade = false, connection_upgrade = false;
    for (p = p ? p + 1 : end; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        size_t ln = n && p[n - 1] == '\r' ? n - 1 : n;
        if (ln == 0)
            break; /* the blank line */
        upgrade |= ln > 8 && !strncasecmp(p, "upgrade:", 8);
        connection_upgrade |= field_has(p, ln, "connection", "upgrade");
        if (!hop_field(p, ln, c->token != NULL)) {
            memcpy(out + o, p, ln);
            o += ln;
            out[o++] = '\r';
            out[o++] = '\n';
        }
        p = nl ? nl + 1 : end;
    }
    o += (size_t)snprintf(out + o, cap - o, "X-Forwarded-Prefix: %s\r\nConnection: %s\r\n\r\n",
                          prefix, upgrade && connection_upgrade ? "Upgrade" : "close");
    *len = o;
    return out;
}

void port_proxy(struct api_conn *c, struct sandbox *sb, uint16_t port, const char *path)
{
    if (!c->raw_head)
        return api_error(c, 500, NULL, "the request's head was not kept");
    int64_t t0 = agent_mono_ms();
    int vfd = vm_proc_dial_port(sb->sock, AGENT_FORWARD_VSOCK_PORT);
    int rc = vfd < 0 ? vfd : forward_handshake(vfd, port);
    if (rc) {
        if (vfd >= 0)
            close(vfd);
        return api_error(c, 502, NULL, "guest port %u: %s%s", port, rc > 0 ? "" : "the agent: ",
                         rc == ECONNREFUSED ? "nothing listens there" : strerror(rc > 0 ? rc : -rc));
    }
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "/v1/sandboxes/%s/ports/%u", sb->id, port);
    size_t hlen;
    char *head = guest_head(c, *path ? path : "/", prefix, &hlen);
    /* The head, then the body bytes already read past it; the rest of
     * the exchange is the guest's and the client's. */
    if (!head || agent_send_all(vfd, head, hlen) || (c->have && agent_send_all(vfd, c->buf, c->have))) {
        free(head);
        close(vfd);
        return api_error(c, 502, NULL, "guest port %u: the connection broke", port);
    }
    free(head);
    c->have = 0;
    c->body_left = 0;
    c->close = true;   /* nothing else is ours on this connection */
    c->broken = true;  /* and no answer of the API's follows */
    uint64_t in, out;
    const char *how = forward_pipe(c->fd, vfd, 0, &in, &out);
    close(vfd);
    struct audit_rec r;
    audit_begin(&sb->audit, &r, "port_http");
    audit_u64(&r, "guest_port", port);
    audit_str(&r, "method", c->req.method);
    audit_str(&r, "path", path);
    audit_str(&r, "result", how);
    audit_u64(&r, "bytes_in", in);
    audit_u64(&r, "bytes_out", out);
    audit_u64(&r, "duration_ms", (uint64_t)(agent_mono_ms() - t0));
    audit_end(&sb->audit, &r);
}
