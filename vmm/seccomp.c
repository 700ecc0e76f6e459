/* The per-thread-kind seccomp allowlists; see seccomp.h.  Built with
 * libseccomp, which resolves syscall numbers for the running arch and adds
 * the architecture check every filter needs. */
#include "vmm/seccomp.h"
#include "vmm/surface.h"

#include <errno.h>
#include <linux/kvm.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_IOCTLS 4

struct allow {
    const char *name;                  /* syscall name, resolved by libseccomp */
    const char *why;                   /* one line, for `airlock surface` */
    unsigned long ioctls[MAX_IOCTLS];  /* ioctl only: the request numbers allowed */
    const char *arg0_is;               /* when set: the first argument must equal arg0 */
    unsigned long arg0;
};

#define ONLY_AF_UNIX .arg0_is = "AF_UNIX", .arg0 = AF_UNIX

/* Memory and threads: what malloc, the C library's locks and thread exit
 * need on every thread. */
#define COMMON                                                                   \
    {.name = "futex", .why = "locks and condition variables (device state, the VM's stop)"},   \
    {.name = "mmap", .why = "malloc of large blocks"},                                          \
    {.name = "munmap", .why = "free of large blocks"},                                          \
    {.name = "brk", .why = "malloc's heap"},                                                    \
    {.name = "madvise", .why = "the C library returns a dead thread's stack"},                  \
    {.name = "rt_sigreturn", .why = "return from the SIGUSR1 that kicks a vCPU out of KVM_RUN"}, \
    {.name = "rt_sigprocmask", .why = "the C library masks signals around thread exit"},        \
    {.name = "exit", .why = "a thread ends"},                                                   \
    {.name = "exit_group", .why = "the process ends"},                                          \
    {.name = "getpid", .why = "pthread_kill: which process to signal"},                         \
    {.name = "gettid", .why = "pthread_kill"},                                                  \
    {.name = "tgkill", .why = "kick vCPU threads when the VM stops"},                           \
    {.name = "clock_gettime", .why = "timestamps (the vDSO's fallback)"},                       \
    {.name = "write", .why = "console output, eventfd signals, the status pipe, errors, audit"}, \
    {.name = "close", .why = "a device reset or a finished connection closes its fds"}

static const struct allow vcpu_allow[] = {
    COMMON,
    {.name = "ioctl", .why = "KVM_RUN on its vCPU; KVM_GET_REGS for a crash diagnosis; KVM_IRQ_LINE for the UART", .ioctls = {KVM_RUN, KVM_GET_REGS, KVM_IRQ_LINE}},
    {.name = "epoll_ctl", .why = "a virtio device reset stops watching its connection fds"},
    {.name = "read", .why = "eventfd counters"},
};

static const struct allow loop_allow[] = {
    COMMON,
    {.name = "ioctl", .why = "KVM_IRQ_LINE: the UART's interrupt after console input", .ioctls = {KVM_IRQ_LINE}},
    {.name = "epoll_wait", .why = "the event loop"},
    {.name = "epoll_pwait", .why = "the event loop (the C library's epoll_wait)"},
    {.name = "epoll_ctl", .why = "(un)watch vsock connections and clients"},
    {.name = "read", .why = "console input, eventfds, signalfd, host vsock clients"},
    {.name = "preadv", .why = "virtio-blk reads"},
    {.name = "pwritev", .why = "virtio-blk writes (the image, or its cow overlay)"},
    {.name = "fdatasync", .why = "virtio-blk FLUSH"},
    {.name = "fallocate", .why = "virtio-blk DISCARD / WRITE_ZEROES"},
    {.name = "recvfrom", .why = "vsock: bytes from host sockets"},
    {.name = "sendto", .why = "vsock: bytes to host sockets (MSG_NOSIGNAL)"},
    {.name = "accept4", .why = "--vsock-uds clients"},
    {.name = "socket", .why = "a guest connects to CID 2 port P: the Unix socket PATH_P", ONLY_AF_UNIX},
    {.name = "connect", .why = "... to PATH_P"},
    {.name = "recvmsg", .why = "jailed: PATH_P's socket, connected by airlock's parent outside the jail"},
    {.name = "socketpair", .why = "a guest egress connection gets a thread", ONLY_AF_UNIX},
    {.name = "fcntl", .why = "O_NONBLOCK on new sockets"},
    {.name = "unlink", .why = "remove the --vsock-uds socket file at exit"},
    {.name = "shutdown", .why = "vsock: the guest's SHUTDOWN passes on to the host socket"},
    {.name = "dup2", .why = "after reporting the status, stdio becomes /dev/null (opened earlier)"},
};

