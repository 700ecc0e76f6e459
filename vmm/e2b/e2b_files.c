#include "vmm/e2b/e2b_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "vmm/e2b/e2b_control.h"
#include "vmm/e2b/e2b_fs_entry.h"
#include "vmm/e2b/e2b_user.h"
#include "vmm/http/http_query.h"
#include "vmm/http/multipart.h"
#include "vmm/sandbox/files.h"
#include "vmm/sandbox/guest_fs.h"
#include "vmm/sandbox/guest_ops.h"

/* An upload's body (several files in one multipart request), and what a
 * gzip one may inflate to: each file stays under FILES_MAX. */
#define E2B_UPLOAD_MAX (4 * FILES_MAX)

/* The guest errno about path in envd's REST shape. */
static void file_error(struct api_conn *c, const char *path, int e)
{
    if (e == ENOENT)
        e2b_rest_error(c, 404, "path not found: %.1000s", path);
    else if (e == EISDIR)
        e2b_rest_error(c, 400, "path is a directory: %.1000s", path);
    else if (e == EFBIG)
        e2b_rest_error(c, 413, "%.1000s: larger than %llu bytes", path, FILES_MAX);
    else if (e == EACCES || e == EPERM)
        e2b_rest_error(c, 403, "%.1000s: %s", path, strerror(e));
    else
        guest_fs_error(c, path, e); /* through the hook */
}

/* ?path= made absolute for the user into out (empty when absent and not
 * required); -1 with the error answered. */
static int path_of(struct api_conn *c, const struct e2b_user *u, const char *given, char *out)
{
    char abs[AGENT_MAX_PATH];
    if (e2b_user_path(u, given, abs, sizeof(abs)) || e2b_clean_path(abs, out, AGENT_MAX_PATH)) {
        e2b_rest_error(c, 400, "path: too long");
        return -1;
    }
    return 0;
}

/* The user ?username= names; -1 with the error answered. */
static int user_of(struct api_conn *c, struct sandbox *sb, struct e2b_user *u)
{
    char name[E2B_USER_NAME_MAX + 2];
    int n = query_param(c->req.target, "username", name, sizeof(name));
    if (n < 0) {
        e2b_rest_error(c, 400, "username: too long or malformed");
        return -1;
    }
    return e2b_user_resolve_name(c, sb, n > 0 ? name : NULL, u);
}

static void get_file(struct api_conn *c, struct sandbox *sb)
{
    struct e2b_user u;
    char given[AGENT_MAX_PATH], path[AGENT_MAX_PATH];
    int q = query_param(c->req.target, "path", given, sizeof(given));
    if (q <= 0)
        return e2b_rest_error(c, 400, "path: want ?path=FILE");
    if (user_of(c, sb, &u) || path_of(c, &u, given, path))
        return;
    int rc = files_send(c, sb, path);
    if (rc)
        file_error(c, path, -rc);
}

/* ---- uploads ---- */

struct span_reader {
    const char *p;
    size_t left;
};

static ssize_t read_span(void *opaque, void *buf, size_t len)
{
    struct span_reader *r = opaque;
    if (len > r->left)
        len = r->left;
    memcpy(buf, r->p, len);
    r->p += len;
    r->left -= len;
    return (ssize_t)len;
}

/* gzip bytes inflated into a new memfd (at most max bytes): its fd, or
 * -1 with the error answered. */
static int gunzip(struct api_conn *c, const unsigned char *in, size_t n, uint64_t max)
{
    int out = memfd_create("airlock-e2b-gunzip", MFD_CLOEXEC);
    if (out < 0) {
        e2b_rest_error(c, 503, "cannot hold the upload: %s", strerror(errno));
        return -1;
    }
    z_stream z = {0};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
        close(out);
        e2b_rest_error(c, 503, "cannot inflate the upload");
        return -1;
    }
    static __thread unsigned char buf[65536];
    uint64_t total = 0;
    int zr = Z_OK;
    z.next_in = (unsigned char *)in;
    while (zr != Z_STREAM_END) {
        size_t chunk = n - (size_t)((const unsigned char *)z.next_in - in);
        z.avail_in = chunk > (1u << 30) ? (1u << 30) : (unsigned)chunk;
        z.next_out = buf;
        z.avail_out = sizeof(buf);
        zr = inflate(&z, Z_NO_FLUSH);
        size_t got = sizeof(buf) - z.avail_out;
        if (zr != Z_OK && zr != Z_STREAM_END && !(zr == Z_BUF_ERROR && got)) {
            inflateEnd(&z);
            close(out);
            e2b_rest_error(c, 400, "Content-Encoding: gzip, but the body is not gzip data%s",
                           zr == Z_BUF_ERROR ? " (it ends too soon)" : "");
            return -1;
        }
        total += got;
        if (total > max) {
            inflateEnd(&z);
            close(out);
            e2b_rest_error(c, 413, "the upload inflates past %llu bytes", (unsigned long long)max);
            return -1;
        }
        if (got && agent_write_all(out, buf, got)) {
            inflateEnd(&z);
            close(out);
            e2b_rest_error(c, 507, "cannot hold the upload");
            return -1;
        }
    }
    inflateEnd(&z);
    return out;
}

