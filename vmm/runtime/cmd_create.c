/* `airlock-runtime create --bundle B [--pid-file P] [--console-socket S]
 * ID`: the container's root disk (built or found in the cache), then its
 * init stand-in, which boots the VM and waits for `start` on the
 * container's FIFO; create returns once the VM's agent answered, the
 * state is recorded and the create hooks ran, the pid file written last.
 *
 * The stand-in is forked from create and outlives it: the caller (conmon,
 * containerd's shim) is a subreaper and inherits it.  Its stdio are
 * create's (the container's, as the caller passed them); nothing else of
 * create's stays open in it, and the VM process gets /dev/null and a log,
 * so a caller reading create's output sees it end when create ends. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmm/jail/fdpass.h"
#include "vmm/runtime/container_cgroup.h"
#include "vmm/runtime/container_linux.h"
#include "vmm/runtime/container_oom.h"
#include "vmm/runtime/container_ports.h"
#include "vmm/runtime/container_root_watch.h"
#include "vmm/runtime/container_state.h"
#include "vmm/runtime/container_vm.h"
#include "vmm/runtime/hooks.h"
#include "vmm/runtime/oci_config.h"
#include "vmm/runtime/pid_file.h"
#include "vmm/runtime/pod.h"
#include "vmm/runtime/pod_mounts.h"
#include "vmm/runtime/pod_server.h"
#include "vmm/runtime/root_disk.h"
#include "vmm/runtime/runtime_cmds.h"
#include "vmm/runtime/runtime_log.h"
#include "vmm/runtime/standin.h"
#include "vmm/sandbox/sandbox_boot.h"
#include "vmm/sandbox/vm_proc.h"

struct create_args {
    const char *bundle, *pid_file, *console_socket;
    const char *id;
};

/* ---- the init stand-in (the forked child) ---- */

struct standin_ctx {
    const struct runtime_globals *g;
    struct container *c;
    const struct oci_config *cfg;
    const char *disk;
    int ready_fd; /* create's pipe: "" when ready, else the error text */
    int tty;      /* the console's slave, or -1 */
    const char *cgroup; /* the container's cgroup folder, or NULL */
    const char *rootfs; /* the root folder the engine made */
    enum pod_role role;
    const char *sandbox_id; /* a member's pod */
    unsigned mem, cpus;     /* the VM's shape (not a member's) */
};

static void report(int fd, const char *msg)
{
    size_t n = strlen(msg);
    ssize_t w = write(fd, msg, n ? n : 1);
    (void)w;
}

/* Blocks until `start` opens the FIFO for reading, then hands it a byte;
 * the FIFO stays open for standin_run's word that the process runs (or
 * its end), which `start` waits for too.  The fd, or -errno. */
static int wait_for_start(const struct container *c)
{
    char p[PATH_MAX + 16];
    container_path(c, "start", p, sizeof(p));
    int fd;
    while ((fd = open(p, O_WRONLY | O_CLOEXEC)) < 0 && errno == EINTR)
        ;
    if (fd < 0)
        return -errno;
    char b = 's';
    if (write(fd, &b, 1) != 1) {
        close(fd);
        return -EIO;
    }
    return fd;
}

static void __attribute__((noreturn)) fail_ready(const struct standin_ctx *x, const char *err)
{
    report(x->ready_fd, err);
    _exit(1);
}

/* The pod's VM for a member: its slot filled with the member's root disk
 * (the connection that holds it in *conn), its mounts copied in, its
 * state recorded; t says where its processes run.  0, or -1 with err. */