static const struct allow worker_allow[] = {
    COMMON,
    {.name = "read", .why = "the agent's replies, our stdin (-i), files to copy in"},
    {.name = "recvfrom", .why = "the agent's replies, egress bytes"},
    {.name = "sendto", .why = "requests to the agent, egress bytes (MSG_NOSIGNAL)"},
    {.name = "recvmsg", .why = "the egress broker's verdict and socket (SCM_RIGHTS)"},
    {.name = "sendmsg", .why = "questions to the egress broker"},
    {.name = "socketpair", .why = "one per agent connection or broker request", ONLY_AF_UNIX},
    {.name = "poll", .why = "waiting on the agent, the broker, relays"},
    {.name = "ppoll", .why = "the C library's poll"},
    {.name = "fcntl", .why = "O_NONBLOCK on new sockets"},
    {.name = "shutdown", .why = "egress half-close"},
    {.name = "ftruncate", .why = "a file to copy out starts empty"},
    {.name = "clock_nanosleep", .why = "waiting for the agent to listen"},
    {.name = "nanosleep", .why = "waiting for the agent to listen (older C libraries)"},
    {.name = "epoll_ctl", .why = "connecting to the agent registers the connection with the loop"},
    {.name = "clone", .why = "the egress dispatcher starts a thread per connection"},
    {.name = "clone3", .why = "... (newer C libraries)"},
    {.name = "mprotect", .why = "guard pages of new thread stacks"},
    {.name = "set_robust_list", .why = "new threads"},
    {.name = "rseq", .why = "new threads (glibc registers restartable sequences)"},
};

static const struct {
    const char *name;
    const struct allow *list;
    unsigned n;
} kinds[SECCOMP_KINDS] = {
    [SECCOMP_VCPU] = {"vcpu", vcpu_allow, sizeof(vcpu_allow) / sizeof(vcpu_allow[0])},
    [SECCOMP_LOOP] = {"loop", loop_allow, sizeof(loop_allow) / sizeof(loop_allow[0])},
    [SECCOMP_WORKER] = {"worker", worker_allow, sizeof(worker_allow) / sizeof(worker_allow[0])},
};

static enum seccomp_mode mode = SECCOMP_MODE_KILL;

static void on_sigsys(int sig, siginfo_t *si, void *uc);

/* The SIGSYS handler goes in here, once, while no filter forbids
 * rt_sigaction. */
void seccomp_set_mode(enum seccomp_mode m)
{
    mode = m;
    if (m == SECCOMP_MODE_TRAP) {
        struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSYS, &sa, NULL);
    }
}
enum seccomp_mode seccomp_get_mode(void) { return mode; }

int seccomp_parse_mode(const char *s, enum seccomp_mode *m)
{
    static const char *const names[] = {"kill", "trap", "off"};
    for (unsigned i = 0; i < 3; i++)
        if (!strcmp(s, names[i]))
            return *m = (enum seccomp_mode)i, 0;
    return -EINVAL;
}

unsigned seccomp_count(enum seccomp_kind k) { return kinds[k].n; }
const char *seccomp_kind_name(enum seccomp_kind k) { return kinds[k].name; }

/* --seccomp trap: say which syscall, then end as airlock's own error.  Only
 * async-signal-safe calls here. */
