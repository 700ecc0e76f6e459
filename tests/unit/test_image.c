/* image/: layer_apply.c: layers built here with libarchive's writer, applied
 * onto a fresh staging folder: the OCI whiteout rules (a file, a folder,
 * an opaque folder, a layer's own entries spared), hardlinks, symlinks
 * stored and never followed, and hostile layers (a symlink then a write
 * through it, "..", absolute names, a hardlink out of the tree, depth,
 * size and entry bombs, garbage) each refused with nothing outside the
 * staging folder touched. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/image/layer_apply.h"
#include "tests/unit/helpers.h"

static char stage[64], outside[64];
static int root = -1;

static void setup(void)
{
    snprintf(stage, sizeof(stage), "/tmp/airlock-layer-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(stage));
    snprintf(outside, sizeof(outside), "/tmp/airlock-outside-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(outside));
    root = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(root, 0);
}

static void teardown(void)
{
    close(root);
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf %s %s", stage, outside);
    ck_assert_int_eq(system(cmd), 0);
}

/* A layer: entries "TYPE NAME [ARG]" (f: file with content ARG, d: folder,
 * l: symlink to ARG, h: hardlink to ARG, c: a char device), into a memfd. */
static int layer(const char *const *spec, int gzip)
{
    int fd = memfd_create("layer", MFD_CLOEXEC);
    struct archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    if (gzip)
        archive_write_add_filter_gzip(a);
    archive_write_open_fd(a, fd);
    for (; *spec; spec++) {
        char type = (*spec)[0], name[512], arg[512] = "";
        sscanf(*spec + 2, "%511s %511[^\n]", name, arg);
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, name);
        archive_entry_set_uid(e, 1000);
        archive_entry_set_gid(e, 1000);
        archive_entry_set_perm(e, type == 'd' ? 0755 : 0644);
        if (type == 'f') {
            archive_entry_set_filetype(e, AE_IFREG);
            archive_entry_set_size(e, (la_int64_t)strlen(arg));
        } else if (type == 'd') {
            archive_entry_set_filetype(e, AE_IFDIR);
        } else if (type == 'l') {
            archive_entry_set_filetype(e, AE_IFLNK);
            archive_entry_set_symlink(e, arg);
        } else if (type == 'h') {
            archive_entry_set_filetype(e, AE_IFREG);
            archive_entry_set_hardlink(e, arg);
        } else {
            archive_entry_set_filetype(e, AE_IFCHR);
            archive_entry_set_rdev(e, 0x0501);
        }
        ck_assert_int_eq(archive_write_header(a, e), ARCHIVE_OK);
        if (type == 'f')
            archive_write_data(a, arg, strlen(arg));
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    lseek(fd, 0, SEEK_SET);
    return fd;
}

static struct layer_limits lim = {.max_bytes = 1 << 20, .max_entries = 1000, .max_depth = 16};
static struct layer_totals tot;
static struct layer_result res;

static int apply(const char *const *spec)
{
    int fd = layer(spec, 0);
    int rc = layer_apply(fd, root, &lim, &tot, NULL, NULL, &res);
    close(fd);
    return rc;
}

static const char *content(const char *rel)
{
    static char buf[256];
    char path[200];
    snprintf(path, sizeof(path), "%s/%s", stage, rel);
    int fd = open(path, O_RDONLY | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n < 0 ? 0 : n] = '\0';
    return buf;
}

static int exists(const char *rel)
{
    char path[200];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", stage, rel);
    return lstat(path, &st) == 0;
}

