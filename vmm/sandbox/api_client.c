#include "vmm/sandbox/api_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/sandbox/api_auth.h"
#include "vmm/util/base64.h"

#define LINE_MAX_LEN (4u << 20) /* one stream line: a 64 KiB chunk as base64 and then some */

int api_client_socket(const char *given, char *out, size_t cap, char *err, size_t errlen)
{
    const char *env = getenv("AIRLOCK_SOCKET");
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;
    if (given && *given)
        n = snprintf(out, cap, "%s", given);
    else if (env && *env)
        n = snprintf(out, cap, "%s", env);
    else if (geteuid() == 0)
        n = snprintf(out, cap, "/run/airlock/airlock.sock");
    else if (xdg && *xdg)
        n = snprintf(out, cap, "%s/airlock.sock", xdg);
    else {
        snprintf(err, errlen, "no daemon socket: give --socket PATH or set AIRLOCK_SOCKET "
                              "(XDG_RUNTIME_DIR is not set either)");
        return -1;
    }
    if (n < 0 || (size_t)n >= cap) {
        snprintf(err, errlen, "the daemon's socket path is too long");
        return -1;
    }
    return 0;
}

/* Reads more into c->buf; >0, 0 at EOF, -1 on error. */
static ssize_t fill(struct api_client *c)
{
    if (c->off == c->len)
        c->off = c->len = 0;
    if (c->off && c->len == sizeof(c->buf)) {
        memmove(c->buf, c->buf + c->off, c->len - c->off);
        c->len -= c->off;
        c->off = 0;
    }
    if (c->len == sizeof(c->buf))
        return -1;
    ssize_t n;
    while ((n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0)) < 0 && errno == EINTR)
        ;
    if (n > 0)
        c->len += (size_t)n;
    return n;
}

/* One CRLF-ended line of the answer's head or chunk framing, into out. */
static int read_line(struct api_client *c, char *out, size_t cap)
{
    for (;;) {
        char *nl = memchr(c->buf + c->off, '\n', c->len - c->off);
        if (nl) {
            size_t n = (size_t)(nl - (c->buf + c->off));
            if (n == 0 || nl[-1] != '\r' || n - 1 >= cap)
                return -1;
            memcpy(out, c->buf + c->off, n - 1);
            out[n - 1] = '\0';
            c->off += n + 1;
            return 0;
        }
        if (c->len - c->off >= cap || fill(c) <= 0)
            return -1;
    }
}

static int request(struct api_client *c, const char *sock, const char *method, const char *path,
                   const char *type, const char *data, int body_fd, size_t blen, char *err,
                   size_t errlen);

int api_client_request(struct api_client *c, const char *sock, const char *method,
                       const char *path, json_t *body, char *err, size_t errlen)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    int rc = request(c, sock, method, path, "application/json", text, -1,
                     text ? strlen(text) : 0, err, errlen);
    free(text);
    return rc;
}

int api_client_request_raw(struct api_client *c, const char *sock, const char *method,
                           const char *path, const void *data, size_t len, char *err,
                           size_t errlen)
{
    return request(c, sock, method, path, "application/octet-stream", data, -1, len, err, errlen);
}

int api_client_request_fd(struct api_client *c, const char *sock, const char *method,
                          const char *path, const char *type, int fd, size_t len, char *err,
                          size_t errlen)
{
    return request(c, sock, method, path, type, NULL, fd, len, err, errlen);
}

/* Sends len bytes of fd after the head; a refusal may close the socket
 * first, and its answer is read all the same. */
static void send_fd(int sock_fd, int fd, size_t len)
{
    char buf[65536];
    while (len) {
        ssize_t n = read(fd, buf, len < sizeof(buf) ? len : sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || agent_send_all(sock_fd, buf, (size_t)n))
            return;
        len -= (size_t)n;
    }
}

int api_client_path(char *out, size_t cap, const char *id, const char *what, const char *path)
{
    size_t n = (size_t)snprintf(out, cap, "/v1/sandboxes/%s/%s?path=", id, what);
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (n + 4 > cap)
            return -1;
        n += (size_t)snprintf(out + n, cap - n,
                              (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                      (*p >= '0' && *p <= '9') || strchr("/._-", *p)
                                  ? "%c" : "%%%02X", *p);
    }
    return n < cap ? 0 : -1;
}

/* A connection to the daemon: its Unix socket, or "http://IP:PORT" (serve
 * --listen) with $AIRLOCK_TOKEN as the Authorization line in auth.  The
 * fd, or -1 with err. */
