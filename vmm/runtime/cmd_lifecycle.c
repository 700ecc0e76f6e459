/* The verbs that act on an existing container: start, state, kill,
 * delete, ps, pause/resume, list, update; the wording of their errors is
 * runc's where callers match it ("does not exist", "container not
 * running", "cannot delete container ... that is not stopped"). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "vmm/runtime/container_cgroup.h"
#include "vmm/runtime/container_state.h"
#include "vmm/runtime/container_vm.h"
#include "vmm/runtime/hooks.h"
#include "vmm/runtime/oci_config.h"
#include "vmm/runtime/runtime_cmds.h"
#include "vmm/runtime/runtime_log.h"
#include "vmm/runtime/standin.h"
#include "vmm/util/parse.h"

#define START_WAIT_MS 10000
#define START_RUN_MS 30000 /* from the start to the process's execve in the guest */
#define KILL_WAIT_MS 10000
#define MAX_EXECS 256

/* One option of a verb: its value, or whether it was given. */
struct verb_opt {
    const char *name;
    const char **value; /* a required argument goes here */
    bool *given;        /* a flag */
};

/* The options of a verb (NULL-terminated; each may also come as its
 * first letter); argv[optind] is then the id. */
static int verb_args(int argc, char **argv, const struct verb_opt *vo, int npos_min,
                     int npos_max)
{
    struct option opts[4] = {{0}};
    char shorts[16] = "+";
    size_t n = 0, sl = 1;
    for (; vo && vo[n].name && n < 3; n++) {
        opts[n] = (struct option){vo[n].name, vo[n].value ? required_argument : no_argument,
                                  NULL, vo[n].name[0]};
        shorts[sl++] = vo[n].name[0];
        if (vo[n].value)
            shorts[sl++] = ':';
    }
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long_only(argc, argv, shorts, opts, NULL)) != -1) {
        size_t k = 0;
        while (k < n && c != vo[k].name[0])
            k++;
        if (k == n)
            return runtime_usage_error(argv[0], "unknown option '%s'", argv[optind - 1]);
        if (vo[k].value)
            *vo[k].value = optarg;
        else
            *vo[k].given = true;
    }
    int npos = argc - optind;
    if (npos < npos_min || npos > npos_max)
        return runtime_usage_error(argv[0], npos_min ? "want the container id%s" : "want no "
                                   "arguments%s", npos_max > 1 ? " (and a signal)" : "");
    return 0;
}

/* The container of argv[optind]; prints runc's "does not exist". */
static int open_or_say(const struct runtime_globals *g, const char *id, struct container *c)
{
    int e = container_open(g->root, id, c);
    if (e == -ENOENT || (!e && !c->state)) {
        container_close(c);
        return runtime_error("container %s does not exist", id), -1;
    }
    if (e)
        return runtime_error("container %s: %s", id, strerror(-e)), -1;
    return 0;
}

/* The verb's options, then its container (argv[optind]): 0 with *c open,
 * else the status to exit with. */
static int verb_container(const struct runtime_globals *g, int argc, char **argv,
                          const struct verb_opt *vo, struct container *c)
{
    int rc = verb_args(argc, argv, vo, 1, 1);
    if (rc)
        return rc;
    return open_or_say(g, argv[optind], c) ? 1 : 0;
}

static const char *cgroup_of(const struct container *c)
{
    const char *s = json_string_value(json_object_get(c->state, "cgroup"));
    return s ? s : "";
}

/* The bundle's config again (hooks of start and delete). */
static int bundle_config(const struct container *c, struct oci_config *cfg)
{
    char p[PATH_MAX + 16], err[1024];
    const char *b = json_string_value(json_object_get(c->state, "bundle"));
    if (!b)
        return -1;
    snprintf(p, sizeof(p), "%s/config.json", b);
    if (oci_config_load(p, cfg, err, sizeof(err))) {
        runtime_warn("container %s: %s", c->id, err);
        return -1;
    }
    return 0;
}