static int join_pod(const struct standin_ctx *x, int *conn, struct standin_target *t,
                    struct pod_binds *pb, char *name, char *serial, char *err, size_t cap)
{
    struct container pod;
    if (container_open(x->g->root, x->sandbox_id, &pod) || !pod.state)
        return snprintf(err, cap, "the pod's sandbox container %.100s does not exist",
                        x->sandbox_id), -1;
    const char *sock = json_string_value(json_object_get(pod.state, "vm_sock"));
    const char *pod_sock = json_string_value(json_object_get(pod.state, "pod_sock"));
    enum container_status st = container_status(&pod);
    int rc = -1;
    unsigned slot;
    if (!sock || !pod_sock || (st != CONTAINER_RUNNING && st != CONTAINER_CREATED))
        snprintf(err, cap, "the pod's sandbox container %.100s has no VM running",
                 x->sandbox_id);
    else if (!pod_member_names(x->c->id, name, 65, serial, err, cap) &&
             (*conn = pod_join(pod_sock, name, serial, x->disk, &slot, err, cap)) >= 0 &&
             !pod_mounts_prepare(sock, name, x->cfg, pb, err, cap)) {
        json_object_set_new(x->c->state, "vm_sock", json_string(sock));
        json_object_set_new(x->c->state, "pod", json_string(x->sandbox_id));
        json_object_set_new(x->c->state, "pod_name", json_string(name));
        json_object_set_new(x->c->state, "pod_slot", json_integer(slot));
        json_object_set(x->c->state, "egress", json_object_get(pod.state, "egress"));
        *t = (struct standin_target){.sock = json_string_value(json_object_get(x->c->state,
                                                                                 "vm_sock")),
                                     .egress = json_is_true(json_object_get(pod.state, "egress")),
                                     .container = name, .root_serial = serial,
                                     .binds = pb->bind, .nbinds = pb->n};
        rc = container_save(x->c) ? snprintf(err, cap, "cannot record the container's state"),
             -1 : 0;
    }
    container_close(&pod);
    return rc;
}

