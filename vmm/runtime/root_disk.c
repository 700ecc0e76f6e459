/* A bundle's root folder as a cached root disk; see root_disk.h. */
#include "vmm/runtime/root_disk.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "vmm/image/image_store.h"

/* Changes whenever a disk made from the same tree would differ. */
#define ROOT_DISK_FORMAT "airlock-oci-root-disk-1 kept-owners headroom=1024"
#define MOUNTINFO_MAX (8u << 20)

/* mountinfo's octal escapes (\040 for a space, \134 for a backslash)
 * undone in place. */
static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
            s[3] >= '0' && s[3] <= '7') {
            *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
}

void overlay_layers_free(struct overlay_layers *o)
{
    for (unsigned i = 0; i < o->nlower; i++)
        free(o->lower[i]);
    free(o->upper);
    memset(o, 0, sizeof(*o));
}

/* lowerdir's value: folders split at ':' (a "\:" is a colon of a name). */
static int split_lowers(const char *v, struct overlay_layers *o)
{
    char part[PATH_MAX];
    size_t n = 0;
    for (const char *p = v;; p++) {
        if (*p == '\\' && p[1] == ':') {
            p++;
        } else if (*p == ':' || !*p) {
            part[n] = '\0';
            if (part[0] != '/' || o->nlower == ROOT_DISK_MAX_LOWERS)
                return 0; /* relative (resolved against the engine's folder) or too many */
            if (!(o->lower[o->nlower++] = strdup(part)))
                return -ENOMEM;
            n = 0;
            if (!*p)
                return 1;
            continue;
        }
        if (n + 1 >= sizeof(part))
            return 0;
        part[n++] = *p;
    }
}

/* One mountinfo line: whether it is the overlay mounted at dir, and its
 * layers (1), 0 when not, -errno. */
static int parse_line(char *line, const char *dir, struct overlay_layers *o)
{
    char *f[6], *save = NULL, *sep = strstr(line, " - ");
    if (!sep)
        return 0;
    *sep = '\0';
    char *p = line;
    for (int i = 0; i < 5; i++)
        if (!(f[i] = strtok_r(p, " ", &save)))
            return 0;
        else
            p = NULL;
    unescape(f[4]);
    if (strcmp(f[4], dir))
        return 0;
    char *type = strtok_r(sep + 3, " ", &save);
    strtok_r(NULL, " ", &save); /* the source */
    char *opts = strtok_r(NULL, " \n", &save);
    if (!type || strcmp(type, "overlay") || !opts)
        return -ENOENT; /* mounted there, but no overlay: the last such line decides */
    int found = 0;
    char *osave = NULL;
    for (char *opt = strtok_r(opts, ",", &osave); opt; opt = strtok_r(NULL, ",", &osave)) {
        unescape(opt);
        if (!strncmp(opt, "lowerdir=", 9)) {
            int r = split_lowers(opt + 9, o);
            if (r <= 0)
                return r ? r : -ENOENT;
            found = 1;
        } else if (!strncmp(opt, "upperdir=", 9)) {
            if (opt[9] != '/')
                return -ENOENT;
            free(o->upper);
            if (!(o->upper = strdup(opt + 9)))
                return -ENOMEM;
        }
    }
    return found ? 1 : -ENOENT;
}

int overlay_layers_parse(const char *mountinfo, const char *dir, struct overlay_layers *o)
{
    memset(o, 0, sizeof(*o));
    char *copy = strdup(mountinfo), *save = NULL;
    if (!copy)
        return -ENOMEM;
    int result = 0;
    /* The last mount at dir is the one a path lookup sees. */
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        struct overlay_layers one = {0};
        int r = parse_line(line, dir, &one);
        if (r == 0) {
            overlay_layers_free(&one);
            continue;
        }
        overlay_layers_free(o);
        if (r == -ENOMEM) {
            overlay_layers_free(&one);
            free(copy);
            return r;
        }
        if (r == 1)
            *o = one;
        else
            overlay_layers_free(&one);
        result = r == 1;
    }
    free(copy);
    return result;
}