int runtime_start(const struct runtime_globals *g, int argc, char **argv)
{
    struct container c;
    int rc = verb_container(g, argc, argv, NULL, &c);
    if (rc)
        return rc;
    enum container_status s = container_status(&c);
    if (s != CONTAINER_CREATED) {
        rc = s == CONTAINER_STOPPED ? runtime_error("cannot start a container that has stopped")
                                    : runtime_error("cannot start an already running container");
        container_close(&c);
        return rc;
    }
    char fifo[PATH_MAX + 16];
    container_path(&c, "start", fifo, sizeof(fifo));
    /* The stand-in blocks opening its end for writing: this open lets it
     * go, and its byte says it took the start. */
    int fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char b = 0;
    int64_t waited = 0;
    while (fd >= 0 && waited < START_WAIT_MS) {
        int n = poll(&p, 1, 100);
        if (n > 0 && read(fd, &b, 1) == 1)
            break;
        waited += 100;
        if (container_status(&c) == CONTAINER_STOPPED)
            break;
    }
    if (b != 's') {
        if (fd >= 0)
            close(fd);
        container_close(&c);
        return runtime_error("container %s did not start: its stand-in %s", c.id,
                             fd < 0 ? "has no start FIFO" : "did not answer");
    }
    unlink(fifo);
    /* As runc's, start returns once the process runs (a signal sent then
     * finds it): the stand-in's next byte, or its end of the FIFO when
     * the process could not run (its status says why). */
    if (poll(&p, 1, START_RUN_MS) == 0)
        runtime_warn("container %s: its process is not running yet after %d s", c.id,
                     START_RUN_MS / 1000);
    close(fd);
    struct oci_config cfg;
    if (!bundle_config(&c, &cfg)) {
        char err[1024];
        json_t *st = container_state_json(&c);
        if (hooks_run(&cfg, OCI_HOOK_START_CONTAINER, st, err, sizeof(err)))
            runtime_warn("container %s: %s", c.id, err);
        if (hooks_run(&cfg, OCI_HOOK_POSTSTART, st, err, sizeof(err)))
            runtime_warn("container %s: %s", c.id, err);
        json_decref(st);
        oci_config_free(&cfg);
    }
    container_close(&c);
    return 0;
}

int runtime_state(const struct runtime_globals *g, int argc, char **argv)
{
    struct container c;
    int rc = verb_container(g, argc, argv, NULL, &c);
    if (rc)
        return rc;
    json_t *st = container_state_json(&c);
    char *text = st ? json_dumps(st, JSON_INDENT(2)) : NULL;
    if (text)
        printf("%s\n", text);
    free(text);
    json_decref(st);
    container_close(&c);
    return text ? 0 : runtime_error("out of memory");
}

static const struct {
    const char *name;
    int sig;
} signals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},     {"QUIT", SIGQUIT}, {"ILL", SIGILL},
    {"TRAP", SIGTRAP}, {"ABRT", SIGABRT},   {"IOT", SIGIOT},   {"BUS", SIGBUS},
    {"FPE", SIGFPE},   {"KILL", SIGKILL},   {"USR1", SIGUSR1}, {"SEGV", SIGSEGV},
    {"USR2", SIGUSR2}, {"PIPE", SIGPIPE},   {"ALRM", SIGALRM}, {"TERM", SIGTERM},
    {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD}, {"CONT", SIGCONT}, {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},   {"TTOU", SIGTTOU}, {"URG", SIGURG},
    {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ},   {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
    {"WINCH", SIGWINCH}, {"IO", SIGIO},     {"PWR", SIGPWR},   {"SYS", SIGSYS},
};

/* "9", "KILL", "SIGKILL" (any case for the names): the number, or -1. */
static int signal_number(const char *s)
{
    uint64_t v;
    if (!parse_uint(s, 64, &v))
        return v ? (int)v : -1;
    if (!strncasecmp(s, "SIG", 3))
        s += 3;
    for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
        if (!strcasecmp(s, signals[i].name))
            return signals[i].sig;
    return -1;
}

int runtime_kill(const struct runtime_globals *g, int argc, char **argv)
{
    bool all = false;
    const struct verb_opt vo[] = {{"all", NULL, &all}, {NULL, NULL, NULL}};
    struct container c;
    int rc = verb_args(argc, argv, vo, 1, 2);
    if (rc)
        return rc;
    const char *id = argv[optind], *name = optind + 1 < argc ? argv[optind + 1] : "TERM";
    int sig = signal_number(name);
    if (sig < 0)
        return runtime_usage_error("kill", "unknown signal '%.40s'", name);
    if (open_or_say(g, id, &c))
        return 1;
    enum container_status s = container_status(&c);
    if (s == CONTAINER_STOPPED || s == CONTAINER_CREATING) {
        container_close(&c);
        return runtime_error("container not running");
    }
    /* The stand-in passes a signal on to the container's process alone,
     * as runc's kill; --all queues it with a value that says "and the
     * rest" (standin.h), to the exec'd processes' stand-ins too. */
    union sigval all_v = {.sival_int = STANDIN_SIG_ALL};
    if ((all ? sigqueue(c.pid, sig, all_v) : kill(c.pid, sig)) < 0)
        rc = runtime_error("kill %d: %s", (int)c.pid, strerror(errno));
    if (all) {
        pid_t execs[MAX_EXECS];
        unsigned n = container_execs(&c, execs, MAX_EXECS);
        for (unsigned i = 0; i < n; i++)
            sigqueue(execs[i], sig, all_v);
    }
    container_close(&c);
    return rc;
}

/* SIGKILL to the stand-ins (the VM dies with the init one), then waits
 * until they are gone (or zombies the caller has yet to reap). */