START_TEST(whiteouts)
{
    setup();
    memset(&tot, 0, sizeof(tot));
    ck_assert_int_eq(apply((const char *const[]){"d etc", "f etc/a one", "f etc/b two", "d opt",
                                                 "f opt/x 1", "d opt/sub", "f opt/sub/y 2", "f top t",
                                                 NULL}), 0);
    ck_assert_str_eq(content("etc/a"), "one");
    /* layer 2: a whiteout of a file and of a folder, an opaque folder that
     * keeps what this layer puts in it, a file replaced */
    ck_assert_int_eq(apply((const char *const[]){"f etc/.wh.a -", "f .wh.top -", "f opt/new n",
                                                 "f opt/.wh..wh..opq -", "f etc/b TWO", NULL}), 0);
    ck_assert(!exists("etc/a"));
    ck_assert(!exists("top"));
    ck_assert_str_eq(content("etc/b"), "TWO");
    ck_assert(!exists("opt/x"));
    ck_assert(!exists("opt/sub"));
    ck_assert_str_eq(content("opt/new"), "n");
    ck_assert(!exists("opt/.wh..wh..opq") && !exists("etc/.wh.a"));
    /* a whiteout spares what its own layer wrote */
    ck_assert_int_eq(apply((const char *const[]){"f keep k", "f .wh.keep -", NULL}), 0);
    ck_assert_str_eq(content("keep"), "k");
    teardown();
}
END_TEST

START_TEST(links)
{
    setup();
    memset(&tot, 0, sizeof(tot));
    ck_assert_int_eq(apply((const char *const[]){"f bin/real data", "h bin/hard bin/real",
                                                 "l bin/soft /etc/passwd", "c dev/null", NULL}), 0);
    ck_assert_str_eq(content("bin/hard"), "data");
    char buf[64] = "", path[200];
    snprintf(path, sizeof(path), "%s/bin/soft", stage);
    ck_assert_int_gt(readlink(path, buf, sizeof(buf) - 1), 0);
    ck_assert_str_eq(buf, "/etc/passwd"); /* stored as written */
    ck_assert_uint_eq(tot.skipped_devices, 1);
    ck_assert(!exists("dev/null"));
    teardown();
}
END_TEST

START_TEST(hostile)
{
    setup();
    char through[200];
    snprintf(through, sizeof(through), "l a %s", outside);
    static const struct {
        const char *spec[4];
        const char *why;
    } cases[] = {
        {{"f ../escape x", NULL}, "'..'"},
        {{"f /abs x", NULL}, "absolute"},
        {{"f a/../../x y", NULL}, "'..'"},
        {{"l a /tmp", "f a/passwd x", NULL}, "symlink"},
        {{"h x /etc/passwd", NULL}, "absolute"},
        {{"h x ../../etc/passwd", NULL}, "'..'"},
        {{"h x missing", NULL}, "not a regular file"},
        {{"d dir", "h x dir", NULL}, "not a regular file"},
        {{"f a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r x", NULL}, "deeper"},
        {{"f a\001b x", NULL}, "control character"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(&tot, 0, sizeof(tot));
        ck_assert_msg(apply(cases[i].spec) == -1, "case %zu accepted", i);
        ck_assert_msg(strstr(res.why, cases[i].why), "case %zu: '%s' lacks '%s'", i, res.why,
                      cases[i].why);
        teardown();
        setup();
    }
    /* a symlink out of the tree, then a write through it */
    memset(&tot, 0, sizeof(tot));
    ck_assert_int_eq(apply((const char *const[]){through, "f a/planted x", NULL}), -1);
    char planted[200];
    snprintf(planted, sizeof(planted), "%s/planted", outside);
    ck_assert_int_ne(access(planted, F_OK), 0);
    teardown();
}
END_TEST

START_TEST(limits)
{
    setup();
    struct layer_limits small = {.max_bytes = 10, .max_entries = 3, .max_depth = 16};
    memset(&tot, 0, sizeof(tot));
    int fd = layer((const char *const[]){"f a 0123456789abc", NULL}, 1);
    ck_assert_int_eq(layer_apply(fd, root, &small, &tot, NULL, NULL, &res), -1);
    ck_assert_ptr_nonnull(strstr(res.why, "--max-size"));
    close(fd);
    memset(&tot, 0, sizeof(tot));
    fd = layer((const char *const[]){"f a 1", "f b 2", "f c 3", "f d 4", NULL}, 0);
    ck_assert_int_eq(layer_apply(fd, root, &small, &tot, NULL, NULL, &res), -1);
    ck_assert_ptr_nonnull(strstr(res.why, "more than 3 entries"));
    close(fd);
    /* not an archive */
    fd = memfd_create("junk", MFD_CLOEXEC);
    ck_assert_int_eq(write(fd, "{\"not\": \"a tar\"}\n", 17), 17);
    lseek(fd, 0, SEEK_SET);
    memset(&tot, 0, sizeof(tot));
    ck_assert_int_eq(layer_apply(fd, root, &lim, &tot, NULL, NULL, &res), -1);
    close(fd);
    teardown();
}
END_TEST

static int owners_seen;
static int count_owner(void *opaque, const struct layer_owner *o)
{
    (void)opaque;
    ck_assert_uint_eq(o->uid, 1000);
    ck_assert(o->path[0] && o->path[0] != '/');
    owners_seen++;
    return 0;
}

START_TEST(owners)
{
    setup();
    memset(&tot, 0, sizeof(tot));
    owners_seen = 0;
    int fd = layer((const char *const[]){"d etc", "f etc/a one", "l etc/l a", NULL}, 1);
    ck_assert_int_eq(layer_apply(fd, root, &lim, &tot, count_owner, NULL, &res), 0);
    ck_assert_int_eq(owners_seen, 3);
    close(fd);
    teardown();
}
END_TEST

Suite *layer_apply_suite(void)
{
    Suite *s = suite_create("layer_apply");
    TCase *t = tcase_create("layer_apply");
    tcase_add_test(t, whiteouts);
    tcase_add_test(t, links);
    tcase_add_test(t, hostile);
    tcase_add_test(t, limits);
    tcase_add_test(t, owners);
    suite_add_tcase(s, t);
    return s;
}

/* ---- vmm/image/rootfs_disk.c: the staged tree into an ext4 file, owners and
 * modes as the layer said (the test runs as whoever it runs as) ---- */

#include "vmm/image/rootfs_disk.h"

/* debugfs's answer to one request on the disk, whole. */
static void debugfs_says(const char *disk, const char *req, char *out, size_t cap)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "debugfs -R '%s' %s 2>/dev/null", req, disk);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, cap - 1, p) : 0;
    out[n] = '\0';
    if (p)
        pclose(p);
}