int overlay_layers_of(const char *dir, struct overlay_layers *o)
{
    memset(o, 0, sizeof(*o));
    int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    ssize_t n;
    while (buf && (n = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        if (len + 1 == cap && cap < MOUNTINFO_MAX) {
            char *b = realloc(buf, cap * 2);
            if (!b)
                break;
            buf = b;
            cap *= 2;
        } else if (len + 1 == cap) {
            break;
        }
    }
    close(fd);
    if (!buf)
        return -ENOMEM;
    buf[len] = '\0';
    int r = overlay_layers_parse(buf, dir, o);
    free(buf);
    return r;
}

/* The key of an overlay root: each lower layer's walk key in order, then
 * the upper folder by content. */
static int overlay_key(void *opaque, const char *real, const struct layer_limits *lim,
                       struct dir_walk *w, char *err, size_t cap)
{
    (void)real;
    const struct overlay_layers *o = opaque;
    err[0] = '\0';
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int rc = -1;
    memset(w, 0, sizeof(*w));
    if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) ||
        !EVP_DigestUpdate(ctx, ROOT_DISK_FORMAT, sizeof(ROOT_DISK_FORMAT)))
        goto out;
    for (unsigned i = 0; i <= o->nlower; i++) {
        const char *dir = i < o->nlower ? o->lower[i] : o->upper;
        char real[PATH_MAX];
        if (!dir)
            continue;
        /* Podman's lowerdir names layers by links (l/<short id>): the
         * layer is what they point at */
        if (i < o->nlower && realpath(dir, real))
            dir = real;
        struct dir_walk one;
        char why[400];
        if (dir_disk_walk_as(dir, ROOT_DISK_FORMAT, i == o->nlower, lim, &one, why,
                             sizeof(why))) {
            snprintf(err, cap, "the overlay's layer %.300s: %s", dir, why);
            goto out;
        }
        w->entries += one.entries;
        w->bytes += one.bytes;
        if (one.depth > w->depth)
            w->depth = one.depth;
        if (!EVP_DigestUpdate(ctx, i == o->nlower ? "upper" : "lower", 6) ||
            !EVP_DigestUpdate(ctx, one.key, sizeof(one.key)))
            goto out;
    }
    unsigned char md[32];
    unsigned mdlen = 0;
    if (!EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != sizeof(md))
        goto out;
    for (unsigned i = 0; i < mdlen; i++)
        snprintf(w->key + 2 * i, 3, "%02x", md[i]);
    rc = 0;
out:
    if (rc && !err[0])
        snprintf(err, cap, "sha256 failed");
    EVP_MD_CTX_free(ctx);
    return rc;
}

int root_disk_get(const char *rootfs, struct dir_disk *out, char *err, size_t cap)
{
    char real[PATH_MAX], why[600];
    err[0] = '\0';
    if (!realpath(rootfs, real)) {
        snprintf(err, cap, "root.path %.300s: %s", rootfs, strerror(errno));
        return -1;
    }
    struct image_store st;
    if (image_store_open(&st, why, sizeof(why))) {
        snprintf(err, cap, "the image store: %s", why);
        return -1;
    }
    struct overlay_layers o;
    int r = overlay_layers_of(real, &o);
    struct dir_disk_how how = {.format = ROOT_DISK_FORMAT, .keep_owners = true,
                               .headroom_mib = ROOT_DISK_HEADROOM_MIB};
    if (r == 1) {
        how.key = overlay_key;
        how.opaque = &o;
    }
    struct layer_limits lim;
    dir_disk_limits(&lim);
    int rc = dir_disk_get_how(&st, real, &lim, &how, out, why, sizeof(why));
    if (rc && !err[0])
        snprintf(err, cap, "root.path %.300s: %s", rootfs, why);
    overlay_layers_free(&o);
    return rc;
}
