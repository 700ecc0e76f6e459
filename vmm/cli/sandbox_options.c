/* The options that shape a sandbox, as `airlock create` and `airlock mcp`
 * take them, into the API's create body. */
#include "vmm/cli/sandbox_options.h"
#include "vmm/egress/secret.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cli/mount_options.h"
#include "vmm/forward/forward_spec.h"
#include "vmm/util/exit_codes.h"
#include "vmm/util/parse.h"

int verb_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "airlock: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return EXIT_AIRLOCK_ERROR;
}

/* "K=V" into obj[K] = V; -1 when there is no '=' or no name. */
int sandbox_add_var(json_t *obj, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return -1;
    char *k = strndup(kv, (size_t)(eq - kv));
    json_t *v = json_string(eq + 1);
    int rc = k && v ? json_object_set_new(obj, k, v) : -1;
    free(k);
    return rc;
}

/* The create request's "secrets" (docs/sandboxes.md) from parsed and
 * loaded --secret flags. */
static json_t *secrets_json(const struct secret_set *set)
{
    json_t *arr = json_array();
    for (unsigned i = 0; i < set->n; i++) {
        const struct secret *s = &set->s[i];
        char host[EGRESS_HOST_MAX + 16];
        secret_host_port(s, host, sizeof(host));
        json_t *o = json_pack("{s:s, s:s#, s:s, s:s, s:s}", "name", s->name, "value", s->value,
                              s->len, "host", host, "header", s->header, "format", s->format);
        json_t *methods = json_array(), *paths = json_array();
        for (unsigned k = 0; k < s->nmethods; k++)
            json_array_append_new(methods, json_string(s->methods[k]));
        for (unsigned k = 0; k < s->npaths; k++)
            json_array_append_new(paths, json_string(s->paths[k]));
        json_object_set_new(o, "methods", methods);
        json_object_set_new(o, "paths", paths);
        if (!s->nmethods)
            json_object_del(o, "methods");
        if (!s->npaths)
            json_object_del(o, "paths");
        json_array_append_new(arr, o);
    }
    return arr;
}

/* The create request's "mounts" (docs/mounts.md).  HOSTDIR is a folder
 * of the daemon's host, which may not be this one (a daemon over TCP):
 * the daemon checks it and names it when it refuses it, so it is not
 * looked at here.  A relative one is made absolute against our working
 * folder (the daemon's VM process has its own), as the Python SDK does.
 * NULL with err when it cannot be. */
static json_t *mounts_json(const struct mount_list *l, char *err, size_t cap)
{
    json_t *arr = json_array();
    char cwd[PATH_MAX];
    bool have_cwd = false;
    for (unsigned i = 0; arr && i < l->n; i++) {
        const struct mount_spec *m = &l->m[i];
        char abs[2 * PATH_MAX];
        if (m->volume) { /* the daemon's own volume, by name */
            json_array_append_new(arr, json_pack("{s:s, s:s, s:b}", "volume", m->name, "target",
                                                 m->guest, "readonly", !m->rw));
            continue;
        }
        if (m->host[0] != '/' && !have_cwd && !(have_cwd = getcwd(cwd, sizeof(cwd)))) {
            snprintf(err, cap, "--mount '%.200s': HOSTDIR is relative and the working folder "
                     "is unknown: %s", m->arg, strerror(errno));
            json_decref(arr);
            return NULL;
        }
        snprintf(abs, sizeof(abs), "%s%s%s", m->host[0] == '/' ? "" : cwd,
                 m->host[0] == '/' ? "" : "/", m->host);
        json_array_append_new(arr, json_pack("{s:s, s:s, s:b}", "source", abs, "target",
                                             m->guest, "readonly", !m->rw));
    }
    return arr;
}

