/* `airlock-runtime exec [--process FILE | ID CMD...] [--detach]
 * [--pid-file P] ID`: a second process in the container's VM, with a host
 * stand-in of its own (vmm/runtime/standin.h).  The process file is read
 * before anything else (its caller deletes it once exec returns).  With
 * --detach the stand-in is forked, its pid written to the pid file, and
 * exec returns 0 at once; without, exec is the stand-in itself and exits
 * with the process's status. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/runtime/container_state.h"
#include "vmm/runtime/oci_config.h"
#include "vmm/runtime/pid_file.h"
#include "vmm/runtime/runtime_cmds.h"
#include "vmm/runtime/runtime_log.h"
#include "vmm/runtime/standin.h"
#include "vmm/util/parse.h"

#define MAX_CLI_ENV 256

struct exec_args {
    const char *process, *pid_file, *console_socket, *cwd, *user;
    const char *env[MAX_CLI_ENV + 1];
    unsigned nenv;
    bool detach, tty;
};

static int parse(int argc, char **argv, struct exec_args *a)
{
    static const struct option opts[] = {
        {"process", required_argument, NULL, 'p'}, {"detach", no_argument, NULL, 'd'},
        {"tty", no_argument, NULL, 't'},           {"console-socket", required_argument, NULL, 'c'},
        {"pid-file", required_argument, NULL, 'P'}, {"cwd", required_argument, NULL, 'w'},
        {"env", required_argument, NULL, 'e'},     {"user", required_argument, NULL, 'u'},
        {"preserve-fds", required_argument, NULL, 'f'},
        {"no-new-privs", no_argument, NULL, 'n'},  {"process-label", required_argument, NULL, 'l'},
        {"apparmor", required_argument, NULL, 'a'}, {"cap", required_argument, NULL, 'C'},
        {"additional-gids", required_argument, NULL, 'g'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof(*a));
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long_only(argc, argv, "+p:dte:u:", opts, NULL)) != -1) {
        switch (c) {
        case 'p': a->process = optarg; break;
        case 'd': a->detach = true; break;
        case 't': a->tty = true; break;
        case 'c': a->console_socket = optarg; break;
        case 'P': a->pid_file = optarg; break;
        case 'w': a->cwd = optarg; break;
        case 'u': a->user = optarg; break;
        case 'e':
            if (a->nenv == MAX_CLI_ENV || !strchr(optarg, '='))
                return runtime_usage_error("exec", "--env %.100s: want NAME=VALUE (at most %d)",
                                           optarg, MAX_CLI_ENV);
            a->env[a->nenv++] = optarg;
            break;
        case 'f':
            if (strcmp(optarg, "0"))
                return runtime_usage_error("exec", "--preserve-fds %s: a process in a VM "
                                           "cannot use host file descriptors", optarg);
            break;
        case 'n': case 'l': case 'a': case 'C': case 'g': break;
        default:
            return runtime_usage_error("exec", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return runtime_usage_error("exec", "want the container id");
    if (!a->process && optind + 1 >= argc)
        return runtime_usage_error("exec", "want --process FILE or a command after the id");
    return 0;
}

/* The process from the command line (no --process): args, cwd, env, user. */
static int cli_process(const struct exec_args *a, char **args, int nargs, struct oci_process *p)
{
    memset(p, 0, sizeof(*p));
    p->args = calloc((size_t)nargs + 1, sizeof(char *));
    p->env = calloc(a->nenv + 2, sizeof(char *));
    if (!p->args || !p->env)
        return runtime_error("out of memory");
    for (int i = 0; i < nargs; i++)
        p->args[i] = args[i];
    p->nargs = (unsigned)nargs;
    p->env[p->nenv++] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    for (unsigned i = 0; i < a->nenv; i++)
        p->env[p->nenv++] = a->env[i];
    p->cwd = a->cwd ? a->cwd : "/";
    p->terminal = a->tty;
    if (a->user) {
        char *colon = strchr(a->user, ':');
        uint64_t uid, gid = 0;
        char u[32];
        snprintf(u, sizeof(u), "%.*s", colon ? (int)(colon - a->user) : 31, a->user);
        if (parse_uint(u, 0xfffffffe, &uid) || (colon && parse_uint(colon + 1, 0xfffffffe, &gid)))
            return runtime_usage_error("exec", "--user %.60s: want UID[:GID] as numbers",
                                       a->user);
        p->uid = (uint32_t)uid;
        p->gid = (uint32_t)gid;
    }
    return 0;
}

int runtime_exec(const struct runtime_globals *g, int argc, char **argv)
{
    struct exec_args a;
    int rc = parse(argc, argv, &a);
    if (rc)
        return rc;
    const char *id = argv[optind];
    struct oci_process p;
    json_t *doc = NULL;
    char err[1024];
    if (a.process ? oci_process_load(a.process, &doc, &p, err, sizeof(err))
                  : cli_process(&a, argv + optind + 1, argc - optind - 1, &p)) {
        oci_process_free(&p);
        return a.process ? runtime_error("--process %s: %s", a.process, err) : 125;
    }
    if (a.tty && a.process)
        p.terminal = true;
    struct container c;
    int e = container_open(g->root, id, &c);
    const char *sock = c.state ? json_string_value(json_object_get(c.state, "vm_sock")) : NULL;
    if (e || !c.state) {
        rc = runtime_error("container %s does not exist", id);
    } else {
        enum container_status s = container_status(&c);
        if (s != CONTAINER_RUNNING && s != CONTAINER_CREATED)
            rc = runtime_error(s == CONTAINER_PAUSED ? "cannot exec in a paused container"
                                                     : "cannot exec in a stopped container");
        else if (!sock)
            rc = runtime_error("container %s has no VM", id);
        else if (p.terminal && !a.console_socket)
            rc = runtime_error("a terminal needs --console-socket");
    }
    if (rc)
        goto out;
    fflush(NULL);
    pid_t pid = a.detach ? fork() : getpid();
    if (pid < 0) {
        rc = runtime_error("fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0 || !a.detach) {
        if (a.detach || p.terminal)
            setsid();
        if (p.terminal) {
            int slave = standin_console(a.console_socket, &p, err, sizeof(err));
            if (slave < 0 || standin_take_console(slave, err, sizeof(err))) {
                rc = runtime_error("%s", err);
                if (a.detach)
                    _exit(rc);
                goto out;
            }
        }
        container_add_exec(&c, getpid());
        if (!a.detach && a.pid_file && (e = pid_file_write(a.pid_file, getpid()))) {
            rc = runtime_error("--pid-file %s: %s", a.pid_file, strerror(-e));
            goto out;
        }
        struct standin_target t = {
            .sock = sock, .egress = json_is_true(json_object_get(c.state, "egress")),
            .container = json_string_value(json_object_get(c.state, "pod_name"))};
        int status = standin_run(&t, &p, false, -1);
        container_drop_exec(&c, getpid());
        if (a.detach)
            _exit(status);
        rc = status;
        goto out;
    }
    if (a.pid_file && (e = pid_file_write(a.pid_file, pid))) {
        rc = runtime_error("--pid-file %s: %s", a.pid_file, strerror(-e));
        kill(pid, SIGKILL);
    }
out:
    container_close(&c);
    oci_process_free(&p);
    json_decref(doc);
    return rc;
}
