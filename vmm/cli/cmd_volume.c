/* airlock volume create|ls|rm: named volumes in a state folder's store
 * (vmm/volume/, docs/volumes.md), the one `airlock serve --state DIR` and
 * `airlock run --volume` use (by default the same folder: /var/lib/airlock
 * as root, else $XDG_STATE_HOME/airlock).  These verbs work on the folder
 * itself, beside a daemon or without one (the store's lock orders them).
 * With --socket they ask a daemon instead (POST/GET/DELETE /v1/volumes):
 * its volumes are in the folder it was started with, which the caller
 * need not know or see (a daemon in a container whose socket is shared,
 * or, over http://IP:PORT, one on another host).  Only --socket switches:
 * $AIRLOCK_SOCKET, which the sandbox verbs follow, does not, since without
 * it these verbs have always meant the folder, and `airlock run --volume`
 * on that folder must see what they made.  Either way the output is the
 * same, so a script need not know which. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/commands.h"
#include "vmm/cli/sandbox_options.h"
#include "vmm/cli/verb_api.h"
#include "vmm/sandbox/api_client.h"
#include "vmm/util/exit_codes.h"
#include "vmm/util/user_dirs.h"
#include "vmm/volume/volume_hold.h"

#define VOLUME_USAGE                                                                          \
    "usage: airlock volume create NAME [--size MiB] [--state DIR | --socket PATH]\n"         \
    "       airlock volume ls [--state DIR | --socket PATH]\n"                               \
    "       airlock volume rm NAME... [--state DIR | --socket PATH]\n"                       \
    "A named volume is an ext4 disk (a sparse file of --size MiB, default 1024, 1 to\n"      \
    "1048576) in DIR/volumes (default /var/lib/airlock as root, else\n"                       \
    "$XDG_STATE_HOME/airlock: airlock serve's --state).  airlock run --volume NAME:/data\n"   \
    "and airlock create --volume NAME:/data attach it: one writer or any number of\n"        \
    "readers (:ro) at once; what is written stays (docs/volumes.md).\n"                      \
    "--socket PATH asks the daemon on that Unix socket (a daemon on this host) for\n"       \
    "its volumes instead of opening a folder; --socket http://IP:PORT, with\n"              \
    "$AIRLOCK_TOKEN, asks a daemon's TCP listener (airlock serve --listen), which may\n"    \
    "be on another host.  $AIRLOCK_SOCKET does not switch these verbs: only --socket.\n"

struct volume_args {
    const char *state, *size, *socket;
    char **names;
    int nnames;
};

/* Options anywhere among the names, as docker's verbs take them.  0; -1 when
 * --help printed the usage; 125 after a one-line error. */
static int parse(int argc, char **argv, bool sized, struct volume_args *a)
{
    static const struct option opts[] = {
        {"size", required_argument, NULL, 's'},   {"state", required_argument, NULL, 'd'},
        {"socket", required_argument, NULL, 'S'}, {"help", no_argument, NULL, 'h'},
        {0},
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
        case 'S': a->socket = optarg; break;
        case 'h': fputs(VOLUME_USAGE, stdout); return -1;
        case ':': return verb_fail("%s needs a value (see airlock volume --help)", argv[optind - 1]);
        default: return verb_fail("unknown option '%s' (see airlock volume --help)", argv[optind - 1]);
        }
    }
    a->names = argv + optind;
    a->nnames = argc - optind;
    if (a->state && !*a->state)
        return verb_fail("--state: want a folder");
    if (a->socket && !*a->socket)
        return verb_fail("--socket: want the daemon's socket path (or http://IP:PORT)");
    /* A daemon's volumes are in the folder it was started with: a --state
     * here would be ignored or contradict it. */
    if (a->socket && a->state)
        return verb_fail("--socket and --state: the daemon's volumes are in its own --state "
                         "folder; give one or the other");
    return 0;
}

/* --socket's daemon, the path checked as the sandbox verbs check theirs:
 * 0, or 125 after a one-line error. */
