/* airlock cp SRC DST: files and folders between the host and a sandbox,
 * with `docker cp`'s rules, through the daemon's archive routes
 * (vmm/sandbox/archive.h).  One side is ID:PATH (PATH absolute in the
 * sandbox), the other a local path or '-' (a tar on stdin or stdout):
 *   a folder into an existing folder goes inside it, under its own name;
 *   onto a name that does not exist, it is made with that name;
 *   SRC ending in "/." copies what the folder holds, not the folder;
 *   a file onto an existing file replaces it; a folder onto a file fails.
 * Links are copied as links; modes are kept (and mtimes, coming out). */
#include <errno.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/cli/commands.h"
#include "vmm/cli/cp_local.h"
#include "vmm/cli/sandbox_options.h"
#include "vmm/sandbox/api_client.h"
#include "vmm/util/exit_codes.h"
#include "vmm/util/tar_pack.h"

#define CP_USAGE                                                                              \
    "usage: airlock cp [--socket PATH] SRC DST\n"                                             \
    "Copies files and folders between the host and a sandbox of airlock serve, as\n"         \
    "docker cp does.  One side is ID:PATH (PATH absolute in the sandbox), the other a\n"     \
    "local path, or '-': a tar on stdin (SRC, extracted into the folder DST) or on\n"        \
    "stdout (DST).  A folder copied into an existing folder goes inside it; onto a\n"        \
    "name that does not exist, it takes that name; SRC ending in /. copies what the\n"       \
    "folder holds.  Links stay links, modes are kept.  docs/sandboxes.md.\n"

struct side {
    const char *arg;
    char id[65];
    char path[AGENT_MAX_PATH]; /* remote: absolute; local: as given */
    bool remote, dash, contents;
};

/* ID:PATH when what precedes the first ':' could be a sandbox id (a local
 * name with a ':' is written ./name:x), else a local path. */
static int parse_side(const char *arg, struct side *s)
{
    memset(s, 0, sizeof(*s));
    s->arg = arg;
    const char *colon = strchr(arg, ':');
    size_t idl = colon ? (size_t)(colon - arg) : 0;
    s->remote = colon && idl >= 1 && idl <= 64 && strspn(arg, "0123456789abcdefghijklmnopqrstuvwxyz"
                                                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ_-") == idl;
    s->dash = !strcmp(arg, "-");
    const char *p = s->remote ? colon + 1 : arg;
    if (!*p)
        return verb_fail("'%.200s': an empty path", arg);
    if (s->remote && p[0] != '/')
        return verb_fail("'%.200s': the path in a sandbox must be absolute", arg);
    if (strlen(p) >= sizeof(s->path))
        return verb_fail("'%.200s': path too long", arg);
    memcpy(s->id, arg, idl);
    s->id[s->remote ? idl : 0] = '\0';
    snprintf(s->path, sizeof(s->path), "%s", p);
    size_t l = strlen(s->path);
    if (l >= 2 && !strcmp(s->path + l - 2, "/.")) { /* "DIR/.": what DIR holds */
        s->contents = true;
        s->path[l -= 2] = '\0';
        if (!l)
            strcpy(s->path, "/");
    }
    while (l > 1 && s->path[l - 1] == '/')
        s->path[--l] = '\0';
    return 0;
}

/* The last component of a path ("/" for "/"), in out. */
static const char *base_of(const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "%s", path);
    return basename(out);
}

static const char *dir_of(const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "%s", path);
    return dirname(out);
}

/* GET .../stat: 1 with *kind ("file", "dir", ...), 0 when the path does
 * not exist, or 125 after an error line. */
static int remote_stat(const char *sock, const struct side *s, char *kind, size_t cap)
{
    char q[3 * AGENT_MAX_PATH + 128], err[600];
    struct api_client c;
    if (api_client_path(q, sizeof(q), s->id, "stat", s->path))
        return verb_fail("'%.200s': path too long", s->arg);
    if (api_client_request(&c, sock, "GET", q, NULL, err, sizeof(err)))
        return verb_fail("%s", err);
    json_t *j = api_client_json(&c, err, sizeof(err));
    api_client_close(&c);
    int rc = 1;
    if (c.status == 200)
        snprintf(kind, cap, "%s", json_string_value(json_object_get(j, "type")) ?: "");
    else if (c.status == 404 && json_object_get(j, "field"))
        rc = 0; /* the path (not the sandbox: that 404 names no field) */
    else
        rc = verb_fail("%s", api_client_error_text(j, c.status, err, sizeof(err)));
    json_decref(j);
    return rc;
}

/* Reads a JSON error answer and prints it: 125. */
static int answer_fail(struct api_client *c)
{
    char err[600];
    json_t *j = api_client_json(c, err, sizeof(err));
    int rc = verb_fail("%s", api_client_error_text(j, c->status, err, sizeof(err)));
    json_decref(j);
    return rc;
}

static ssize_t from_answer(void *opaque, void *buf, size_t len)
{
    return api_client_body(opaque, buf, len);
}

static ssize_t from_stdin(void *opaque, void *buf, size_t len)
{
    (void)opaque;
    ssize_t n;
    while ((n = read(STDIN_FILENO, buf, len)) < 0 && errno == EINTR)
        ;
    return n;
}