/* One file written for the user and its answer appended; -1 with the
 * error answered. */
static int put_one(struct api_conn *c, int agent, const struct e2b_user *u, const char *given,
                   const char *data, size_t len, json_t *out)
{
    char path[AGENT_MAX_PATH];
    if (!given[0]) {
        e2b_rest_error(c, 400, "a file without a path (give ?path= or the part's filename)");
        return -1;
    }
    if (path_of(c, u, given, path))
        return -1;
    if (len > FILES_MAX) {
        e2b_rest_error(c, 413, "%.1000s: larger than %llu bytes", path, FILES_MAX);
        return -1;
    }
    struct span_reader r = {data, len};
    int rc = guest_write(agent, path, 0644, (struct guest_owner){u->uid, u->gid}, true, len,
                         read_span, &r);
    if (rc) {
        file_error(c, path, -rc);
        return -1;
    }
    const char *slash = strrchr(path, '/');
    json_array_append_new(out, json_pack("{s:s,s:s,s:s}", "name", slash[1] ? slash + 1 : path,
                                         "type", "file", "path", path));
    return 0;
}

static void post_files(struct api_conn *c, struct sandbox *sb)
{
    struct e2b_user u;
    char given[AGENT_MAX_PATH] = "", type[256], enc[64];
    if (query_param(c->req.target, "path", given, sizeof(given)) < 0)
        return e2b_rest_error(c, 400, "path: too long or malformed");
    if (api_header(c, "Content-Type", type, sizeof(type)) != 1)
        type[0] = '\0';
    int e = api_header(c, "Content-Encoding", enc, sizeof(enc));
    bool gz = e == 1 && !strcasecmp(enc, "gzip");
    if (e < 0 || (e == 1 && !gz && strcasecmp(enc, "identity")))
        return e2b_rest_error(c, 415, "Content-Encoding: gzip or identity");
    char boundary[MULTIPART_BOUNDARY_MAX + 1];
    bool multipart = !strncasecmp(type, "multipart/", 10);
    if (multipart && multipart_boundary(type, boundary))
        return e2b_rest_error(c, 400, "Content-Type: want multipart/form-data with a boundary");
    if (user_of(c, sb, &u))
        return;
    int raw = memfd_create("airlock-e2b-put", MFD_CLOEXEC);
    if (raw < 0)
        return e2b_rest_error(c, 503, "cannot hold the upload: %s", strerror(errno));
    if (api_body_to_fd(c, raw, E2B_UPLOAD_MAX)) {
        close(raw);
        return;
    }
    off_t n = lseek(raw, 0, SEEK_END);
    void *map = n > 0 ? mmap(NULL, (size_t)n, PROT_READ, MAP_PRIVATE, raw, 0) : NULL;
    if (map == MAP_FAILED) {
        close(raw);
        return e2b_rest_error(c, 503, "cannot map the upload: %s", strerror(errno));
    }
    const char *body = map ? map : "";
    size_t len = (size_t)n;
    int inflated = -1;
    void *imap = NULL;
    off_t in = 0;
    if (gz) {
        inflated = gunzip(c, (const unsigned char *)body, len, E2B_UPLOAD_MAX);
        if (inflated < 0)
            goto out;
        in = lseek(inflated, 0, SEEK_END);
        imap = in > 0 ? mmap(NULL, (size_t)in, PROT_READ, MAP_PRIVATE, inflated, 0) : NULL;
        if (imap == MAP_FAILED) {
            imap = NULL;
            e2b_rest_error(c, 503, "cannot map the upload");
            goto out;
        }
        body = imap ? imap : "";
        len = (size_t)in;
    }
    int agent = guest_fs_dial(c, sb);
    if (agent < 0)
        goto out;
    json_t *answer = json_array();
    int rc = 0;
    if (multipart) {
        struct multipart m;
        static __thread struct multipart_part part;
        multipart_init(&m, boundary, body, len);
        int r;
        while (!rc && (r = multipart_next(&m, &part)) == 1)
            if (part.has_filename || !strcmp(part.name, "file"))
                rc = put_one(c, agent, &u, given[0] ? given : part.filename, part.data, part.len,
                             answer);
        if (!rc && r < 0) {
            e2b_rest_error(c, 400, "the multipart body is malformed: %s", part.why);
            rc = -1;
        }
    } else {
        rc = put_one(c, agent, &u, given, body, len, answer);
    }
    close(agent);
    if (!rc)
        api_reply(c, 200, answer);
    else
        json_decref(answer);
out:
    if (imap)
        munmap(imap, (size_t)in);
    if (inflated >= 0)
        close(inflated);
    if (map)
        munmap(map, (size_t)n);
    close(raw);
}

void e2b_files(struct api_server *srv, struct api_conn *c, struct sandbox *sb)
{
    (void)srv;
    c->error_hook = e2b_rest_error_hook;
    if (!strcmp(c->req.method, "GET"))
        get_file(c, sb);
    else if (!strcmp(c->req.method, "POST"))
        post_files(c, sb);
    else
        e2b_rest_error(c, 405, "/files takes GET and POST");
    c->error_hook = NULL;
}