START_TEST(disk_owners)
{
    setup();
    memset(&tot, 0, sizeof(tot));
    struct rootfs_owners owners = {0};
    int fd = layer((const char *const[]){"d usr", "d usr/bin", "f usr/bin/tool hello",
                                         "l usr/bin/ln tool", "f \"quoted\" name",
                                         "f opt/implicit/x data", NULL}, 0);
    ck_assert_int_eq(layer_apply(fd, root, &lim, &tot, rootfs_owners_add, &owners, &res), 0);
    close(fd);
    ck_assert_uint_eq(owners.n, 6);
    /* The staged tree as an unprivileged import leaves it: the importer's
     * own ids on everything (as root here, made so). */
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "chown -R -h 4321:4321 %s", stage);
    if (getuid() == 0)
        ck_assert_int_eq(system(cmd), 0);
    owners.v[2].mode = S_IFREG | 04755; /* setuid, as an image may ask */
    char disk[128], err[512], out[4096];
    snprintf(disk, sizeof(disk), "%s.ext4", stage);
    ck_assert_msg(rootfs_disk_make(stage, &owners, disk, 8, err, sizeof(err)) == 0, "%s", err);
    debugfs_says(disk, "stat /usr/bin/tool", out, sizeof(out));
    ck_assert_msg(strstr(out, "User:  1000") && strstr(out, "Group:  1000"), "%s", out);
    ck_assert_msg(strstr(out, "Mode:  04755"), "%s", out);
    debugfs_says(disk, "cat /usr/bin/tool", out, sizeof(out));
    ck_assert_str_eq(out, "hello");
    debugfs_says(disk, "stat \"/\"\"quoted\"\"\"", out, sizeof(out)); /* its quoting: "" */
    ck_assert_msg(strstr(out, "User:  1000"), "%s", out);
    debugfs_says(disk, "stat /", out, sizeof(out));
    ck_assert_msg(strstr(out, "User:     0"), "the root belongs to root: %s", out);
    debugfs_says(disk, "stat /opt/implicit", out, sizeof(out));
    ck_assert_msg(strstr(out, "User:     0   Group:     0"), "a folder no layer named is root's: %s",
                  out);
    unlink(disk);
    rootfs_owners_free(&owners);
    teardown();
}
END_TEST