/* Sandbox to host. */
static int download(const char *sock, const struct side *src, const struct side *dst)
{
    char kind[16], err[600], q[3 * AGENT_MAX_PATH + 128], top[AGENT_MAX_PATH], dir[AGENT_MAX_PATH];
    int rc = remote_stat(sock, src, kind, sizeof(kind));
    if (rc != 1)
        return rc ? rc : verb_fail("%s: No such file or directory", src->arg);
    const char *new_top = NULL, *dest = dst->path;
    struct stat st;
    int have = dst->dash ? 0 : stat(dst->path, &st) == 0 ? 1 : errno == ENOENT ? -1 : -errno;
    if (have == 1 && S_ISDIR(st.st_mode)) { /* into it, under its own name */
        new_top = src->contents || !strcmp(src->path, "/") ? NULL
                                                           : base_of(src->path, top, sizeof(top));
    } else if (have == 1 && !strcmp(kind, "dir")) {
        return verb_fail("%s: cannot copy a folder onto a file", dst->arg);
    } else if (have == 1 || have == -1) { /* as this name, or replacing a file */
        dest = dir_of(dst->path, dir, sizeof(dir));
        new_top = base_of(dst->path, top, sizeof(top));
        if (stat(dest, &st) || !S_ISDIR(st.st_mode))
            return verb_fail("%s: no such folder to copy into", dest);
    } else if (have < 0) {
        return verb_fail("%s: %s", dst->arg, strerror(-have));
    }
    struct api_client c;
    if (api_client_path(q, sizeof(q), src->id, "archive", src->path))
        return verb_fail("'%.200s': path too long", src->arg);
    if (api_client_request(&c, sock, "GET", q, NULL, err, sizeof(err)))
        return verb_fail("%s", err);
    if (c.status != 200) {
        rc = answer_fail(&c);
    } else if (dst->dash) {
        char buf[65536];
        ssize_t n;
        while ((n = api_client_body(&c, buf, sizeof(buf))) > 0)
            if (agent_write_all(STDOUT_FILENO, buf, (size_t)n))
                break;
        rc = n ? verb_fail("%s", n < 0 ? "the daemon's tar broke off" : "stdout: cannot write")
               : 0;
    } else {
        rc = cp_local_unpack(from_answer, &c, dest, new_top, err, sizeof(err))
                 ? verb_fail("%s", err) : 0;
    }
    api_client_close(&c);
    return rc;
}

/* Host to sandbox: a tar of the local side (or stdin's) into a folder. */
static int upload(const char *sock, const struct side *src, const struct side *dst)
{
    char kind[16] = "", err[600], q[3 * AGENT_MAX_PATH + 128], top[AGENT_MAX_PATH],
         dir[AGENT_MAX_PATH];
    const char *into = dst->path, *name = NULL;
    struct stat st;
    if (!src->dash && lstat(src->path, &st))
        return verb_fail("%s: %s", src->arg, strerror(errno));
    int rc = remote_stat(sock, dst, kind, sizeof(kind));
    if (rc != 0 && rc != 1)
        return rc;
    bool src_dir = !src->dash && S_ISDIR(st.st_mode);
    if (src->dash) {
        if (rc == 1 && strcmp(kind, "dir") && strcmp(kind, "symlink"))
            return verb_fail("%s: not a folder (a tar from stdin is extracted into one)",
                             dst->arg);
    } else if (rc == 1 && (!strcmp(kind, "dir") || !strcmp(kind, "symlink"))) {
        name = base_of(src->path, top, sizeof(top));
    } else if (rc == 1 && src_dir) {
        return verb_fail("%s: cannot copy a folder onto a file", dst->arg);
    } else { /* a new name, or a file replacing a file */
        into = dir_of(dst->path, dir, sizeof(dir));
        name = base_of(dst->path, top, sizeof(top));
    }
    FILE *spool = tmpfile();
    if (!spool)
        return verb_fail("cannot make a temporary file: %s", strerror(errno));
    int fd = fileno(spool);
    if (src->dash) {
        char buf[65536];
        ssize_t n;
        while ((n = from_stdin(NULL, buf, sizeof(buf))) > 0 && !agent_write_all(fd, buf, (size_t)n))
            ;
        rc = n ? verb_fail("stdin: %s", strerror(errno)) : 0;
    } else {
        rc = tar_pack(src->path, name, src->contents && src_dir && rc == 1, fd, err,
                           sizeof(err)) ? verb_fail("%s", err) : 0;
    }
    off_t size = lseek(fd, 0, SEEK_END);
    lseek(fd, 0, SEEK_SET);
    struct api_client c;
    if (!rc && api_client_path(q, sizeof(q), dst->id, "archive", into))
        rc = verb_fail("'%.200s': path too long", dst->arg);
    if (!rc && api_client_request_fd(&c, sock, "PUT", q, "application/x-tar", fd, (size_t)size,
                                     err, sizeof(err)))
        rc = verb_fail("%s", err);
    else if (!rc) {
        if (c.status != 200)
            rc = answer_fail(&c);
        else
            json_decref(api_client_json(&c, err, sizeof(err)));
        api_client_close(&c);
    }
    fclose(spool);
    return rc;
}

int cmd_cp(int argc, char **argv)
{
    const char *sock_flag = NULL;
    int opt = verb_socket_option(argc, argv, "cp", CP_USAGE, &sock_flag, NULL, NULL);
    if (opt)
        return opt < 0 ? 0 : opt;
    if (argc - optind != 2)
        return verb_fail("want SRC and DST: airlock cp [--socket PATH] SRC DST");
    struct side src, dst;
    int rc = parse_side(argv[optind], &src);
    if (!rc)
        rc = parse_side(argv[optind + 1], &dst);
    if (rc)
        return rc;
    if (src.remote == dst.remote)
        return verb_fail("one of SRC and DST is a sandbox's ID:PATH, the other a local path or '-'");
    if (dst.contents)
        return verb_fail("'%.200s': a destination ending in /. means nothing", dst.arg);
    char sock[4096], err[512];
    if (api_client_socket(sock_flag, sock, sizeof(sock), err, sizeof(err)))
        return verb_fail("%s", err);
    return src.remote ? download(sock, &src, &dst) : upload(sock, &src, &dst);
}