static void kill_all(struct container *c)
{
    pid_t execs[MAX_EXECS];
    unsigned n = container_execs(c, execs, MAX_EXECS);
    for (unsigned i = 0; i < n; i++)
        kill(execs[i], SIGKILL);
    if (container_status(c) != CONTAINER_STOPPED)
        kill(c->pid, SIGKILL);
    for (int waited = 0; waited < KILL_WAIT_MS && container_status(c) != CONTAINER_STOPPED;
         waited += 10)
        usleep(10000);
}

int runtime_delete(const struct runtime_globals *g, int argc, char **argv)
{
    bool force = false;
    const struct verb_opt vo[] = {{"force", NULL, &force}, {NULL, NULL, NULL}};
    struct container c;
    int rc = verb_args(argc, argv, vo, 1, 1);
    if (rc)
        return rc;
    int e = container_open(g->root, argv[optind], &c);
    if (e == -ENOENT) {
        /* runc: a missing container with --force is no error */
        return force ? 0 : runtime_error("container %s does not exist", argv[optind]);
    }
    if (e)
        return runtime_error("container %s: %s", argv[optind], strerror(-e));
    enum container_status s = container_status(&c);
    if (s != CONTAINER_STOPPED && s != CONTAINER_CREATING && s != CONTAINER_CREATED && !force) {
        rc = runtime_error("cannot delete container %s that is not stopped: %s", c.id,
                           container_status_name(s));
        container_close(&c);
        return rc;
    }
    if (s != CONTAINER_STOPPED)
        kill_all(&c);
    struct oci_config cfg;
    bool have_cfg = c.state && !bundle_config(&c, &cfg);
    json_t *st = container_state_json(&c);
    container_vm_forget(c.state);
    container_cgroup_remove(cgroup_of(&c));
    container_remove(&c);
    if (have_cfg) {
        char err[1024];
        json_object_set_new(st, "status", json_string("stopped"));
        if (hooks_run(&cfg, OCI_HOOK_POSTSTOP, st, err, sizeof(err)))
            runtime_warn("container %s: %s", c.id, err);
        oci_config_free(&cfg);
    }
    json_decref(st);
    container_close(&c);
    return 0;
}

int runtime_ps(const struct runtime_globals *g, int argc, char **argv)
{
    const char *format = "table";
    const struct verb_opt vo[] = {{"format", &format, NULL}, {NULL, NULL, NULL}};
    struct container c;
    int rc = verb_args(argc, argv, vo, 1, 1);
    if (rc)
        return rc;
    if (strcmp(format, "json") && strcmp(format, "table"))
        return runtime_usage_error("ps", "--format %.40s: want json or table", format);
    if (open_or_say(g, argv[optind], &c))
        return 1;
    /* The host processes that stand for the container: the stand-ins
     * and the VM (in its cgroup), else the stand-ins alone. */
    int pids[1024];
    unsigned n = container_cgroup_pids(cgroup_of(&c), pids, 1024);
    if (!n && container_status(&c) != CONTAINER_STOPPED) {
        pid_t execs[MAX_EXECS];
        pids[n++] = c.pid;
        unsigned k = container_execs(&c, execs, MAX_EXECS);
        for (unsigned i = 0; i < k; i++)
            pids[n++] = execs[i];
    }
    if (!strcmp(format, "json")) {
        printf("[");
        for (unsigned i = 0; i < n; i++)
            printf("%s%d", i ? "," : "", pids[i]);
        printf("]\n");
    } else {
        printf("PID\n");
        for (unsigned i = 0; i < n; i++)
            printf("%d\n", pids[i]);
    }
    container_close(&c);
    return 0;
}