/* Makes `n` empty files named PREFIX0.. in the folder `dir` of the stage. */
static void files_in(const char *dir, const char *prefix, unsigned n)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", stage, dir);
    mkdir(p, 0755);
    for (unsigned i = 0; i < n; i++) {
        snprintf(p, sizeof(p), "%s/%s/%s%u", stage, dir, prefix, i);
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        close(fd);
    }
}

START_TEST(folder_bound)
{
    setup();
    uint64_t bytes, entries;
    char err[512];
    /* a/ holds x0, s/ (itself 3 entries, walked between a's own) and y0 */
    files_in("a", "x", 1);
    files_in("a/s", "f", 3);
    files_in("a", "y", 1);
    ck_assert_msg(rootfs_tree_size(stage, 3, &bytes, &entries, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(entries, 1 + 1 + 3 + 3); /* the top, a, a's 3, s's 3 */
    files_in("a/s", "g", 1);
    ck_assert_int_eq(rootfs_tree_size(stage, 3, &bytes, &entries, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "/a/s: more than 3 entries in one folder (mke2fs -d's time grows "
                          "with the square of a folder's entries)");
    ck_assert_int_eq(rootfs_tree_size(stage, 4, &bytes, &entries, err, sizeof(err)), 0);
    files_in(".", "top", 4); /* the top's: a and top0..3 */
    ck_assert_int_eq(rootfs_tree_size(stage, 4, &bytes, &entries, err, sizeof(err)), -1);
    ck_assert_msg(!strncmp(err, "/: more than 4 entries", 22), "%s", err);
    teardown();
}
END_TEST

/* The disk's own bound: refused before mke2fs runs, no disk left. */
START_TEST(disk_wide_folder)
{
    setup();
    files_in("wide", "f", ROOTFS_MAX_FOLDER_ENTRIES + 1);
    struct rootfs_owners none = {0};
    char disk[128], err[512];
    snprintf(disk, sizeof(disk), "%s.ext4", stage);
    ck_assert_int_eq(rootfs_disk_make(stage, &none, disk, 8, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "/wide: more than 10000 entries in one folder"), "%s", err);
    ck_assert_int_eq(access(disk, F_OK), -1);
    teardown();
}
END_TEST

Suite *rootfs_disk_suite(void)
{
    Suite *s = suite_create("rootfs_disk");
    TCase *t = tcase_create("rootfs_disk");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, disk_owners);
    tcase_add_test(t, folder_bound);
    tcase_add_test(t, disk_wide_folder);
    suite_add_tcase(s, t);
    return s;
}

/* ---- vmm/image/image_source.c: an OCI layout, a docker-save archive and a
 * plain rootfs tarball made here, then tampered with ---- */

#include <openssl/evp.h>

#include "vmm/image/image_source.h"

/* The sha256 of a file as "sha256:<hex>". */
static void sha_of(const char *path, char out[80])
{
    FILE *f = fopen(path, "rb");
    unsigned char buf[4096], md[32];
    unsigned n = 0;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    size_t r;
    while (f && (r = fread(buf, 1, sizeof(buf), f)) > 0)
        EVP_DigestUpdate(c, buf, r);
    EVP_DigestFinal_ex(c, md, &n);
    EVP_MD_CTX_free(c);
    if (f)
        fclose(f);
    strcpy(out, "sha256:");
    for (unsigned i = 0; i < n; i++)
        sprintf(out + 7 + 2 * i, "%02x", md[i]);
}

static void put(const char *dir, const char *rel, const char *text)
{
    char p[400];
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* A layer made by layer() into the file `path` (the fd is closed). */
static void save_layer(int fd, const char *path)
{
    int w = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        ck_assert_int_eq(write(w, buf, (size_t)n), n);
    close(fd);
    close(w);
}

/* A layer as a blob file named by its digest; the digest in out. */
static void blob_layer(const char *dir, const char *const *spec, int gzip, char out[80])
{
    char tmp[400], dst[400];
    snprintf(tmp, sizeof(tmp), "%s/blobs/sha256/tmp", dir);
    save_layer(layer(spec, gzip), tmp);
    sha_of(tmp, out);
    snprintf(dst, sizeof(dst), "%s/blobs/sha256/%s", dir, out + 7);
    ck_assert_int_eq(rename(tmp, dst), 0);
}

static void blob_json(const char *dir, const char *text, char out[80])
{
    put(dir, "blobs/sha256/tmp", text);
    char tmp[400], dst[400];
    snprintf(tmp, sizeof(tmp), "%s/blobs/sha256/tmp", dir);
    sha_of(tmp, out);
    snprintf(dst, sizeof(dst), "%s/blobs/sha256/%s", dir, out + 7);
    ck_assert_int_eq(rename(tmp, dst), 0);
}

/* An OCI layout in `dir`: two layers (a whiteout in the second), a config. */
static void oci_layout(const char *dir, char l1[80], char l2[80])
{
    char p[400], cfg[80], man[80], text[2048];
    snprintf(p, sizeof(p), "mkdir -p %s/blobs/sha256", dir);
    ck_assert_int_eq(system(p), 0);
    blob_layer(dir, (const char *const[]){"d etc", "f etc/os-release airlock-test", "f etc/gone x", NULL}, 0, l1);
    blob_layer(dir, (const char *const[]){"f etc/.wh.gone -", "f app hi", NULL}, 1, l2);
    blob_json(dir, "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Env\":[\"A=1\"],"
                   "\"WorkingDir\":\"/srv\",\"Cmd\":[\"/app\"]},\"rootfs\":{\"type\":\"layers\","
                   "\"diff_ids\":[]}}", cfg);
    snprintf(text, sizeof(text),
             "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
             "\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"digest\":\"%s\",\"size\":1},"
             "\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\",\"digest\":\"%s\",\"size\":1},"
             "{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"%s\",\"size\":1}]}",
             cfg, l1, l2);
    blob_json(dir, text, man);
    snprintf(text, sizeof(text),
             "{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
             "\"digest\":\"%s\",\"size\":1,\"platform\":{\"os\":\"linux\",\"architecture\":\"amd64\"}}]}", man);
    put(dir, "index.json", text);
    put(dir, "oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}");
}

START_TEST(oci_source)
{
    setup();
    char layout[200], err[512], l1[80], l2[80];
    snprintf(layout, sizeof(layout), "%s/layout", outside);
    oci_layout(layout, l1, l2);
    struct image_source src;
    ck_assert_msg(image_source_open(layout, outside, &lim, &src, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(src.format, IMAGE_OCI);
    ck_assert_uint_eq(src.nlayers, 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(src.config, "config"),
                                                       "WorkingDir")), "/srv");
    memset(&tot, 0, sizeof(tot));
    for (unsigned i = 0; i < src.nlayers; i++) {
        int fd = image_source_layer(&src, i, err, sizeof(err));
        ck_assert_msg(fd >= 0, "%s", err);
        ck_assert_int_eq(layer_apply(fd, root, &lim, &tot, NULL, NULL, &res), 0);
        close(fd);
    }
    ck_assert_str_eq(content("etc/os-release"), "airlock-test");
    ck_assert(!exists("etc/gone"));
    ck_assert_str_eq(content("app"), "hi");
    image_source_close(&src);
    /* a layer changed after the manifest named it */
    char p[400];
    snprintf(p, sizeof(p), "%s/blobs/sha256/%s", layout, l1 + 7);
    put(layout, p + strlen(layout) + 1, "tampered");
    ck_assert_int_eq(image_source_open(layout, outside, &lim, &src, err, sizeof(err)), 0);
    ck_assert_int_lt(image_source_layer(&src, 0, err, sizeof(err)), 0);
    ck_assert_msg(strstr(err, "sha256"), "%s", err);
    image_source_close(&src);
    /* a digest that is a path */
    put(layout, "index.json", "{\"manifests\":[{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
                              "\"digest\":\"sha256:../../../etc/passwd\"}]}");
    ck_assert_int_eq(image_source_open(layout, outside, &lim, &src, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "sha256 digest"), "%s", err);
    put(layout, "index.json", "{\"manifests\": [");
    ck_assert_int_eq(image_source_open(layout, outside, &lim, &src, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "index.json: not JSON"), "%s", err);
    teardown();
}
END_TEST

START_TEST(archives)
{
    setup();
    char dir[200], tarp[300], err[512], cmd[700], l1[80], l2[80];
    snprintf(dir, sizeof(dir), "%s/layout", outside);
    oci_layout(dir, l1, l2);
    /* the layout as a tar */
    snprintf(tarp, sizeof(tarp), "%s/image.tar", outside);
    snprintf(cmd, sizeof(cmd), "tar -C %s -cf %s .", dir, tarp);
    ck_assert_int_eq(system(cmd), 0);
    struct image_source src;
    ck_assert_msg(image_source_open(tarp, outside, &lim, &src, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(src.nlayers, 2);
    char unpacked[PATH_MAX];
    snprintf(unpacked, sizeof(unpacked), "%s", src.unpacked);
    ck_assert(unpacked[0] && access(unpacked, F_OK) == 0);
    image_source_close(&src);
    ck_assert_int_ne(access(unpacked, F_OK), 0); /* gone afterwards */
    /* docker save: manifest.json, the config, layer files named by path */
    char d2[200], lt[300], diff[80], cfgtext[512];
    snprintf(d2, sizeof(d2), "%s/docker", outside);
    snprintf(cmd, sizeof(cmd), "mkdir -p %s/abc", d2);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(lt, sizeof(lt), "%s/abc/layer.tar", d2);
    save_layer(layer((const char *const[]){"f hello docker", NULL}, 0), lt);
    int fd;
    sha_of(lt, diff);
    snprintf(cfgtext, sizeof(cfgtext), "{\"config\":{\"Cmd\":[\"/hello\"]},\"rootfs\":{\"diff_ids\":[\"%s\"]}}", diff);
    put(d2, "config.json", cfgtext);
    put(d2, "manifest.json", "[{\"Config\":\"config.json\",\"RepoTags\":[\"t:1\"],\"Layers\":[\"abc/layer.tar\"]}]");
    snprintf(tarp, sizeof(tarp), "%s/docker.tar", outside);
    snprintf(cmd, sizeof(cmd), "tar -C %s -cf %s .", d2, tarp);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_msg(image_source_open(tarp, outside, &lim, &src, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(src.format, IMAGE_DOCKER);
    fd = image_source_layer(&src, 0, err, sizeof(err));
    ck_assert_msg(fd >= 0, "%s", err);
    memset(&tot, 0, sizeof(tot));
    ck_assert_int_eq(layer_apply(fd, root, &lim, &tot, NULL, NULL, &res), 0);
    close(fd);
    ck_assert_str_eq(content("hello"), "docker");
    image_source_close(&src);
    /* a plain rootfs tarball is its own one layer */
    ck_assert_int_eq(image_source_open(lt, outside, &lim, &src, err, sizeof(err)), 0);
    ck_assert_int_eq(src.format, IMAGE_ROOTFS_TAR);
    ck_assert_str_eq(src.id, diff);
    image_source_close(&src);
    /* not an archive at all */
    ck_assert_int_eq(image_source_open(d2, outside, &lim, &src, err, sizeof(err)), 0);
    image_source_close(&src);
    put(outside, "junk", "\x01\x02 not a tar");
    snprintf(tarp, sizeof(tarp), "%s/junk", outside);
    ck_assert_int_eq(image_source_open(tarp, outside, &lim, &src, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "not a tar archive"), "%s", err);
    teardown();
}
END_TEST

Suite *image_source_suite(void)
{
    Suite *s = suite_create("image_source");
    TCase *t = tcase_create("image_source");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, oci_source);
    tcase_add_test(t, archives);
    suite_add_tcase(s, t);
    return s;
}
