/* airlock volume create|ls|rm: named volumes in a state folder's store
 * (vmm/volume/, docs/volumes.md), the one `airlock serve --state DIR` and
 * `airlock run --volume` use (by default the same folder: /var/lib/airlock
 * as root, else $XDG_STATE_HOME/airlock).  These verbs work on the folder
 * itself, beside a daemon or without one (the store's lock orders them);
 * over the API the same are POST/GET/DELETE /v1/volumes. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/commands.h"
#include "vmm/cli/sandbox_options.h"
#include "vmm/util/exit_codes.h"
#include "vmm/util/user_dirs.h"
#include "vmm/volume/volume_hold.h"

#define VOLUME_USAGE                                                                          \
    "usage: airlock volume create NAME [--size MiB] [--state DIR]\n"                          \
    "       airlock volume ls [--state DIR]\n"                                                \
    "       airlock volume rm NAME... [--state DIR]\n"                                        \
    "A named volume is an ext4 disk (a sparse file of --size MiB, default 1024, 1 to\n"      \
    "1048576) in DIR/volumes (default /var/lib/airlock as root, else\n"                       \
    "$XDG_STATE_HOME/airlock: airlock serve's --state).  airlock run --volume NAME:/data\n"   \
    "and airlock create --volume NAME:/data attach it: one writer or any number of\n"        \
    "readers (:ro) at once; what is written stays (docs/volumes.md).\n"

struct volume_args {
    const char *state, *size;
    char **names;
    int nnames;
};

/* Options anywhere among the names, as docker's verbs take them.  0; -1 when
 * --help printed the usage; 125 after a one-line error. */
static int parse(int argc, char **argv, bool sized, struct volume_args *a)
{
    static const struct option opts[] = {
        {"size", required_argument, NULL, 's'}, {"state", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'}, {0},
    };
    memset(a, 0, sizeof(*a));
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (!sized)
                return verb_fail("--size is for airlock volume create (see airlock volume --help)");
            a->size = optarg;
            break;
        case 'd': a->state = optarg; break;
        case 'h': fputs(VOLUME_USAGE, stdout); return -1;
        case ':': return verb_fail("%s needs a value (see airlock volume --help)", argv[optind - 1]);
        default: return verb_fail("unknown option '%s' (see airlock volume --help)", argv[optind - 1]);
        }
    }
    a->names = argv + optind;
    a->nnames = argc - optind;
    if (a->state && !*a->state)
        return verb_fail("--state: want a folder");
    return 0;
}

static int open_store(const struct volume_args *a, struct volume_store *vs)
{
    char state[PATH_MAX], why[600];
    if (!a->state)
        user_dir(USER_DIR_STATE, state, sizeof(state));
    if (volume_store_open(vs, a->state ? a->state : state, why, sizeof(why)))
        return verb_fail("%s", why);
    return 0;
}

static int name_ok(const char *name)
{
    if (volume_name_ok(name, strlen(name)))
        return 0;
    return verb_fail("volume name '%.80s': want a letter or digit, then up to 63 letters, digits, "
                "'_', '.' or '-'", name);
}

static int do_create(int argc, char **argv)
{
    struct volume_args a;
    struct volume_store vs;
    uint32_t mib = VOLUME_SIZE_DEFAULT_MIB;
    int rc = parse(argc, argv, true, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (a.nnames != 1)
        return verb_fail("airlock volume create takes one NAME (see airlock volume --help)");
    if ((rc = name_ok(a.names[0])))
        return rc;
    if (a.size && volume_size_parse(a.size, &mib))
        return verb_fail("--size '%.40s': want whole MiB, 1 to 1048576", a.size);
    if ((rc = open_store(&a, &vs)))
        return rc;
    static struct volume_rec rec;
    char why[600];
    rc = volume_create(&vs, a.names[0], mib, &rec, why, sizeof(why));
    if (rc)
        return verb_fail("volume %s: %s", a.names[0], why);
    printf("%s\n", rec.name);
    return 0;
}

static int do_ls(int argc, char **argv)
{
    struct volume_args a;
    struct volume_store vs;
    int rc = parse(argc, argv, false, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (a.nnames)
        return verb_fail("airlock volume ls takes no NAME (see airlock volume --help)");
    if ((rc = open_store(&a, &vs)))
        return rc;
    char **names;
    size_t n;
    if ((rc = volume_names(&vs, &names, &n)))
        return verb_fail("cannot list %s: %s", vs.dir, strerror(-rc));
    printf("%-24s %10s %10s  %s\n", "NAME", "SIZE_MIB", "USED_MIB", "HELD BY");
    static struct volume_rec rec;
    for (size_t i = 0; i < n; i++) {
        char holders[1024];
        if (!volume_get(&vs, names[i], &rec)) {
            volume_holders_text(&rec, holders, sizeof(holders));
            printf("%-24s %10" PRIu32 " %10" PRIu64 "  %s\n", rec.name, rec.size_mib,
                   (rec.used_bytes + (1 << 20) - 1) >> 20, holders[0] ? holders : "-");
        }
        free(names[i]);
    }
    free(names);
    return 0;
}

static int do_rm(int argc, char **argv)
{
    struct volume_args a;
    struct volume_store vs;
    int rc = parse(argc, argv, false, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!a.nnames)
        return verb_fail("airlock volume rm takes one NAME or more (see airlock volume --help)");
    for (int i = 0; i < a.nnames; i++)
        if ((rc = name_ok(a.names[i])))
            return rc;
    if ((rc = open_store(&a, &vs)))
        return rc;
    static struct volume_rec rec;
    int status = 0;
    for (int i = 0; i < a.nnames; i++) {
        rc = volume_remove(&vs, a.names[i], &rec);
        if (rc == -EBUSY) {
            char holders[1024];
            volume_holders_text(&rec, holders, sizeof(holders));
            status = verb_fail("volume %s is in use by %s", a.names[i], holders);
        } else if (rc == -ENOENT) {
            status = verb_fail("no volume '%s' in %s", a.names[i], vs.dir);
        } else if (rc) {
            status = verb_fail("volume %s: %s", a.names[i], strerror(-rc));
        } else {
            printf("%s\n", a.names[i]);
        }
    }
    return status;
}

int cmd_volume(int argc, char **argv)
{
    const char *verb = argc > 1 ? argv[1] : NULL;
    if (!verb)
        return fputs(VOLUME_USAGE, stderr), EXIT_AIRLOCK_ERROR;
    if (!strcmp(verb, "--help") || !strcmp(verb, "-h") || !strcmp(verb, "help"))
        return fputs(VOLUME_USAGE, stdout), 0;
    if (!strcmp(verb, "create"))
        return do_create(argc - 1, argv + 1);
    if (!strcmp(verb, "ls"))
        return do_ls(argc - 1, argv + 1);
    if (!strcmp(verb, "rm"))
        return do_rm(argc - 1, argv + 1);
    return verb_fail("unknown volume command '%.40s' (create, ls, rm)", verb);
}