int runtime_pause(const struct runtime_globals *g, int argc, char **argv)
{
    bool pause = !strcmp(argv[0], "pause");
    struct container c;
    int rc = verb_container(g, argc, argv, NULL, &c);
    if (rc)
        return rc;
    enum container_status s = container_status(&c);
    char marker[PATH_MAX + 16];
    container_path(&c, "paused", marker, sizeof(marker));
    if (s != (pause ? CONTAINER_RUNNING : CONTAINER_PAUSED))
        rc = runtime_error(pause ? "container not running" : "container not paused");
    else if (json_object_get(c.state, "pod"))
        /* its processes run in the pod's VM, which its cgroup does not hold */
        rc = runtime_error("container %s runs in its pod's VM: pause the pod's sandbox "
                           "container, which pauses all of it", c.id);
    else if (!cgroup_of(&c)[0])
        rc = runtime_error("container %s has no cgroup to freeze (linux.cgroupsPath)", c.id);
    else if ((rc = container_cgroup_freeze(cgroup_of(&c), pause)))
        rc = runtime_error("%s/cgroup.freeze: %s", cgroup_of(&c), strerror(-rc));
    else if (pause)
        close(open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    else
        unlink(marker);
    container_close(&c);
    return rc;
}

int runtime_list(const struct runtime_globals *g, int argc, char **argv)
{
    const char *format = "table";
    bool quiet = false;
    const struct verb_opt vo[] = {{"format", &format, NULL}, {"quiet", NULL, &quiet},
                                  {NULL, NULL, NULL}};
    int rc = verb_args(argc, argv, vo, 0, 0);
    if (rc)
        return rc;
    DIR *d = opendir(g->root);
    json_t *all = json_array();
    struct dirent *de;
    while (d && (de = readdir(d))) {
        struct container c;
        if (!container_id_ok(de->d_name) || !strcmp(de->d_name, "vm") ||
            container_open(g->root, de->d_name, &c))
            continue;
        if (c.state)
            json_array_append_new(all, container_state_json(&c));
        container_close(&c);
    }
    if (d)
        closedir(d);
    if (quiet) {
        size_t i;
        json_t *e;
        json_array_foreach(all, i, e)
            printf("%s\n", json_string_value(json_object_get(e, "id")));
    } else if (!strcmp(format, "json")) {
        char *t = json_dumps(all, JSON_COMPACT);
        printf("%s\n", t ? t : "[]");
        free(t);
    } else {
        size_t i;
        json_t *e;
        printf("%-40s %-8s %-10s %s\n", "ID", "PID", "STATUS", "BUNDLE");
        json_array_foreach(all, i, e)
            printf("%-40s %-8lld %-10s %s\n", json_string_value(json_object_get(e, "id")),
                   json_integer_value(json_object_get(e, "pid")),
                   json_string_value(json_object_get(e, "status")),
                   json_string_value(json_object_get(e, "bundle")));
    }
    json_decref(all);
    return 0;
}

/* Whether an update's memory limit is the RAM the VM booted with.
 * kubelet's UpdateContainerResources carries the container's memory limit
 * every time, changed or not, and containerd's shim hands it to `update`:
 * only a change is refused, so a CPU update of a pod with limits works. */
static bool same_ram(const struct container *c, int64_t limit)
{
    struct oci_config cfg;
    unsigned mem, cpus;
    char err[1024];
    if (bundle_config(c, &cfg))
        return false;
    bool same = !container_vm_shape(&cfg, &mem, &cpus, err, sizeof(err)) &&
                (limit == cfg.memory_limit || (cfg.memory_limit <= 0 && limit == (int64_t)mem << 20));
    oci_config_free(&cfg);
    return same;
}

int runtime_update(const struct runtime_globals *g, int argc, char **argv)
{
    const char *file = NULL;
    const struct verb_opt vo[] = {{"resources", &file, NULL}, {NULL, NULL, NULL}};
    struct container c;
    int rc = verb_args(argc, argv, vo, 1, 1);
    if (rc)
        return rc;
    if (!file)
        return runtime_usage_error("update", "want --resources FILE (or - for stdin)");
    char buf[65536], err[1024];
    FILE *f = strcmp(file, "-") ? fopen(file, "re") : stdin;
    if (!f)
        return runtime_error("--resources %s: %s", file, strerror(errno));
    size_t n = fread(buf, 1, sizeof(buf), f);
    if (f != stdin)
        fclose(f);
    if (n == sizeof(buf))
        return runtime_error("--resources %s: larger than 64 KiB", file);
    if (open_or_say(g, argv[optind], &c))
        return 1;
    struct oci_config r;
    memset(&r, 0, sizeof(r));
    if (oci_resources_parse(buf, n, &r, err, sizeof(err)))
        rc = runtime_error("--resources: %s", err);
    else if (r.memory_limit != -1 && !json_object_get(c.state, "pod") &&
             !same_ram(&c, r.memory_limit))
        /* The guest's RAM is fixed at boot: no balloon device (yet). */
        rc = runtime_error("--resources: memory.limit cannot change: it is the VM's RAM, fixed "
                           "when it booted");
    else if (cgroup_of(&c)[0] && container_cgroup_update(cgroup_of(&c), &r, err, sizeof(err)))
        rc = runtime_error("%s", err);
    container_close(&c);
    return rc;
}

int runtime_features(const struct runtime_globals *g, int argc, char **argv)
{
    (void)g;
    (void)argc;
    (void)argv;
    printf("{\"ociVersionMin\":\"1.0.0\",\"ociVersionMax\":\"1.0.2\","
           "\"hooks\":[\"prestart\",\"createRuntime\",\"createContainer\",\"startContainer\","
           "\"poststart\",\"poststop\"],\"mountOptions\":[\"bind\",\"rbind\",\"ro\",\"rw\"],"
           "\"annotations\":{\"io.airlock.vm\":\"true\"}}\n");
    return 0;
}
