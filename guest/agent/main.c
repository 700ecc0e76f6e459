/* airlock's guest agent: PID 1 of the images.  As PID 1 it first moves
 * to an imported image's disk when the command line names one
 * (switch_root.c), then mounts the
 * kernel filesystems and reaps every orphan; then (in any mode) it listens
 * for the host — AF_VSOCK port AGENT_VSOCK_PORT in the VM, or a Unix
 * socket with --listen-unix PATH for host-side tests, where it skips the
 * mounts — and serves each connection in its own forked process.  As PID 1
 * it also brings up `lo` and starts the egress proxy (proxy.c).
 *
 *   agent [--listen-unix PATH | --listen-vsock PORT]
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "vmm/memory/layout.h"
#include "devices/boot_timer.h"
#include "guest/agent/agent.h"

static void log_msg(const char *what, int err)
{
    fprintf(stderr, "airlock-agent: %s: %s\n", what, strerror(err));
}

/* PID 1 must never exit (the kernel panics); a fatal error resets the
 * machine instead, which airlock sees as "guest finished" (reboot=k). */
static void fatal(const char *what, int err)
{
    log_msg(what, err);
    if (getpid() == 1) {
        sync();
        reboot(RB_AUTOBOOT);
        for (;;)
            pause();
    }
    exit(1);
}

/* The same mounts as guest/init; an already-mounted target (devtmpfs
 * automounted on a disk root) is fine. */
static void mount_all(void)
{
    static const struct {
        const char *src, *dir, *type, *opts;
        unsigned long flags;
    } m[] = {
        {"proc", "/proc", "proc", NULL, MS_NOSUID | MS_NODEV | MS_NOEXEC},
        {"sysfs", "/sys", "sysfs", NULL, MS_NOSUID | MS_NODEV | MS_NOEXEC},
        {"devtmpfs", "/dev", "devtmpfs", "mode=0755", MS_NOSUID},
        {"tmpfs", "/tmp", "tmpfs", "mode=1777", MS_NOSUID | MS_NODEV},
        {"devpts", "/dev/pts", "devpts", "newinstance,ptmxmode=0666,mode=0620",
         MS_NOSUID | MS_NOEXEC},
        {"tmpfs", "/dev/shm", "tmpfs", "mode=1777", MS_NOSUID | MS_NODEV},
    };
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
        mkdir(m[i].dir, 0755);
        if (mount(m[i].src, m[i].dir, m[i].type, m[i].flags, m[i].opts) && errno != EBUSY)
            log_msg(m[i].dir, errno);
    }
    int e = agent_dev_links();
    if (e)
        log_msg("/dev links", e);
}

/* fds 0-2 may be closed when the kernel found no /dev/console; a pipe
 * created later must not land there and be mistaken for stdio. */
static void ensure_stdio(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        int n = open("/dev/console", O_RDWR | O_NOCTTY);
        if (n < 0)
            n = open("/dev/null", O_RDWR);
        if (n >= 0 && n != fd) {
            dup2(n, fd);
            close(n);
        }
    }
}

/* Reaps every child that has exited: connection handlers and, as PID 1,
 * every orphan the kernel hands us. */
static void on_sigchld(int sig)
{
    (void)sig;
    int saved = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    errno = saved;
}

static int listen_unix(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(a.sun_path))
        return -ENAMETOOLONG;
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    unlink(path);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || chmod(path, 0600) || listen(fd, 16)) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static int listen_vsock(unsigned port)
{
    struct sockaddr_vm a = {.svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY, .svm_port = port};
    int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 16)) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static void serve_forever(int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EINTR && errno != ECONNABORTED)
                log_msg("accept", errno);
            continue;
        }
        pid_t pid = fork();
        if (pid == 0) {
            /* The handler waits for its own commands by pid. */
            signal(SIGCHLD, SIG_DFL);
            close(lfd);
            agent_serve(fd);
            _exit(0);
        }
        if (pid < 0)
            log_msg("fork", errno);
        close(fd);
    }
}

/* A memory hog in the guest must not take the agent with it: PID 1 dying
 * panics the guest and the command's status would be lost.  Children set
 * their own score back (exec.c). */
static void shield_from_oom(void)
{
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "-1000", 5) != 5)
        log_msg("oom_score_adj", errno);
    if (fd >= 0)
        close(fd);
}

/* One byte to airlock's boot timer (devices/boot_timer.h): how the host
 * learns, at the cost of one exit, that userspace runs and when to send
 * the first request.  Only PID 1 marks; under another monitor (QEMU) the
 * port is unclaimed and the write goes nowhere.  The port is given up
 * again at once: forked children (the proxy, commands) inherit ioperm. */
static void boot_timer_mark(enum boot_timer_mark what)
{
    if (getpid() != 1 || ioperm(LAYOUT_BOOT_TIMER_PORT, 1, 1))
        return; /* a kernel without ioperm: no timings, nothing else lost */
    outb((unsigned char)what, LAYOUT_BOOT_TIMER_PORT);
    ioperm(LAYOUT_BOOT_TIMER_PORT, 1, 0);
}

static void usage(void)
{
    fprintf(stderr, "usage: agent [--listen-unix PATH | --listen-vsock PORT]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    boot_timer_mark(BOOT_TIMER_USERSPACE);
    const char *unix_path = NULL;
    unsigned port = AGENT_VSOCK_PORT;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--listen-unix") && i + 1 < argc) {
            unix_path = argv[++i];
        } else if (!strcmp(argv[i], "--listen-vsock") && i + 1 < argc) {
            char *end;
            unsigned long p = strtoul(argv[++i], &end, 10);
            if (*end || p == 0 || p > 0xffffffffUL)
                usage();
            port = (unsigned)p;
        } else if (getpid() != 1) {
            /* The kernel passes its unknown command-line words to PID 1. */
            usage();
        }
    }
    if (getpid() == 1 && !unix_path) {
        int rc = agent_switch_root();
        if (rc < 0)
            fatal("airlock.root", -rc);
        mount_all();
        shield_from_oom();
    }
    ensure_stdio();
    if (getpid() == 1 && !unix_path) {
        /* Egress and forwards are optional on both ends: without INET
         * in the kernel there is no relay, and without a host listener
         * the proxy answers 502.  Started before the listener exists,
         * so the relay has no fd of the agent's. */
        int rc = agent_lo_up();
        if (rc == 0)
            rc = agent_relay_start();
        if (rc < 0)
            log_msg("relay (egress, forwards)", -rc);
    }
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_sigchld, .sa_flags = SA_RESTART | SA_NOCLDSTOP};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    int lfd = unix_path ? listen_unix(unix_path) : listen_vsock(port);
    if (lfd < 0)
        fatal(unix_path ? unix_path : "vsock listen", -lfd);
    /* The mark first: the line below costs an exit per byte on the UART. */
    if (!unix_path)
        boot_timer_mark(BOOT_TIMER_AGENT_READY);
    fprintf(stderr, "airlock-agent: listening on %s\n", unix_path ? unix_path : "vsock");
    serve_forever(lfd);
}
