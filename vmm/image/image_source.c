/* Reading an image to import; see image_source.h. */
#include "vmm/image/image_source.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "vmm/util/open_resolve.h"
#include "vmm/util/rmtree.h"
#include "vmm/util/tar_pack.h"

static int bad(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t cap, const char *fmt, ...)
{
    va_list va;
    va_start(va, fmt);
    vsnprintf(err, cap, fmt, va);
    va_end(va);
    return -1;
}

/* A file beneath dir (in-tree symlinks allowed, never out of it). */
static int open_in(int dir, const char *rel)
{
    return open_resolve(dir, rel, O_RDONLY, RESOLVE_BENEATH);
}

/* "sha256:<64 lower-case hex>" into "blobs/sha256/<hex>". */
static bool blob_path(const char *digest, char *out, size_t cap)
{
    if (strncmp(digest, "sha256:", 7) || strlen(digest) != 7 + 64)
        return false;
    for (const char *c = digest + 7; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
            return false;
    snprintf(out, cap, "blobs/sha256/%s", digest + 7);
    return true;
}

/* The sha256 of what fd holds from its start, as "sha256:<hex>". */
static int sha256_fd(int fd, char out[IMAGE_DIGEST_MAX])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char buf[65536], md[32];
    unsigned mdlen = 0;
    int rc = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) ? 0 : -ENOMEM;
    off_t off = 0;
    while (!rc) {
        ssize_t n = pread(fd, buf, sizeof(buf), off);
        if (n < 0)
            rc = -errno;
        if (n <= 0)
            break;
        off += n;
        if (!EVP_DigestUpdate(ctx, buf, (size_t)n))
            rc = -EIO;
    }
    if (!rc && !EVP_DigestFinal_ex(ctx, md, &mdlen))
        rc = -EIO;
    EVP_MD_CTX_free(ctx);
    if (!rc) {
        strcpy(out, "sha256:");
        for (unsigned i = 0; i < mdlen; i++)
            sprintf(out + 7 + 2 * i, "%02x", md[i]);
    }
    return rc;
}

/* A JSON document beneath dir, at most IMAGE_JSON_MAX bytes; its digest
 * checked when `digest` is given. */
static json_t *load_json(int dir, const char *rel, const char *digest, char *err, size_t cap)
{
    int fd = open_in(dir, rel);
    struct stat st;
    char got[IMAGE_DIGEST_MAX];
    if (fd < 0)
        return bad(err, cap, "%s: %s", rel, strerror(-fd)), NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > IMAGE_JSON_MAX) {
        close(fd);
        return bad(err, cap, "%s: not a file of at most 4 MiB", rel), NULL;
    }
    if (digest && (sha256_fd(fd, got) || strcmp(got, digest))) {
        close(fd);
        return bad(err, cap, "%s: its sha256 is not the %.80s that names it", rel, digest), NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    ssize_t n = buf ? pread(fd, buf, (size_t)st.st_size, 0) : -1;
    close(fd);
    json_error_t je;
    json_t *j = n == st.st_size ? json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &je) : NULL;
    free(buf);
    if (!j)
        return bad(err, cap, "%s: not JSON (%s, line %d)", rel, n == st.st_size ? je.text : "unreadable",
                   n == st.st_size ? je.line : 0), NULL;
    return j;
}

/* ---- the formats ---- */

static const char *const layer_types[] = {
    "application/vnd.oci.image.layer.v1.tar", "application/vnd.oci.image.layer.v1.tar+gzip",
    "application/vnd.oci.image.layer.v1.tar+zstd",
    "application/vnd.docker.image.rootfs.diff.tar.gzip", NULL,
};

static bool known_layer(const char *t)
{
    for (const char *const *k = layer_types; *k; k++)
        if (!strcmp(t, *k))
            return true;
    return false;
}

/* The descriptor of the image in an OCI index: a manifest, or an index
 * whose linux/amd64 entry is one (followed once). */
static json_t *pick_manifest(json_t *index)
{
    json_t *m = json_object_get(index, "manifests"), *e;
    size_t i;
    if (!json_is_array(m))
        return NULL;
    json_array_foreach(m, i, e) {
        json_t *p = json_object_get(e, "platform");
        const char *os = json_string_value(json_object_get(p, "os"));
        const char *arch = json_string_value(json_object_get(p, "architecture"));
        if (!p || (os && arch && !strcmp(os, "linux") && !strcmp(arch, "amd64")))
            return e;
    }
    return NULL;
}