static int dial(const char *sock, char *auth, size_t cap, char *err, size_t errlen)
{
    struct sockaddr_storage ss = {0};
    socklen_t len;
    if (!strncmp(sock, "http://", 7)) {
        char host[64];
        const char *hp = sock + 7, *colon = strrchr(hp, ':');
        size_t hl = colon ? (size_t)(colon - hp) : 0;
        char *end;
        unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
        bool v6 = hl > 2 && hp[0] == '[' && hp[hl - 1] == ']';
        struct sockaddr_in *v4a = (struct sockaddr_in *)&ss;
        struct sockaddr_in6 *v6a = (struct sockaddr_in6 *)&ss;
        if (!colon || !hl || hl >= sizeof(host) || !port || port > 65535 ||
            (*end && strcmp(end, "/"))) {
            snprintf(err, errlen, "%.200s: want http://IP:PORT", sock);
            return -1;
        }
        memcpy(host, hp + v6, hl - 2 * v6);
        host[hl - 2 * v6] = '\0';
        if (!v6 && inet_pton(AF_INET, host, &v4a->sin_addr) == 1) {
            v4a->sin_family = AF_INET;
            v4a->sin_port = htons((uint16_t)port);
            len = sizeof(*v4a);
        } else if (v6 && inet_pton(AF_INET6, host, &v6a->sin6_addr) == 1) {
            v6a->sin6_family = AF_INET6;
            v6a->sin6_port = htons((uint16_t)port);
            len = sizeof(*v6a);
        } else {
            snprintf(err, errlen, "%.200s: '%s' is not an IP address", sock, host);
            return -1;
        }
        /* The token goes into a header line: printable, no space, or no header. */
        const char *tok = getenv("AIRLOCK_TOKEN");
        size_t tl = tok ? strlen(tok) : 0;
        for (size_t i = 0; i < tl; i++)
            if (tok[i] <= ' ' || tok[i] > '~')
                tl = 0;
        if (tok && !tl) {
            snprintf(err, errlen, "AIRLOCK_TOKEN: want printable characters without spaces");
            return -1;
        }
        if (tl && (tl > API_TOKEN_MAX ||
                   snprintf(auth, cap, "Authorization: Bearer %s\r\n", tok) >= (int)cap)) {
            snprintf(err, errlen, "AIRLOCK_TOKEN: longer than %d bytes", API_TOKEN_MAX);
            return -1;
        }
    } else {
        struct sockaddr_un *a = (struct sockaddr_un *)&ss;
        if (strlen(sock) >= sizeof(a->sun_path)) {
            snprintf(err, errlen, "%s: path too long for a Unix socket", sock);
            return -1;
        }
        a->sun_family = AF_UNIX;
        strcpy(a->sun_path, sock);
        len = sizeof(*a);
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len) < 0) {
        int e = errno;
        snprintf(err, errlen, "no daemon at %s (%s): start one with `airlock serve`", sock,
                 strerror(e));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static int request(struct api_client *c, const char *sock, const char *method, const char *path,
                   const char *type, const char *data, int body_fd, size_t blen, char *err,
                   size_t errlen)
{
    memset(c, 0, sizeof(*c));
    char auth[API_TOKEN_MAX + 32] = "";
    if ((c->fd = dial(sock, auth, sizeof(auth), err, errlen)) < 0)
        return -1;
    /* Head and body in one write; an answer that comes before all of it
     * was taken (a refusal) is still read. */
    char head[10240 + sizeof(auth)]; /* a target of up to 8 KiB (files paths) */
    int hn = snprintf(head, sizeof(head),
                      "%s %s HTTP/1.1\r\nHost: airlock\r\nConnection: close\r\n%s"
                      "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n",
                      method, path, auth, type, blen);
    size_t inline_len = body_fd < 0 ? blen : 0;
    char *req = hn > 0 && (size_t)hn < sizeof(head) ? malloc((size_t)hn + inline_len) : NULL;
    bool ok = req != NULL;
    if (req) {
        memcpy(req, head, (size_t)hn);
        if (inline_len)
            memcpy(req + hn, data, inline_len);
        agent_send_all(c->fd, req, (size_t)hn + inline_len); /* a refusal may close it early */
        if (body_fd >= 0)
            send_fd(c->fd, body_fd, blen);
    }
    free(req);
    char line[1024];
    int minor;
    if (!ok || read_line(c, line, sizeof(line)) ||
        sscanf(line, "HTTP/1.%d %d", &minor, &c->status) != 2 || c->status < 100 ||
        c->status > 599) {
        snprintf(err, errlen, "%s: no HTTP answer from the daemon", sock);
        api_client_close(c);
        return -1;
    }
    bool has_length = false;
    for (;;) {
        if (read_line(c, line, sizeof(line)) < 0) {
            snprintf(err, errlen, "%s: a broken answer head from the daemon", sock);
            api_client_close(c);
            return -1;
        }
        if (!line[0])
            break; /* the empty line that ends the head */
        if (!strncasecmp(line, "Content-Length:", 15)) {
            c->left = strtoull(line + 15, NULL, 10);
            has_length = true;
        } else if (!strncasecmp(line, "Transfer-Encoding:", 18) && strstr(line + 18, "chunked")) {
            c->chunked = true;
        }
    }
    if (!c->chunked && !has_length)
        c->done = true; /* 204: no body */
    return 0;
}

/* Up to `cap` body bytes (chunked framing removed); 0 at the end. */
static ssize_t body_read(struct api_client *c, char *out, size_t cap)
{
    while (!c->done && c->left == 0) {
        if (!c->chunked) {
            c->done = true;
            break;
        }
        char line[64];
        if (read_line(c, line, sizeof(line)) < 0)
            return -1;
        if (!line[0] && read_line(c, line, sizeof(line)) < 0) /* the CRLF after a chunk */
            return -1;
        char *end;
        c->left = strtoull(line, &end, 16);
        if (end == line)
            return -1;
        if (c->left == 0)
            c->done = true;
    }
    if (c->done)
        return 0;
    if (c->off == c->len && fill(c) <= 0)
        return -1;
    size_t n = c->len - c->off;
    if (n > c->left)
        n = (size_t)c->left;
    if (n > cap)
        n = cap;
    memcpy(out, c->buf + c->off, n);
    c->off += n;
    c->left -= n;
    return (ssize_t)n;
}

ssize_t api_client_body(struct api_client *c, void *buf, size_t cap)
{
    return body_read(c, buf, cap);
}

json_t *api_client_json(struct api_client *c, char *err, size_t errlen)
{
    size_t cap = 4096, len = 0;
    char *all = malloc(cap);
    ssize_t n;
    while (all && (n = body_read(c, all + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        if (len + 1 == cap) {
            if (cap >= API_CLIENT_BODY_MAX) {
                n = -1;
                break;
            }
            char *more = realloc(all, cap * 2);
            if (!more)
                break;
            all = more;
            cap *= 2;
        }
    }
    json_t *j = NULL;
    json_error_t je;
    if (all && len)
        j = json_loadb(all, len, 0, &je);
    if (!j && len)
        snprintf(err, errlen, "the daemon's answer is not JSON");
    else if (!j)
        err[0] = '\0';
    free(all);
    return j;
}

json_t *api_client_line(struct api_client *c, char *err, size_t errlen)
{
    size_t cap = 4096, len = 0;
    char *line = malloc(cap);
    err[0] = '\0';
    while (line) {
        ssize_t n = body_read(c, line + len, 1);
        if (n < 0) {
            snprintf(err, errlen, "the daemon's stream broke off");
            break;
        }
        if (n == 0) {
            if (len)
                snprintf(err, errlen, "the daemon's stream ended mid-line");
            break;
        }
        if (line[len] == '\n') {
            json_error_t je;
            json_t *j = json_loadb(line, len, 0, &je);
            if (!j)
                snprintf(err, errlen, "the daemon sent a line that is not JSON");
            free(line);
            return j;
        }
        if (++len == cap) {
            char *more = cap < LINE_MAX_LEN ? realloc(line, cap * 2) : NULL;
            if (!more) {
                snprintf(err, errlen, "the daemon sent an over-long line");
                break;
            }
            line = more;
            cap *= 2;
        }
    }
    free(line);
    return NULL;
}

const char *api_client_line_data(json_t *line, size_t *len, unsigned char **owned)
{
    *owned = NULL;
    json_t *d = json_object_get(line, "data");
    if (json_is_string(d)) {
        *len = json_string_length(d);
        return json_string_value(d);
    }
    const char *b64 = json_string_value(json_object_get(line, "data_b64"));
    return b64 ? (const char *)(*owned = base64_decode(b64, len)) : NULL;
}

ssize_t api_client_line_write(json_t *line, int fd)
{
    size_t len = 0;
    unsigned char *owned;
    const char *p = api_client_line_data(line, &len, &owned);
    int rc = p ? agent_write_all(fd, p, len) : -EINVAL;
    free(owned);
    if (rc) {
        errno = -rc;
        return -1;
    }
    return (ssize_t)len;
}

void api_client_close(struct api_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

const char *api_client_error_text(json_t *answer, int status, char *buf, size_t cap)
{
    const char *e = json_string_value(json_object_get(answer, "error"));
    if (e)
        return e;
    snprintf(buf, cap, "the daemon answered %d", status);
    return buf;
}