static int daemon_socket(const struct volume_args *a, char *sock, size_t cap)
{
    char err[512];
    if (api_client_socket(a->socket, sock, cap, err, sizeof(err)))
        return verb_fail("%s", err);
    return 0;
}

/* The ls table, one layout for a folder's records and a daemon's. */
static void ls_head(void)
{
    printf("%-24s %10s %10s  %s\n", "NAME", "SIZE_MIB", "USED_MIB", "HELD BY");
}

static void ls_row(const struct volume_rec *rec)
{
    char holders[1024];
    volume_holders_text(rec, holders, sizeof(holders));
    printf("%-24s %10" PRIu32 " %10" PRIu64 "  %s\n", rec->name, rec->size_mib,
           (rec->used_bytes + (1 << 20) - 1) >> 20, holders[0] ? holders : "-");
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

/* One request to --socket's daemon: its JSON answer when it answered
 * `want`, else NULL with *rc the exit status after one line on stderr:
 * the daemon's error text, which names the volume (api_volumes.c says
 * "no volume 'NAME'", "the volume NAME is in use by ...", "volume NAME:
 * ..."), as the sandbox verbs show the daemon's text for an id. */
static json_t *ask(const char *sock, const char *method, const char *path, json_t *body, int want,
                   int *rc)
{
    int status;
    json_t *j = verb_call(sock, method, path, body, want, &status);
    *rc = j ? 0 : verb_refusal_status(status);
    return j;
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
    if (a.socket) {
        char sock[4096];
        if ((rc = daemon_socket(&a, sock, sizeof(sock))))
            return rc;
        json_t *body = json_pack("{sssI}", "name", a.names[0], "size_mib", (json_int_t)mib);
        json_t *j = ask(sock, "POST", "/v1/volumes", body, 201, &rc);
        if (j)
            printf("%s\n", a.names[0]); /* the record's name is the one asked for */
        json_decref(j);
        json_decref(body);
        return rc;
    }
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

/* The daemon's list, in the folder's layout: GET /v1/volumes is sorted by
 * name, as volume_names() is; a record that does not read as one is left
 * out, as the daemon leaves out a damaged record file. */
static int ls_daemon(const struct volume_args *a)
{
    char sock[4096];
    int rc = daemon_socket(a, sock, sizeof(sock));
    if (rc)
        return rc;
    json_t *j = ask(sock, "GET", "/v1/volumes", NULL, 200, &rc);
    if (!j)
        return rc;
    static struct volume_rec rec;
    json_t *v;
    size_t i;
    ls_head();
    json_array_foreach(json_object_get(j, "volumes"), i, v)
        if (!volume_rec_from_json(v, &rec))
            ls_row(&rec);
    json_decref(j);
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
    if (a.socket)
        return ls_daemon(&a);
    if ((rc = open_store(&a, &vs)))
        return rc;
    char **names;
    size_t n;
    if ((rc = volume_names(&vs, &names, &n)))
        return verb_fail("cannot list %s: %s", vs.dir, strerror(-rc));
    ls_head();
    static struct volume_rec rec;
    for (size_t i = 0; i < n; i++) {
        if (!volume_get(&vs, names[i], &rec))
            ls_row(&rec);
        free(names[i]);
    }
    free(names);
    return 0;
}

/* Each name removed by the daemon, as the folder's rm does: printed when
 * gone; the status of the last that failed, else 0. */
static int rm_daemon(const struct volume_args *a)
{
    char sock[4096], path[VOLUME_NAME_MAX + 16];
    int rc = daemon_socket(a, sock, sizeof(sock)), status = 0;
    if (rc)
        return rc;
    for (int i = 0; i < a->nnames; i++) {
        /* a name that passed name_ok needs no escaping in a path */
        snprintf(path, sizeof(path), "/v1/volumes/%s", a->names[i]);
        json_t *j = ask(sock, "DELETE", path, NULL, 204, &rc);
        if (j)
            printf("%s\n", a->names[i]);
        else
            status = rc;
        json_decref(j);
    }
    return status;
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
    if (a.socket)
        return rm_daemon(&a);
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
