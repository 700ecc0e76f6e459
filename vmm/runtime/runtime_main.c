/* airlock-runtime's global options and verbs; see runtime_main.h. */
#include "vmm/runtime/runtime_main.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vmm/runtime/container_state.h"
#include "vmm/runtime/runtime_cmds.h"
#include "vmm/runtime/runtime_log.h"
#include "vmm/util/exit_codes.h"
#include "vmm/util/version.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: airlock-runtime [global options] COMMAND [options] ID\n"
            "\n"
            "An OCI runtime (runc's command line) whose containers are airlock microVMs.\n"
            "\n"
            "commands:\n"
            "  create --bundle DIR [--pid-file F] [--console-socket S] ID\n"
            "  start ID            run the container's process (created -> running)\n"
            "  state ID            the state as JSON\n"
            "  kill [--all] ID [SIGNAL]   (default TERM; numbers and names)\n"
            "  delete [--force] ID\n"
            "  exec [--process F | ID CMD...] [--detach] [--pid-file F] ID\n"
            "  ps [--format json|table] ID, list, pause ID, resume ID,\n"
            "  update --resources FILE ID, features\n"
            "\n"
            "global options:\n"
            "  --root DIR          containers' state (default " RUNTIME_DEFAULT_ROOT ")\n"
            "  --log FILE          errors also go there; --log-format text|json\n"
            "  --systemd-cgroup    linux.cgroupsPath is slice:prefix:name\n"
            "  --debug             accepted\n"
            "  --version, --help\n");
}

int runtime_usage_error(const char *verb, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (strcmp(verb, RUNTIME_NAME))
        runtime_error("%s: %s (see airlock-runtime --help)", verb, msg);
    else
        runtime_error("%s (see airlock-runtime --help)", msg);
    return EXIT_AIRLOCK_ERROR;
}

static const struct {
    const char *name;
    int (*fn)(const struct runtime_globals *, int, char **);
} verbs[] = {
    {"create", runtime_create}, {"start", runtime_start},   {"state", runtime_state},
    {"kill", runtime_kill},     {"delete", runtime_delete}, {"exec", runtime_exec},
    {"ps", runtime_ps},         {"pause", runtime_pause},   {"resume", runtime_pause},
    {"list", runtime_list},     {"update", runtime_update}, {"features", runtime_features},
};

int runtime_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"root", required_argument, NULL, 'r'},   {"log", required_argument, NULL, 'l'},
        {"log-format", required_argument, NULL, 'f'},
        {"systemd-cgroup", no_argument, NULL, 's'}, {"debug", no_argument, NULL, 'd'},
        {"criu", required_argument, NULL, 'c'},   {"rootless", required_argument, NULL, 'R'},
        {"version", no_argument, NULL, 'v'},      {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct runtime_globals g = {.root = RUNTIME_DEFAULT_ROOT};
    const char *log = NULL, *format = "text";
    int c;
    opterr = 0;
    while ((c = getopt_long_only(argc, argv, "+vh", opts, NULL)) != -1) {
        switch (c) {
        case 'r': g.root = optarg; break;
        case 'l': log = optarg; break;
        case 'f': format = optarg; break;
        case 's': g.systemd_cgroup = true; break;
        case 'd': case 'c': case 'R': break;
        case 'v':
            printf("airlock-runtime version %s\nspec: 1.0.2\n", AIRLOCK_VERSION);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return runtime_usage_error("airlock-runtime", "unknown option '%s'",
                                       argv[optind - 1]);
        }
    }
    if (strcmp(format, "text") && strcmp(format, "json"))
        return runtime_usage_error("airlock-runtime", "--log-format %.40s: want text or json",
                                   format);
    runtime_log_setup(log, !strcmp(format, "json"));
    if (g.root[0] != '/')
        return runtime_usage_error("airlock-runtime", "--root %.200s: want an absolute path",
                                   g.root);
    if (optind >= argc) {
        usage(stderr);
        return EXIT_AIRLOCK_ERROR;
    }
    const char *verb = argv[optind];
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
        if (!strcmp(verb, verbs[i].name))
            return verbs[i].fn(&g, argc - optind, argv + optind);
    if (!strcmp(verb, "help")) {
        usage(stdout);
        return 0;
    }
    return runtime_usage_error("airlock-runtime", "unknown command '%.60s'", verb);
}
