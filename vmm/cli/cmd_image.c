/* airlock image import|ls|inspect|rm: the image store (vmm/image/). */
#include <getopt.h>
#include <locale.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cli/commands.h"
#include "vmm/image/image_import.h"
#include "vmm/image/image_stop.h"
#include "vmm/image/image_ref.h"
#include "vmm/image/image_store.h"
#include "vmm/util/exit_codes.h"
#include "vmm/util/parse.h"

#define IMAGE_USAGE                                                                           \
    "usage: airlock image import PATH [--name NAME] [--max-size MiB]\n"                       \
    "       airlock image ls\n"                                                               \
    "       airlock image inspect NAME\n"                                                     \
    "       airlock image rm NAME...\n"                                                       \
    "Imports an OCI image layout (a folder or a tar), a docker/podman save archive or a\n"     \
    "rootfs tarball or folder as a root disk in the image store ($AIRLOCK_HOME,\n"                 \
    "/var/lib/airlock as root, else ~/.local/share/airlock); the same image twice costs\n"    \
    "nothing.  --max-size bounds the image's unpacked files (default 16384 MiB).\n"

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list va;
    va_start(va, fmt);
    fputs("airlock: ", stderr);
    vfprintf(stderr, fmt, va);
    fputc('\n', stderr);
    va_end(va);
    return EXIT_AIRLOCK_ERROR;
}

static int do_import(const struct image_store *st, int argc, char **argv)
{
    static const struct option opts[] = {
        {"name", required_argument, NULL, 'n'}, {"max-size", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'}, {0},
    };
    struct image_import_req req = {.max_bytes = (uint64_t)IMAGE_DEFAULT_MAX_MIB << 20,
                                   .progress = isatty(STDERR_FILENO)};
    uint64_t v;
    int c;
    optind = 0;
    opterr = 0;
    /* Options before or after PATH, as docker's verbs take them. */
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'n': req.name = optarg; break;
        case 'm':
            if (parse_uint(optarg, 1 << 24, &v) || !v)
                return fail("--max-size '%.40s': want whole MiB, 1 to 16777216", optarg);
            req.max_bytes = v << 20;
            break;
        case 'h': fputs(IMAGE_USAGE, stdout); return 0;
        case ':': return fail("%s needs a value", argv[optind - 1]);
        default: return fail("unknown option '%s' (see airlock image --help)", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return fail("image import takes one PATH (see airlock image --help)");
    req.path = argv[optind];
    struct image_import_result res;
    char err[1024];
    /* A signal ends the import by its usual failure (its staging goes),
     * then the process as the signal would have. */
    image_stop_catch();
    if (image_import(st, &req, &res, err, sizeof(err))) {
        int rc = fail("image import %.300s: %s", req.path, err);
        image_stop_die();
        return rc;
    }
    printf("%s %s%s\n", res.name, res.id, res.cached ? " (already imported)" : "");
    if (res.skipped_devices)
        fprintf(stderr, "airlock: %s: %llu device nodes, fifos or sockets were left out\n",
                res.name, (unsigned long long)res.skipped_devices);
    return 0;
}

static void ls_line(const char *name, const json_t *rec)
{
    const char *id = json_string_value(json_object_get(rec, "id"));
    printf("%-40s %-19.19s %9lldM\n", name, id ? id : "(built in)",
           (long long)(json_integer_value(json_object_get(rec, "bytes")) >> 20));
}

static int ls_one(const char *name, json_t *rec, void *ctx)
{
    (void)ctx;
    ls_line(name, rec);
    return 0;
}

static int do_ls(const struct image_store *st)
{
    printf("%-40s %-19s %10s\n", "NAME", "ID", "SIZE");
    static const char *const builtin[] = {"python", "small"};
    for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++) {
        json_t *rec = image_builtin_record(builtin[i]);
        ls_line(builtin[i], rec);
        json_decref(rec);
    }
    int rc = image_store_each(st, ls_one, NULL);
    return rc < 0 ? fail("%s/images: %s", st->root, strerror(-rc)) : 0;
}

static int do_inspect(const struct image_store *st, const char *name)
{
    char err[512];
    json_t *rec = image_builtin_record(name);
    if (!rec && !(rec = image_store_get(st, name, err, sizeof(err))))
        return fail("%s", err);
    json_dumpf(rec, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
    putchar('\n');
    json_decref(rec);
    return 0;
}

/* The record goes; its disk too when no other record names it. */
static int do_rm(const struct image_store *st, const char *name)
{
    char err[512], rp[PATH_MAX];
    if (image_is_builtin(name))
        return fail("image %s is built in (airlock makes it; it cannot be removed)", name);
    json_t *rec = image_store_get(st, name, err, sizeof(err));
    if (!rec)
        return fail("%s", err);
    char disk[PATH_MAX];
    snprintf(disk, sizeof(disk), "%s", json_string_value(json_object_get(rec, "disk")) ?: "");
    const char *id = json_string_value(json_object_get(rec, "id"));
    char idc[96];
    snprintf(idc, sizeof(idc), "%s", id ? id : "");
    json_decref(rec);
    image_store_record_path(st, name, rp, sizeof(rp));
    if (unlink(rp) < 0)
        return fail("%s: cannot remove it", rp);
    json_t *other = image_store_find_id(st, idc);
    char mine[PATH_MAX];
    image_store_disk_path(st, idc, mine, sizeof(mine));
    if (!other && !strcmp(mine, disk)) /* only the store's own disk file */
        unlink(disk);
    json_decref(other);
    printf("%s\n", name);
    return 0;
}

int cmd_image(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(IMAGE_USAGE, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_AIRLOCK_ERROR : 0;
    }
    /* Layer names are UTF-8 (PAX headers say so); libarchive converts
     * them to the locale's charset, which under the C locale fails on
     * the first name outside ASCII. */
    setlocale(LC_CTYPE, "C.UTF-8");
    struct image_store st;
    char err[512];
    if (image_store_open(&st, err, sizeof(err)))
        return fail("%s", err);
    const char *verb = argv[1];
    if (!strcmp(verb, "import"))
        return do_import(&st, argc - 1, argv + 1);
    if (!strcmp(verb, "ls") && argc == 2)
        return do_ls(&st);
    if (!strcmp(verb, "inspect") && argc == 3)
        return do_inspect(&st, argv[2]);
    if (!strcmp(verb, "rm") && argc >= 3) {
        int rc = 0;
        for (int i = 2; i < argc; i++)
            rc = do_rm(&st, argv[i]) ? EXIT_AIRLOCK_ERROR : rc;
        return rc;
    }
    return fail("image %.40s: unknown verb or wrong arguments (see airlock image --help)", verb);
}