static void __attribute__((noreturn)) init_standin(struct standin_ctx *x)
{
    char err[2048] = "";
    struct sandbox sb;
    setsid();
    if (x->tty >= 0 && standin_take_console(x->tty, err, sizeof(err)))
        fail_ready(x, err);
    if (x->cgroup && container_cgroup_join(x->cgroup, err, sizeof(err)))
        fail_ready(x, err);
    const struct oci_namespace *net = oci_config_namespace(x->cfg, CLONE_NEWNET);
    if (net) {
        /* The engines' network bookkeeping (Docker's libnetwork hook)
         * wants a namespace at the container's pid; the VM has no NIC. */
        int nfd = net->path ? open(net->path, O_RDONLY | O_CLOEXEC) : -1;
        if (net->path ? nfd < 0 || setns(nfd, CLONE_NEWNET) < 0 : unshare(CLONE_NEWNET) < 0) {
            snprintf(err, sizeof(err), "the network namespace %.300s: %s",
                     net->path ? net->path : "(new)", strerror(errno));
            fail_ready(x, err);
        }
        if (nfd >= 0)
            close(nfd);
    }
    int status = EXIT_FAILURE;
    if (x->role == POD_MEMBER) {
        /* A pod's container: the pod's VM runs it; its ports, its
         * network namespace's, are the pod's sandbox's to serve. */
        struct standin_target t;
        struct pod_binds pb;
        char name[65], serial[POD_SERIAL_MAX + 1];
        int conn = -1; /* held until the stand-in ends: then the pod ends the container */
        if (join_pod(x, &conn, &t, &pb, name, serial, err, sizeof(err)))
            fail_ready(x, err);
        report(x->ready_fd, "");
        close(x->ready_fd);
        uint32_t guest_pid = 0;
        t.guest_pid = &guest_pid;
        t.config = x->cfg;
        int started = wait_for_start(x->c);
        if (started >= 0)
            status = standin_run(&t, &x->cfg->process, true, started);
        /* Its first process killed by the pod VM's OOM killer: the engine
         * is told as for a VM of the container's own (container_oom.h);
         * the pod's stand-in reads the guest's log for all its members. */
        if (status == 128 + SIGKILL && guest_pid && x->cgroup &&
            pod_oom_asked(conn, guest_pid) == 1 &&
            container_oom_report(x->cgroup, err, sizeof(err)))
            fprintf(stderr, "airlock-runtime: the guest's OOM kill not counted on the host: %s\n",
                    err);
        _exit(status);
    }
    int e = vm_proc_launcher_start();
    if (e) {
        snprintf(err, sizeof(err), "a thread: %s", strerror(-e));
        fail_ready(x, err);
    }
    unsigned spares = x->role == POD_SANDBOX ? POD_SPARE_DISKS : 0;
    if (container_vm_boot(x->g->root, x->cfg, x->disk, x->cgroup, x->mem, x->cpus, &spares, &sb,
                          err, sizeof(err)))
        fail_ready(x, err);
    /* The VM's folder, for exec (which dials its agent) and delete. */
    json_object_set_new(x->c->state, "vm_sock", json_string(sb.sock));
    json_object_set_new(x->c->state, "vm_pid", json_integer(sb.pid));
    json_object_set_new(x->c->state, "egress", json_boolean(container_vm_egress(x->cfg)));
    struct pod_server *pod = NULL;
    if (spares && pod_server_start(sb.dir, sb.sock, sb.control_fd, spares, &pod, err,
                                   sizeof(err))) {
        sandbox_teardown(&sb);
        fail_ready(x, err);
    }
    if (pod) {
        char ps[PATH_MAX + 16];
        snprintf(ps, sizeof(ps), "%s/%s", sb.dir, POD_SOCK);
        json_object_set_new(x->c->state, "pod_sock", json_string(ps));
    }
    if (container_save(x->c)) {
        sandbox_teardown(&sb);
        fail_ready(x, "cannot record the container's state");
    }
    /* From now on the root folder's writes (`docker cp`) reach the guest. */
    struct container_root_watch *root_watch = NULL;
    if ((e = container_root_watch_start(sb.sock, x->rootfs, &root_watch))) {
        snprintf(err, sizeof(err), "the root folder's writes cannot reach the VM: %s",
                 strerror(-e));
        sandbox_teardown(&sb);
        fail_ready(x, err);
    }
    report(x->ready_fd, "");
    close(x->ready_fd);
    struct container_ports *ports = NULL;
    uint32_t guest_pid = 0;
    int started = wait_for_start(x->c);
    if (started >= 0) {
        /* In a network namespace of its own (or its pod's), the
         * container's ports are served there as long as it runs: a
         * pod's VM's listeners are all its containers'.  With the host's
         * network, none (a guest's listeners would be the host's). */
        if (net && (e = container_ports_start(sb.sock, &sb.audit, &ports))) {
            snprintf(err, sizeof(err), "airlock-runtime: the container's ports are not served: %s\n",
                     strerror(-e));
            ssize_t w = write(2, err, strlen(err));
            (void)w;
        }
        struct standin_target t = {.sock = sb.sock, .egress = container_vm_egress(x->cfg),
                                   .guest_pid = &guest_pid, .config = x->cfg};
        status = standin_run(&t, &x->cfg->process, true, started);
    }
    /* The guest's OOM kills, told as under runc (container_oom.h): with a
     * VM of the container's own, any kill in it.  A pod's VM is its
     * members' too, whose kills are theirs: the sandbox container's (the
     * pod's pause) is only a kill of its own first process. */
    bool oom = started >= 0 && x->cgroup &&
               (pod ? status == 128 + SIGKILL && guest_pid && pod_server_oom_killed(pod, guest_pid)
                    : container_oom_in_guest(sb.sock));
    container_ports_stop(ports);
    container_root_watch_stop(root_watch);
    sandbox_teardown(&sb);
    if (oom && container_oom_report(x->cgroup, err, sizeof(err)))
        fprintf(stderr, "airlock-runtime: the guest's OOM kill not counted on the host: %s\n", err);
    _exit(status);
}

/* ---- create itself ---- */