static int open_oci(struct image_source *src, char *err, size_t cap)
{
    json_t *index = load_json(src->dir_fd, "index.json", NULL, err, cap), *man = NULL, *nested = NULL;
    if (!index)
        return -1;
    int rc = -1;
    char path[PATH_MAX];
    json_t *d = pick_manifest(index);
    const char *digest = json_string_value(json_object_get(d, "digest"));
    const char *type = json_string_value(json_object_get(d, "mediaType"));
    if (d && type && strstr(type, "image.index")) { /* an index of platforms: once more */
        if (!digest || !blob_path(digest, path, sizeof(path)) ||
            !(nested = load_json(src->dir_fd, path, digest, err, cap)))
            goto out;
        d = pick_manifest(nested);
        digest = json_string_value(json_object_get(d, "digest"));
    }
    if (!d || !digest || !blob_path(digest, path, sizeof(path))) {
        bad(err, cap, "index.json: no linux/amd64 image manifest with a sha256 digest");
        goto out;
    }
    if (!(man = load_json(src->dir_fd, path, digest, err, cap)))
        goto out;
    snprintf(src->id, sizeof(src->id), "%s", digest);
    const char *cd = json_string_value(json_object_get(json_object_get(man, "config"), "digest"));
    if (!cd || !blob_path(cd, path, sizeof(path))) {
        bad(err, cap, "the manifest's config: no sha256 digest");
        goto out;
    }
    if (!(src->config = load_json(src->dir_fd, path, cd, err, cap)))
        goto out;
    json_t *layers = json_object_get(man, "layers"), *l;
    size_t i;
    if (!json_is_array(layers) || json_array_size(layers) > IMAGE_MAX_LAYERS) {
        bad(err, cap, "the manifest's layers: want an array of at most %d", IMAGE_MAX_LAYERS);
        goto out;
    }
    json_array_foreach(layers, i, l) {
        const char *ld = json_string_value(json_object_get(l, "digest"));
        const char *lt = json_string_value(json_object_get(l, "mediaType"));
        if (!ld || !blob_path(ld, src->layers[i].path, sizeof(src->layers[i].path))) {
            bad(err, cap, "layer %zu: no sha256 digest", i);
            goto out;
        }
        if (!lt || !known_layer(lt)) {
            bad(err, cap, "layer %zu: media type '%.100s' is not a tar layer airlock reads", i,
                lt ? lt : "(none)");
            goto out;
        }
        snprintf(src->layers[i].digest, sizeof(src->layers[i].digest), "%s", ld);
        src->nlayers++;
    }
    rc = 0;
out:
    json_decref(index);
    json_decref(nested);
    json_decref(man);
    return rc;
}

/* docker save: manifest.json's first image; each layer's file must have
 * the config's rootfs.diff_ids entry as its sha256. */
static int open_docker(struct image_source *src, char *err, size_t cap)
{
    json_t *m = load_json(src->dir_fd, "manifest.json", NULL, err, cap);
    if (!m)
        return -1;
    int rc = -1;
    json_t *img = json_array_get(m, 0);
    const char *config = json_string_value(json_object_get(img, "Config"));
    json_t *layers = json_object_get(img, "Layers"), *l;
    if (!config || !json_is_array(layers) || json_array_size(layers) > IMAGE_MAX_LAYERS) {
        bad(err, cap, "manifest.json: want [{\"Config\": ..., \"Layers\": [...]}]");
        goto out;
    }
    int cfd = open_in(src->dir_fd, config);
    if (cfd < 0 || sha256_fd(cfd, src->id)) {
        if (cfd >= 0)
            close(cfd);
        bad(err, cap, "manifest.json's Config %.200s: cannot read it", config);
        goto out;
    }
    close(cfd);
    if (!(src->config = load_json(src->dir_fd, config, NULL, err, cap)))
        goto out;
    json_t *diff = json_object_get(json_object_get(src->config, "rootfs"), "diff_ids");
    if (json_array_size(diff) != json_array_size(layers)) {
        bad(err, cap, "the config's rootfs.diff_ids do not match manifest.json's Layers");
        goto out;
    }
    size_t i;
    json_array_foreach(layers, i, l) {
        const char *lp = json_string_value(l), *ld = json_string_value(json_array_get(diff, i));
        if (!lp || !ld || strlen(lp) >= sizeof(src->layers[i].path) ||
            strlen(ld) >= sizeof(src->layers[i].digest)) {
            bad(err, cap, "layer %zu: want a path and a diff_id", i);
            goto out;
        }
        snprintf(src->layers[i].path, sizeof(src->layers[i].path), "%s", lp);
        snprintf(src->layers[i].digest, sizeof(src->layers[i].digest), "%s", ld);
        src->nlayers++;
    }
    rc = 0;
out:
    json_decref(m);
    return rc;
}

/* Whether the tar names one of the layout files at its top (a scan of the
 * headers only).  1 yes, 0 no, -1 not an archive. */
static int names_layout(const char *path)
{
    struct archive *a = archive_read_new();
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    int found = -1;
    if (archive_read_open_filename(a, path, 65536) == ARCHIVE_OK) {
        struct archive_entry *e;
        found = 0;
        while (!found && archive_read_next_header(a, &e) == ARCHIVE_OK) {
            const char *n = archive_entry_pathname(e);
            while (n && n[0] == '.' && n[1] == '/')
                n += 2;
            found = n && (!strcmp(n, "index.json") || !strcmp(n, "manifest.json") ||
                          !strcmp(n, "oci-layout"));
        }
    }
    archive_read_free(a);
    return found;
}

/* The private folder an archive went into. */
static void remove_unpacked(struct image_source *src)
{
    if (src->unpacked[0])
        rmtree(src->unpacked);
    src->unpacked[0] = '\0';
}