int sandbox_create_options(int argc, char **argv, const char *verb, const char *usage,
                           json_t **out, const char **sock_flag)
{
    static const struct option opts[] = {
        {"socket", required_argument, NULL, 'S'}, {"image", required_argument, NULL, 'I'},
        {"mem", required_argument, NULL, 'm'},    {"cpus", required_argument, NULL, 'c'},
        {"allow", required_argument, NULL, 'a'},  {"allow-ip", required_argument, NULL, 'A'},
        {"label", required_argument, NULL, 'l'},  {"timeout", required_argument, NULL, 't'},
        {"max-lifetime", required_argument, NULL, 'L'},
        {"append", required_argument, NULL, 'X'}, {"help", no_argument, NULL, 'h'},
        {"publish", required_argument, NULL, 'p'},
        {"secret", required_argument, NULL, 'K'}, {"ca-file", required_argument, NULL, 'C'},
        {"mount", required_argument, NULL, 'M'},
        {"volume", required_argument, NULL, 'V'},
        {"on-timeout", required_argument, NULL, 'O'},
        {0},
    };
    static struct secret_set secrets;
    static struct mount_list mounts;
    memset(&mounts, 0, sizeof(mounts));
    char why[1024];
    memset(&secrets, 0, sizeof(secrets));
    json_t *body = json_object(), *allow = json_array(), *allow_ip = json_array();
    json_t *env = json_object(), *labels = json_object(), *ports = json_array();
    struct forward_spec spec;
    int c, rc = 0;
    uint64_t v;
    optind = 0;
    opterr = 0;
    while (!rc && (c = getopt_long(argc, argv, "+:e:p:", opts, NULL)) != -1) {
        switch (c) {
        case 'S': *sock_flag = optarg; break;
        case 'I': json_object_set_new(body, "image", json_string(optarg)); break;
        case 'X': json_object_set_new(body, "append", json_string(optarg)); break;
        case 'p':
            if (forward_spec_parse(optarg, &spec, why, sizeof(why)))
                rc = verb_fail("-p '%.64s': %s", optarg, why);
            else
                json_array_append_new(ports, json_string(optarg));
            break;
        case 'm':
        case 'c':
        case 't':
        case 'L':
            uint64_t max = c == 'c' ? 64 : c == 'm' ? 1048576 : 31536000;
            if (parse_uint(optarg, max, &v)) {
                rc = verb_fail("%s '%.64s': want a whole number, at most %llu",
                          c == 'm' ? "--mem" : c == 'c' ? "--cpus" : c == 't' ? "--timeout"
                                                                               : "--max-lifetime",
                          optarg, (unsigned long long)max);
                break;
            }
            json_object_set_new(body, c == 'm' ? "mem" : c == 'c' ? "cpus" : c == 't' ? "timeout_s"
                                                                                   : "max_lifetime_s",
                                json_integer((json_int_t)v));
            break;
        case 'a': json_array_append_new(allow, json_string(optarg)); break;
        case 'A': json_array_append_new(allow_ip, json_string(optarg)); break;
        case 'K':
            if (secret_parse(&secrets, optarg, why, sizeof(why)))
                rc = verb_fail("%s", why);
            break;
        case 'C': json_object_set_new(body, "ca_file", json_string(optarg)); break;
        case 'O':
            if (strcmp(optarg, "kill") && strcmp(optarg, "pause"))
                rc = verb_fail("--on-timeout '%.64s': want kill or pause", optarg);
            else
                json_object_set_new(body, "on_timeout", json_string(optarg));
            break;
        case 'M':
        case 'V':
            if (c == 'M' ? mount_list_add(&mounts, optarg, false, why, sizeof(why))
                         : mount_list_add_volume(&mounts, optarg, why, sizeof(why)))
                rc = verb_fail("%s", why);
            break;
        case 'e':
        case 'l':
            if (sandbox_add_var(c == 'e' ? env : labels, optarg))
                rc = verb_fail("%s '%.64s': want NAME=VALUE", c == 'e' ? "-e" : "--label",
                          optarg);
            break;
        case 'h':
            fputs(usage, stdout);
            rc = -1;
            break;
        case ':': rc = verb_fail("%s needs a value", argv[optind - 1]); break;
        default: rc = verb_fail("unknown option '%s' (see airlock %s --help)", argv[optind - 1], verb);
        }
    }
    if (!rc && optind < argc)
        rc = verb_fail("unexpected argument '%.200s' (see airlock %s --help)", argv[optind], verb);
    /* The values are read here, by the caller's own process (its env:,
     * its files), and go to the daemon in the request; never on a
     * command line. */
    if (!rc && secrets.n && secret_load_all(&secrets, why, sizeof(why)))
        rc = verb_fail("%s", why);
    if (!rc && secrets.n)
        json_object_set_new(body, "secrets", secrets_json(&secrets));
    secret_wipe(&secrets);
    json_t *mj = !rc && mounts.n ? mounts_json(&mounts, why, sizeof(why)) : NULL;
    if (!rc && mounts.n && !mj)
        rc = verb_fail("%s", why);
    if (mj)
        json_object_set_new(body, "mounts", mj);
    json_object_set_new(body, "allow", allow);
    json_object_set_new(body, "allow_ip", allow_ip);
    json_object_set_new(body, "env", env);
    json_object_set_new(body, "labels", labels);
    if (json_array_size(ports))
        json_object_set_new(body, "ports", ports);
    else
        json_decref(ports);
    *out = body;
    return rc;
}

bool verb_id_ok(const char *id)
{
    return *id && strlen(id) <= 64 && !strpbrk(id, "/?#% ");
}

int verb_socket_option(int argc, char **argv, const char *verb, const char *usage,
                       const char **sock_flag, const char *flag, bool *flag_set)
{
    const struct option opts[] = {
        {"socket", required_argument, NULL, 'S'}, {"help", no_argument, NULL, 'h'},
        {flag, no_argument, NULL, 'F'}, {0},
    };
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
        switch (c) {
        case 'S': *sock_flag = optarg; break;
        case 'F': *flag_set = true; break;
        case 'h': printf("%s", usage); return -1;
        case ':': return verb_fail("%s needs a value", argv[optind - 1]);
        default:
            return verb_fail("unknown option '%s' (see airlock %s --help)", argv[optind - 1], verb);
        }
    }
    return 0;
}