static int parse(int argc, char **argv, struct create_args *a)
{
    static const struct option opts[] = {
        {"bundle", required_argument, NULL, 'b'},
        {"pid-file", required_argument, NULL, 'p'},
        {"console-socket", required_argument, NULL, 'c'},
        {"no-pivot", no_argument, NULL, 'n'},
        {"no-new-keyring", no_argument, NULL, 'k'},
        {"preserve-fds", required_argument, NULL, 'f'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof(*a));
    a->bundle = ".";
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long_only(argc, argv, "+b:", opts, NULL)) != -1) {
        switch (c) {
        case 'b': a->bundle = optarg; break;
        case 'p': a->pid_file = optarg; break;
        case 'c': a->console_socket = optarg; break;
        case 'n': case 'k': break;
        case 'f':
            /* fds from 3 on kept for the process: a VM cannot take host
             * fds, so only 0 is honest */
            if (strcmp(optarg, "0"))
                return runtime_usage_error("create", "--preserve-fds %s: a container in a VM "
                                           "cannot use host file descriptors", optarg);
            break;
        default:
            return runtime_usage_error("create", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return runtime_usage_error("create", "want exactly one container id");
    a->id = argv[optind];
    if (!container_id_ok(a->id))
        return runtime_usage_error("create", "invalid container id '%.200s'", a->id);
    return 0;
}

/* Reads the stand-in's verdict: 0 when ready, else -1 with its error. */
static int wait_ready(int fd, char *err, size_t cap)
{
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fd, err + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
        if (n == cap - 1)
            break;
    }
    err[n] = '\0';
    if (n == 1 && err[0] == '\0')
        return 0;
    if (!n)
        snprintf(err, cap, "the container's VM process ended before it was ready");
    return -1;
}

static json_t *new_state(const struct create_args *a, const char *bundle_real,
                         const char *rootfs, const struct oci_config *cfg)
{
    struct timespec ts;
    struct tm tm;
    char when[64], stamp[96];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(stamp, sizeof(stamp), "%s.%09ldZ", when, ts.tv_nsec);
    return json_pack("{s:s, s:s, s:s, s:s, s:O}", "id", a->id, "bundle", bundle_real, "rootfs",
                     rootfs, "created", stamp, "annotations",
                     cfg->annotations ? cfg->annotations : json_object());
}

int runtime_create(const struct runtime_globals *g, int argc, char **argv)
{
    struct create_args a;
    int rc = parse(argc, argv, &a);
    if (rc)
        return rc;
    char bundle[PATH_MAX], cfg_path[PATH_MAX + 16], rootfs[PATH_MAX * 2], err[2048];
    if (!realpath(a.bundle, bundle))
        return runtime_error("--bundle %s: %s", a.bundle, strerror(errno));
    snprintf(cfg_path, sizeof(cfg_path), "%s/config.json", bundle);
    struct oci_config cfg;
    if (oci_config_load(cfg_path, &cfg, err, sizeof(err)))
        return runtime_error("%s", err);
    unsigned mem, cpus;
    if (!cfg.has_process) {
        oci_config_free(&cfg);
        return runtime_error("config.json: process: a container needs one");
    }
    const char *sandbox_id;
    int role = pod_role_of(&cfg, &sandbox_id, err, sizeof(err));
    /* A member's limits are its pod VM's business: only its stand-ins
     * live in its cgroup, which gets the smallest VM's room. */
    if (role == POD_MEMBER)
        mem = CONTAINER_VM_MIN_MIB, cpus = 1;
    if (role < 0 ||
        (role != POD_MEMBER && container_vm_shape(&cfg, &mem, &cpus, err, sizeof(err))) ||
        (role == POD_SANDBOX && pod_vm_shape(&cfg, &mem, &cpus, err, sizeof(err))) ||
        oci_namespaces_check(&cfg, err, sizeof(err)) ||
        container_linux_check(&cfg, err, sizeof(err))) {
        oci_config_free(&cfg);
        return runtime_error("%s", err);
    }
    if (cfg.process.terminal && !a.console_socket) {
        oci_config_free(&cfg);
        return runtime_error("process.terminal is true: --console-socket is needed");
    }
    snprintf(rootfs, sizeof(rootfs), "%s%s%s", cfg.root[0] == '/' ? "" : bundle,
             cfg.root[0] == '/' ? "" : "/", cfg.root);
    struct container c;
    int e = container_make(g->root, a.id, &c);
    if (e) {
        oci_config_free(&cfg);
        return e == -EEXIST ? runtime_error("container with id %s already exists", a.id)
                            : runtime_error("%s/%s: %s", g->root, a.id, strerror(-e));
    }
    struct dir_disk disk;
    char fifo[PATH_MAX + 16], cgroup[PATH_MAX];
    int ready[2] = {-1, -1}, tty = -1;
    pid_t pid = -1;
    bool have_cgroup = false;
    c.state = new_state(&a, bundle, rootfs, &cfg);
    container_path(&c, "start", fifo, sizeof(fifo));
    rc = 1;
    if (!c.state) {
        runtime_error("out of memory");
        goto fail;
    }
    if (cfg.cgroups_path) {
        if (container_cgroup_make(cfg.cgroups_path, g->systemd_cgroup, mem, cgroup,
                                  sizeof(cgroup), err, sizeof(err))) {
            runtime_error("%s", err);
            goto fail;
        }
        have_cgroup = cgroup[0] != '\0'; /* "": no cgroup2 here */
        if (have_cgroup)
            json_object_set_new(c.state, "cgroup", json_string(cgroup));
    }
    if (root_disk_get(rootfs, &disk, err, sizeof(err))) {
        runtime_error("%s", err);
        goto fail;
    }
    if (mkfifo(fifo, 0600) < 0) {
        runtime_error("%s: %s", fifo, strerror(errno));
        goto fail;
    }
    if (cfg.process.terminal &&
        (tty = standin_console(a.console_socket, &cfg.process, err, sizeof(err))) < 0) {
        runtime_error("%s", err);
        goto fail;
    }
    if (pipe2(ready, O_CLOEXEC) < 0) {
        runtime_error("pipe: %s", strerror(errno));
        goto fail;
    }
    if (container_save(&c)) {
        runtime_error("cannot record the container's state in %s", c.dir);
        goto fail;
    }
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        close(ready[0]);
        struct standin_ctx x = {.g = g, .c = &c, .cfg = &cfg, .disk = disk.path,
                                .role = (enum pod_role)role, .sandbox_id = sandbox_id,
                                .mem = mem, .cpus = cpus,
                                .ready_fd = ready[1], .tty = tty,
                                .cgroup = have_cgroup ? cgroup : NULL, .rootfs = rootfs};
        init_standin(&x);
    }
    close(ready[1]);
    ready[1] = -1;
    if (tty >= 0)
        close(tty);
    tty = -1;
    if (pid < 0) {
        runtime_error("fork: %s", strerror(errno));
        goto fail;
    }
    if (wait_ready(ready[0], err, sizeof(err))) {
        runtime_error("%s", err);
        goto fail;
    }
    /* The VM booted: now its cpu limit (a small quota would have starved
     * the boot itself). */
    if (have_cgroup && container_cgroup_update(cgroup, &cfg, err, sizeof(err))) {
        runtime_error("%s", err);
        goto fail;
    }
    /* The stand-in recorded its VM; add itself as the container's pid. */
    container_close(&c);
    struct container again;
    if (container_open(g->root, a.id, &again) || !again.state) {
        runtime_error("the container's state went away");
        goto fail;
    }
    c = again;
    json_object_set_new(c.state, "pid", json_integer(pid));
    json_object_set_new(c.state, "pid_start", json_integer((json_int_t)proc_start_time(pid)));
    c.pid = pid;
    c.pid_start = proc_start_time(pid);
    if (container_save(&c)) {
        runtime_error("cannot record the container's state in %s", c.dir);
        goto fail;
    }
    json_t *st = container_state_json(&c);
    static const enum oci_hook_kind create_hooks[] = {OCI_HOOK_PRESTART, OCI_HOOK_CREATE_RUNTIME,
                                                      OCI_HOOK_CREATE_CONTAINER};
    for (size_t i = 0; i < 3 && !err[0]; i++)
        if (hooks_run(&cfg, create_hooks[i], st, err, sizeof(err)) == 0)
            err[0] = '\0';
    json_decref(st);
    if (err[0]) {
        runtime_error("%s", err);
        goto fail;
    }
    if (a.pid_file && (e = pid_file_write(a.pid_file, pid))) {
        runtime_error("--pid-file %s: %s", a.pid_file, strerror(-e));
        goto fail;
    }
    close(ready[0]);
    container_close(&c);
    oci_config_free(&cfg);
    return 0;
fail:
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        struct container recorded; /* the stand-in may have recorded its VM */
        if (!container_open(g->root, a.id, &recorded)) {
            container_vm_forget(recorded.state);
            container_close(&recorded);
        }
    }
    if (ready[0] >= 0)
        close(ready[0]);
    if (ready[1] >= 0)
        close(ready[1]);
    if (tty >= 0)
        close(tty);
    if (have_cgroup)
        container_cgroup_remove(cgroup);
    container_remove(&c);
    container_close(&c);
    oci_config_free(&cfg);
    return rc;
}