/* Whether the folder is an image layout (OCI's index.json, docker's
 * manifest.json) rather than a root folder. */
static bool is_layout(int dir)
{
    static const char *const marks[] = {"index.json", "manifest.json"};
    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
        int fd = open_in(dir, marks[i]);
        if (fd >= 0) {
            close(fd);
            return true;
        }
    }
    return false;
}

/* A root folder: packed into an unnamed file under tmp_dir (links as
 * links), which is then the one layer of a rootfs tarball, its sha256 the
 * id: so the layer goes through layer_apply's checks like any other, and
 * the same unchanged folder imported again is a cache hit. */
static int open_root_folder(const char *path, const char *tmp_dir, struct image_source *src,
                            char *err, size_t cap)
{
    char why[600];
    src->rootfs_fd = open(tmp_dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
    if (src->rootfs_fd < 0)
        return bad(err, cap, "%s: %s", tmp_dir, strerror(errno));
    if (tar_pack(path, NULL, true, src->rootfs_fd, why, sizeof(why))) {
        image_source_close(src);
        return bad(err, cap, "%s: %s", path, why);
    }
    if (sha256_fd(src->rootfs_fd, src->id)) {
        image_source_close(src);
        return bad(err, cap, "%s: %s", path, strerror(errno));
    }
    src->format = IMAGE_ROOTFS_TAR;
    snprintf(src->layers[0].digest, sizeof(src->layers[0].digest), "%s", src->id);
    src->nlayers = 1;
    return 0;
}

int image_source_open(const char *path, const char *tmp_dir, const struct layer_limits *lim,
                      struct image_source *src, char *err, size_t cap)
{
    memset(src, 0, sizeof(*src));
    src->dir_fd = src->rootfs_fd = -1;
    struct stat st;
    if (stat(path, &st) < 0)
        return bad(err, cap, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        src->dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (src->dir_fd < 0)
            return bad(err, cap, "%s: %s", path, strerror(errno));
        if (!is_layout(src->dir_fd)) { /* a root folder: as the tarball of it */
            close(src->dir_fd);
            src->dir_fd = -1;
            return open_root_folder(path, tmp_dir, src, err, cap);
        }
    } else {
        int layout = names_layout(path);
        if (layout < 0)
            return bad(err, cap, "%s: not a tar archive, an OCI layout or a docker save archive", path);
        if (!layout) { /* a plain rootfs tarball: itself the one layer */
            src->format = IMAGE_ROOTFS_TAR;
            src->rootfs_fd = open(path, O_RDONLY | O_CLOEXEC);
            if (src->rootfs_fd < 0 || sha256_fd(src->rootfs_fd, src->id))
                return bad(err, cap, "%s: %s", path, strerror(errno));
            snprintf(src->layers[0].digest, sizeof(src->layers[0].digest), "%s", src->id);
            src->nlayers = 1;
            return 0;
        }
        snprintf(src->unpacked, sizeof(src->unpacked), "%s/unpack.XXXXXX", tmp_dir);
        if (!mkdtemp(src->unpacked))
            return bad(err, cap, "%s: %s", tmp_dir, strerror(errno));
        src->dir_fd = open(src->unpacked, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct layer_totals tot = {0};
        struct layer_result res;
        int rc = src->dir_fd < 0 || fd < 0 ? -1 : layer_apply(fd, src->dir_fd, lim, &tot, NULL, NULL, &res);
        if (fd >= 0)
            close(fd);
        if (rc) {
            bad(err, cap, "%s: %s%s%s", path, res.entry, res.entry[0] ? ": " : "", res.why);
            image_source_close(src);
            return -1;
        }
    }
    int fd = open_in(src->dir_fd, "index.json");
    bool oci = fd >= 0;
    if (fd >= 0)
        close(fd);
    src->format = oci ? IMAGE_OCI : IMAGE_DOCKER;
    if ((oci ? open_oci : open_docker)(src, err, cap)) {
        image_source_close(src);
        return -1;
    }
    return 0;
}

int image_source_layer(struct image_source *src, unsigned i, char *err, size_t cap)
{
    if (i >= src->nlayers)
        return bad(err, cap, "no layer %u", i);
    int fd = src->format == IMAGE_ROOTFS_TAR ? dup(src->rootfs_fd)
                                             : open_in(src->dir_fd, src->layers[i].path);
    char got[IMAGE_DIGEST_MAX];
    if (fd < 0)
        return bad(err, cap, "layer %u (%.200s): %s", i, src->layers[i].path, strerror(errno));
    if (sha256_fd(fd, got) || strcmp(got, src->layers[i].digest)) {
        close(fd);
        return bad(err, cap, "layer %u: its sha256 is %.80s, not the %.80s the image names", i, got,
                   src->layers[i].digest);
    }
    lseek(fd, 0, SEEK_SET);
    return fd;
}

void image_source_close(struct image_source *src)
{
    if (src->dir_fd >= 0)
        close(src->dir_fd);
    if (src->rootfs_fd >= 0)
        close(src->rootfs_fd);
    src->dir_fd = src->rootfs_fd = -1;
    json_decref(src->config);
    src->config = NULL;
    remove_unpacked(src);
}