static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    char msg[128], num[12];
    int nr = si->si_syscall, i = sizeof(num);
    unsigned v = nr < 0 ? 0u : (unsigned)nr;
    num[--i] = 0;
    do
        num[--i] = (char)('0' + v % 10);
    while ((v /= 10) && i > 0);
    char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
    size_t n = 0;
    const char *parts[] = {"airlock: seccomp: forbidden syscall ", name ? name : "?", " (", num + i,
                           ")\n"};
    for (unsigned p = 0; p < 5; p++)
        for (const char *c = parts[p]; *c && n < sizeof(msg); c++)
            msg[n++] = *c;
    (void)!write(STDERR_FILENO, msg, n);
    _exit(125);
}

static int add_rule(scmp_filter_ctx ctx, const struct allow *a)
{
    int nr = seccomp_syscall_resolve_name(a->name);
    if (nr == __NR_SCMP_ERROR)
        return 0; /* not on this arch (e.g. clone3 on an old kernel header): nothing to allow */
    if (a->ioctls[0]) {
        for (unsigned i = 0; i < MAX_IOCTLS && a->ioctls[i]; i++) {
            int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
                                      SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)(uint32_t)a->ioctls[i]));
            if (rc)
                return rc;
        }
        return 0;
    }
    if (a->arg0_is)
        return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, a->arg0));
    return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
}

int seccomp_apply(enum seccomp_kind kind)
{
    if (mode == SECCOMP_MODE_OFF)
        return 0;
    scmp_filter_ctx ctx = seccomp_init(mode == SECCOMP_MODE_TRAP ? SCMP_ACT_TRAP : SCMP_ACT_KILL_PROCESS);
    if (!ctx)
        return -ENOMEM;
    int rc = 0;
    for (unsigned i = 0; i < kinds[kind].n && !rc; i++)
        rc = add_rule(ctx, &kinds[kind].list[i]);
    /* NO_NEW_PRIVS: libseccomp sets it (SCMP_FLTATR_CTL_NNP defaults on). */
    if (!rc)
        rc = seccomp_load(ctx);
    seccomp_release(ctx);
    return rc;
}

static const char *ioctl_name(unsigned long nr)
{
    switch (nr) {
    case KVM_RUN: return "KVM_RUN";
    case KVM_GET_REGS: return "KVM_GET_REGS";
    case KVM_IRQ_LINE: return "KVM_IRQ_LINE";
    default: return "?";
    }
}

/* The allowlists for `airlock surface` (vmm/surface.h): each reason with
 * its argument filter spelled out. */
const struct surface_seccomp_list *surface_seccomp(unsigned *n)
{
    static struct surface_syscall calls[SECCOMP_KINDS][64];
    static char text[SECCOMP_KINDS][64][200];
    static struct surface_seccomp_list lists[SECCOMP_KINDS];
    for (unsigned k = 0; k < SECCOMP_KINDS; k++) {
        unsigned m = kinds[k].n < 64 ? kinds[k].n : 64;
        for (unsigned i = 0; i < m; i++) {
            const struct allow *a = &kinds[k].list[i];
            size_t len = (size_t)snprintf(text[k][i], sizeof(text[k][i]), "%s", a->why);
            for (unsigned j = 0; j < MAX_IOCTLS && a->ioctls[j] && len < sizeof(text[k][i]); j++)
                len += (size_t)snprintf(text[k][i] + len, sizeof(text[k][i]) - len, "%s%s",
                                        j ? "," : " [only ", ioctl_name(a->ioctls[j]));
            if (a->ioctls[0] && len < sizeof(text[k][i]))
                snprintf(text[k][i] + len, sizeof(text[k][i]) - len, "]");
            if (a->arg0_is && len < sizeof(text[k][i]))
                snprintf(text[k][i] + len, sizeof(text[k][i]) - len, " [only %s]", a->arg0_is);
            calls[k][i] = (struct surface_syscall){.name = a->name, .reason = text[k][i]};
        }
        lists[k] = (struct surface_seccomp_list){.thread = kinds[k].name, .calls = calls[k],
                                                 .ncalls = m};
    }
    *n = SECCOMP_KINDS;
    return lists;
}
