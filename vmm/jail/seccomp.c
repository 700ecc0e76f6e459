/* The per-thread-kind seccomp allowlists; see seccomp.h.  Built with
 * libseccomp, which resolves syscall numbers for the running arch and adds
 * the architecture check every filter needs. */
#include "vmm/jail/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_IOCTLS 14
#define SECCOMP_LIST_MAX 128 /* calls of one list `airlock surface` prints */
#define MAX_SOCKETS 6
#define SOCK_TYPE_MASK 0xf /* the type without SOCK_NONBLOCK / SOCK_CLOEXEC */
/* open(2) flags that could create, truncate or write a file */
#define OPEN_WRITE_FLAGS (O_ACCMODE | O_CREAT | O_TRUNC)

/* socket(2): one (domain, type, protocol) allowed; protocol -1 = any.
 * fail_errno != 0: the call fails with it instead of killing (a library
 * that tries an optional socket and does without). */
struct sock_kind {
    int domain, type, protocol, fail_errno;
};

struct allow {
    const char *name;                  /* syscall name, resolved by libseccomp */
    const char *why;                   /* one line, for `airlock surface` */
    unsigned long ioctls[MAX_IOCTLS];  /* ioctl only: the request numbers allowed */
    const char *arg_is;                /* when set: argument arg_n must equal arg */
    unsigned arg_n;
    unsigned long arg;
    struct sock_kind sockets[MAX_SOCKETS]; /* socket only: the kinds allowed */
    bool read_only;                    /* openat only: no OPEN_WRITE_FLAGS */
    bool arg_has;                      /* with arg_is: the bits of arg set in argument arg_n (others free) */
    int fail_errno;                    /* != 0: the call fails with it, never runs */
};

#define ONLY_AF_UNIX .arg_is = "AF_UNIX", .arg_n = 0, .arg = AF_UNIX

/* A timed wait (poll, nanosleep, a futex) that a stop signal or the cgroup
 * freezer interrupted goes on through restart_syscall(2): without it,
 * SIGSTOP/SIGCONT or `airlock-runtime pause`/`resume` killed the process
 * (SIGSYS), the waiting parent's too (seen in the lab: restart_syscall
 * after a freeze and thaw).  It only resumes a call the filter already
 * allowed. */
#define RESTART                                                                  \
    {.name = "restart_syscall", .why = "a timed wait a stop signal or the cgroup freezer interrupted goes on"}

/* Memory and threads: what malloc, the C library's locks and thread exit
 * need on every thread. */
#define COMMON                                                                   \
    RESTART,                                                                     \
    {.name = "futex", .why = "locks and condition variables (device state, the VM's stop)"},   \
    {.name = "mmap", .why = "malloc of large blocks; on the loop, virtio-blk maps a disk's unchanging pages into guest RAM"}, \
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
    {.name = "splice", .why = "the command's output from the agent's socket into our stdout pipe; our stdin into the agent's socket"},
    {.name = "pipe2", .why = "a private pipe per command that carries our stdin into the agent's socket (splice)"},
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
    {.name = "accept4", .why = "run -p: clients of the published ports"},
    {.name = "eventfd2", .why = "run -p: the forwarder's wake-up"},
    {.name = "set_robust_list", .why = "new threads"},
    {.name = "rseq", .why = "new threads (glibc registers restartable sequences)"},
};

/* The egress broker (vmm/egress/egress_broker.c): a process of its own, outside
 * the jail, so its list is not the monitor's COMMON one.  What glibc's
 * getaddrinfo does with nsswitch's built-in "files" and "dns" sources was
 * read off `strace -f` (config files, UDP to the nameserver, netlink and
 * a UDP connect per address to sort several answers, RFC 3484).  The
 * Unix-socket daemons a resolver may try (nscd, and the daemons behind
 * NSS modules such as mdns or resolve) get EACCES: the broker runs as the
 * caller, outside the jail, and must not reach every Unix socket on the
 * host; the resolver goes on without them. */
static const struct allow broker_allow[] = {
    RESTART,
    {.name = "futex", .why = "locks (malloc, the resolver's one-time set-up)"},
    {.name = "mmap", .why = "malloc of large blocks, thread stacks"},
    {.name = "munmap", .why = "free of large blocks"},
    {.name = "mprotect", .why = "guard pages of thread stacks, malloc's per-thread arenas"},
    {.name = "brk", .why = "malloc's heap"},
    {.name = "madvise", .why = "the C library returns a finished thread's stack"},
    {.name = "getrandom", .why = "malloc seeds its heap-pointer hardening"},
    {.name = "rt_sigprocmask", .why = "the C library masks signals around thread start and exit"},
    {.name = "rt_sigaction", .why = "the first pthread_create installs the C library's own signal handler"},
    {.name = "clone", .why = "a thread per request (older C libraries)"},
    {.name = "clone3", .why = "a thread per request"},
    {.name = "set_robust_list", .why = "new threads"},
    {.name = "rseq", .why = "new threads (glibc registers restartable sequences)"},
    {.name = "exit", .why = "a request's thread ends"},
    {.name = "exit_group", .why = "the VM side is gone: the broker ends"},
    {.name = "recvmsg", .why = "requests and their channels (SCM_RIGHTS); netlink answers; a sandbox's new allowlist"},
    {.name = "sendmsg", .why = "the verdict and the connected socket (SCM_RIGHTS)"},
    {.name = "close", .why = "a finished request's channel and socket; resolver files and sockets"},
    {.name = "socket", .why = "TCP to the allowed address; UDP to the nameserver and to sort answers; netlink: the host's addresses, to sort answers",
     .sockets = {{AF_INET, SOCK_STREAM, -1}, {AF_INET6, SOCK_STREAM, -1},
                 {AF_INET, SOCK_DGRAM, -1}, {AF_INET6, SOCK_DGRAM, -1},
                 {AF_NETLINK, SOCK_RAW, NETLINK_ROUTE},
                 {AF_UNIX, SOCK_STREAM, -1, EACCES}}},
    {.name = "connect", .why = "the allowed address (bounded); the nameserver; a UDP probe per answer (no packet)"},
    {.name = "poll", .why = "the connect's 10 s bound; the resolver waits for answers"},
    {.name = "getsockopt", .why = "SO_ERROR: how the connect ended"},
    {.name = "fcntl", .why = "the connected socket goes back to blocking; a sandbox's: the copy of it kept to cut it"},
    {.name = "shutdown", .why = "a sandbox's allowlist changed: an open connection it no longer admits is cut"},
    {.name = "setsockopt", .why = "the resolver asks for ICMP errors (IP_RECVERR)"},
    {.name = "sendmmsg", .why = "the resolver's A and AAAA queries at once"},
    {.name = "sendto", .why = "a resolver query resent; the netlink request; the answer to a new allowlist"},
    {.name = "recvfrom", .why = "the nameserver's answers"},
    {.name = "ioctl", .why = "the resolver sizes an answer", .ioctls = {FIONREAD}},
    {.name = "bind", .why = "the netlink socket"},
    {.name = "getsockname", .why = "the netlink socket; the source address per answer (RFC 3484 sort)"},
    {.name = "openat", .why = "/etc/hosts, resolv.conf, nsswitch.conf, host.conf, gai.conf", .read_only = true},
    {.name = "newfstatat", .why = "the resolver notices a changed resolv.conf or nsswitch.conf"},
    {.name = "read", .why = "those files"},
    {.name = "lseek", .why = "/etc/hosts is read from its start"},
    {.name = "uname", .why = "the resolver's default domain"},
    {.name = "clock_gettime", .why = "resolver timeouts (the vDSO's fallback)"},
    /* The credential proxy (vmm/egress/credential_proxy.c), only with --secret. */
    {.name = "socketpair", .why = "credential proxy: the VM side's end of a credential connection", ONLY_AF_UNIX},
    {.name = "write", .why = "credential proxy: TLS records to the guest and the upstream; its audit records"},
    {.name = "getpid", .why = "credential proxy: OpenSSL's random generator notices a fork"},
#if defined(__SANITIZE_ADDRESS__)
    /* Only in the unit tests' ASan build, where the broker runs too. */
    {.name = "gettid", .why = "ASan's thread start (sanitizer builds only)"},
    {.name = "sched_getaffinity", .why = "ASan's thread start (sanitizer builds only)"},
    {.name = "sigaltstack", .why = "ASan's per-thread signal stack (sanitizer builds only)"},
#endif
};

/* The parent detach_start() leaves behind (vmm/jail/detach.c): it waits for the
 * VM process's status, forwards signals, dials --vsock-uds sockets for a
 * jailed VM process, names its complete --copy-out files (vmm/cli/run_copy.c)
 * and cleans up after it (vmm/jail/jail.c parent_done). */
#define DETACH                                                                                  \
    RESTART,                                                                                    \
    {.name = "poll", .why = "waits for the status byte, signals, the jailed child's dial requests"}, \
    {.name = "read", .why = "the status byte; signalfd"},                                          \
    {.name = "kill", .why = "SIGINT/SIGTERM/SIGHUP go on to the VM process"},                       \
    {.name = "wait4", .why = "the VM process ended before reporting"},                             \
    {.name = "exit_group", .why = "exit with the VM's status"},                                    \
    {.name = "recvmsg", .why = "a jailed child's dial request"},                                   \
    {.name = "sendmsg", .why = "... answered with the socket (SCM_RIGHTS)"},                       \
    {.name = "socket", .why = "--vsock-uds: dials PATH_P for the jailed child", ONLY_AF_UNIX},     \
    {.name = "connect", .why = "... to PATH_P"},                                                   \
    {.name = "close", .why = "our copy of a dialed socket"},                                       \
    {.name = "unlink", .why = "removes the --vsock-uds socket file at the end; an unfinished --copy-out"}, \
    {.name = "linkat", .why = "a complete --copy-out's unnamed file gets a hidden name (vmm/cli/run_copy.c)"}, \
    {.name = "rename", .why = "... which then replaces HOST whole"},                               \
    {.name = "setns", .why = "back to our PID namespace before forking the cgroup remover",       \
     .arg_is = "CLONE_NEWPID", .arg_n = 1, .arg = CLONE_NEWPID},                                   \
    {.name = "newfstatat", .why = "does the VM's cgroup directory exist"},                         \
    {.name = "rmdir", .why = "removes the VM's cgroup directory"},                                 \
    {.name = "clone", .why = "fork: a helper removes the cgroup once the VM process is gone"},     \
    {.name = "set_robust_list", .why = "the C library's fork, in that helper"},                    \
    {.name = "close_range", .why = "the helper holds none of our fds"},                            \
    {.name = "clock_nanosleep", .why = "the helper waits for the cgroup to empty"},                \
    {.name = "nanosleep", .why = "... (older C libraries)"},                                    \
    {.name = "ioctl", .why = "run -t: the caller's terminal size on SIGWINCH, and its mode back at the end (glibc's tcsetattr reads it back)", \
     .ioctls = {TIOCGWINSZ, TCSETS, TCGETS}}

static const struct allow detach_allow[] = {
    DETACH,
    {.name = "write", .why = "one line when the VM process was killed by its own filter; run -t: a new terminal size to the VM process"},
#if defined(__SANITIZE_ADDRESS__)
    /* Only in the unit tests' ASan build, whose fork interceptor and exit
     * path allocate (the production parent never does after its filter). */
    {.name = "mmap", .why = "ASan's allocator around fork (sanitizer builds only)"},
    {.name = "munmap", .why = "ASan's allocator (sanitizer builds only)"},
    {.name = "sigaltstack", .why = "ASan's exit path (sanitizer builds only)"},
#endif
};

/* The same parent when the run has a --copy-out, which may turn out to be
 * a folder: the VM process wrote its tar into an unnamed file beside HOST,
 * and this parent, outside the jail, reads it with libarchive and
 * vmm/sandbox/tar_in.c's checks and makes the tree in a hidden staging folder
 * there, every path beneath it (vmm/cli/run_copy_tree.c).  It is what a tar
 * extraction needs, and no more: no exec, no network but the AF_UNIX
 * dials above, no ioctl but run -t's two on the caller's terminal. */
static const struct allow copyout_allow[] = {
    DETACH,
    {.name = "write", .why = "one line when the VM process was killed by its own filter; a folder copy-out's file data; run -t: a new terminal size to the VM process"},
    {.name = "brk", .why = "malloc: libarchive's reader, the folders whose modes are set last"},
    {.name = "mmap", .why = "malloc of large blocks"},
    {.name = "munmap", .why = "free of large blocks"},
    {.name = "mremap", .why = "realloc of large blocks"},
    {.name = "pread64", .why = "a folder copy-out's tar, from the unnamed file the VM process wrote"},
    {.name = "mkdirat", .why = "the hidden staging folder beside HOST, and the tar's folders in it"},
    {.name = "openat2", .why = "each member's folder and file beneath the staging folder (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS: no '..' or link leads out)"},
    {.name = "symlinkat", .why = "the tar's symlinks, made as links, never followed"},
    {.name = "fchmod", .why = "each file's and folder's permission bits, as the guest had them"},
    {.name = "renameat2", .why = "the complete folder becomes HOST, never replacing anything",
     .arg_is = "RENAME_NOREPLACE", .arg_n = 4, .arg = RENAME_NOREPLACE},
    {.name = "openat", .why = "removing an unfinished staging folder: its folders opened to be read", .read_only = true},
    {.name = "getdents64", .why = "... and read"},
    {.name = "fcntl", .why = "... (the C library's fdopendir: F_GETFL, F_SETFD)"},
#if defined(__SANITIZE_ADDRESS__)
    {.name = "sigaltstack", .why = "ASan's exit path (sanitizer builds only)"},
#endif
};

/* `airlock snapshot`'s thread, and sandbox-vm's control thread, which
 * saves a running sandbox on the daemon's request: each reads state,
 * never sets it. */
static const struct allow snapshot_allow[] = {
    COMMON,
    {.name = "ioctl", .why = "KVM_GET_*: vCPU registers, XSAVE, XCRs, LAPIC, MP state, events, "
                             "debug registers, MSRs (and KVM's list of them), the CPUID it gives, irqchip, PIT, clock",
     .ioctls = {KVM_GET_REGS, KVM_GET_SREGS, KVM_GET_XSAVE, KVM_GET_XCRS, KVM_GET_LAPIC,
                KVM_GET_MP_STATE, KVM_GET_VCPU_EVENTS, KVM_GET_DEBUGREGS, KVM_GET_MSRS,
                KVM_GET_MSR_INDEX_LIST, KVM_GET_SUPPORTED_CPUID, KVM_GET_IRQCHIP, KVM_GET_PIT2,
                KVM_GET_CLOCK}},
    {.name = "poll", .why = "waiting for the agent's ready mark"},
    {.name = "ppoll", .why = "the C library's poll"},
    {.name = "recvmsg", .why = "sandbox-vm: the daemon's snapshot request and its files (SCM_RIGHTS)"},
    {.name = "sendto", .why = "sandbox-vm: the answer to it"},
    {.name = "preadv", .why = "a cow disk's overlay clusters, into its snapshot file"},
    {.name = "pwrite64", .why = "the memory file: non-zero runs at their offsets, the gaps stay holes"},
    {.name = "ftruncate", .why = "the memory file is as long as guest RAM"},
    {.name = "fstat", .why = "the memory file must start empty; a container disk's files (DISK-FILL) are checked"},
    {.name = "newfstatat", .why = "... (the C library's fstat)"},
    {.name = "fcntl", .why = "DISK-FILL: how the daemon opened the base (read-only) and the overlay (read-write)",
     .arg_is = "F_GETFL", .arg_n = 1, .arg = F_GETFL},
    {.name = "read", .why = "DISK-FILL/EMPTY: the InterruptACK eventfds, taken before the configuration-change interrupt"},
};

/* `airlock serve`, every thread of it, from the moment it has started
 * (vmm/jail/daemon_lock.h): read off `strace -f` of the daemon through
 * tests/sandbox/api-tests and the lab's linux-sandbox, linux-pause,
 * linux-volumes and linux-ports, then run with the filter on by those and
 * linux-e2b.  What it no longer does itself: fork or exec (its spawner
 * does, vmm/util/spawner.h), bind the API's listeners, open /dev/kvm,
 * mount, ptrace, change ids or load anything.  Its work is HTTP on sockets, files in its state, cache and run
 * folders, Unix sockets to its VMs' agents, and /proc figures. */
static const struct allow daemon_allow[] = {
    RESTART,
    /* memory and threads: a thread per client connection, command, pause */
    {.name = "futex", .why = "locks and condition variables between connection threads"},
    {.name = "mmap", .why = "malloc of large blocks, thread stacks"},
    {.name = "munmap", .why = "free of large blocks, thread stacks"},
    {.name = "mremap", .why = "realloc of large blocks (a request's body, a response)"},
    {.name = "mprotect", .why = "guard pages of thread stacks, malloc's per-thread arenas"},
    {.name = "brk", .why = "malloc's heap"},
    {.name = "madvise", .why = "the C library returns a finished thread's stack"},
    {.name = "clone", .why = "a thread per client connection, command, pause; never a process",
     .arg_is = "CLONE_THREAD", .arg_n = 0, .arg = CLONE_THREAD, .arg_has = true},
    {.name = "clone3", .why = "its flags are out of a filter's sight: ENOSYS, and the C library's pthread_create falls back to clone", .fail_errno = ENOSYS},
    {.name = "set_robust_list", .why = "new threads"},
    {.name = "rseq", .why = "new threads (glibc registers restartable sequences)"},
    {.name = "exit", .why = "a connection's thread ends"},
    {.name = "exit_group", .why = "the daemon ends"},
    {.name = "rt_sigprocmask", .why = "the C library masks signals around thread start and exit"},
    {.name = "rt_sigaction", .why = "the first pthread_create installs the C library's own handler"},
    {.name = "getpid", .why = "OpenSSL notices a fork (E2B's envd tokens)"},
    {.name = "getrandom", .why = "sandbox ids, RESEED entropy for guests, tokens"},
    {.name = "clock_gettime", .why = "deadlines, leases, timestamps (the vDSO's fallback)"},
    {.name = "clock_nanosleep", .why = "waiting for an agent to listen, a VM to end"},
    /* the API's connections, the agents' sockets, published ports */
    {.name = "accept4", .why = "API clients; a published port's clients"},
    {.name = "socket", .why = "dial a VM's agent (its --vsock-uds socket); a published port's listener",
     .sockets = {{AF_UNIX, SOCK_STREAM, -1}, {AF_INET, SOCK_STREAM, -1}, {AF_INET6, SOCK_STREAM, -1}}},
    {.name = "socketpair", .why = "a new sandbox's control and egress channels", ONLY_AF_UNIX},
    {.name = "connect", .why = "... to the agent's socket"},
    {.name = "bind", .why = "a published port's listener (host_ip:host_port)"},
    {.name = "listen", .why = "... on it"},
    {.name = "getsockname", .why = "... the port the kernel chose"},
    {.name = "setsockopt", .why = "I/O timeouts on clients and agent connections; SO_REUSEADDR"},
    {.name = "shutdown", .why = "half-close a stream (a command's stdin, a port's relay)"},
    {.name = "sendto", .why = "responses, requests to agents and to VM processes (MSG_NOSIGNAL)"},
    {.name = "recvfrom", .why = "requests, the agents' and VM processes' answers, the spawner's"},
    {.name = "sendmsg", .why = "a spawn request with the child's fds; a pause's files to its VM process (SCM_RIGHTS)"},
    {.name = "recvmsg", .why = "a sandbox's egress broker's answer to a new allowlist (PATCH; vmm/egress/egress_rules.c): linux-egress-live, not traced, found it"},
    {.name = "poll", .why = "the listeners, a client and its agent at once, port relays"},
    {.name = "eventfd2", .why = "a published port's forwarder's wake-up"},
    {.name = "splice", .why = "a command's output from the agent's socket to the client"},
    {.name = "pipe2", .why = "... through a pipe; a command's stdin, a create's secrets"},
    /* files: the state, cache and run folders, /proc */
    {.name = "openat", .why = "records, snapshots, volumes and logs in the state, cache and run folders; images; /proc figures; /dev/null for a spawn"},
    {.name = "openat2", .why = "a mounts source resolved beneath its --mount-root (RESOLVE_BENEATH)"},
    {.name = "close", .why = "every fd it is done with"},
    {.name = "read", .why = "files, requests, pipes, signalfd"},
    {.name = "write", .why = "responses, records, audit lines, errors"},
    {.name = "pread64", .why = "the audit log's and a tool's log's last lines"},
    {.name = "lseek", .why = "memfds and files read from their start"},
    {.name = "newfstatat", .why = "sizes and kinds of files and folders (the C library's stat and fstat)"},
    {.name = "access", .why = "does an image or kernel file exist"},
    {.name = "readlink", .why = "/proc/PID/fd of a VM process (its overlay), /proc/self/exe (the binary's identity)"},
    {.name = "getdents64", .why = "listing the state folder, snapshots, /proc"},
    {.name = "mkdir", .why = "a sandbox's folder, a snapshot's"},
    {.name = "unlink", .why = "removing a sandbox's files, a record, a volume"},
    {.name = "rmdir", .why = "... and its folders"},
    {.name = "rename", .why = "a record or volume written whole, then named"},
    {.name = "fsync", .why = "a record is on disk before it counts"},
    {.name = "ftruncate", .why = "a new volume's disk gets its size"},
    {.name = "flock", .why = "a volume's holder lock"},
    {.name = "fcntl", .why = "O_NONBLOCK, FD_CLOEXEC (the C library's fdopendir too)"},
    {.name = "memfd_create", .why = "file bodies and tool logs held in memory"},
    {.name = "geteuid", .why = "root or not: the default folders, the token file's owner"},
    /* processes: made by the spawner, yet still its own children */
    {.name = "wait4", .why = "reaping a VM process, `airlock snapshot`, e2fsck / mke2fs"},
    {.name = "kill", .why = "SIGTERM, then SIGKILL, to a VM process"},
};

static const struct {
    const char *name;
    const struct allow *list;
    unsigned n;
} kinds[SECCOMP_KINDS] = {
    [SECCOMP_VCPU] = {"vcpu", vcpu_allow, sizeof(vcpu_allow) / sizeof(vcpu_allow[0])},
    [SECCOMP_LOOP] = {"loop", loop_allow, sizeof(loop_allow) / sizeof(loop_allow[0])},
    [SECCOMP_WORKER] = {"worker", worker_allow, sizeof(worker_allow) / sizeof(worker_allow[0])},
    [SECCOMP_BROKER] = {"broker", broker_allow, sizeof(broker_allow) / sizeof(broker_allow[0])},
    [SECCOMP_DETACH] = {"detach", detach_allow, sizeof(detach_allow) / sizeof(detach_allow[0])},
    [SECCOMP_SNAPSHOT] = {"snapshot", snapshot_allow,
                          sizeof(snapshot_allow) / sizeof(snapshot_allow[0])},
    [SECCOMP_COPYOUT] = {"copyout", copyout_allow, sizeof(copyout_allow) / sizeof(copyout_allow[0])},
    [SECCOMP_DAEMON] = {"daemon", daemon_allow, sizeof(daemon_allow) / sizeof(daemon_allow[0])},
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
    if (a->sockets[0].domain) {
        for (unsigned i = 0; i < MAX_SOCKETS && a->sockets[i].domain; i++) {
            const struct sock_kind *s = &a->sockets[i];
            uint32_t act = s->fail_errno ? SCMP_ACT_ERRNO((uint32_t)s->fail_errno) : SCMP_ACT_ALLOW;
            struct scmp_arg_cmp cmp[3] = {
                SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)s->domain),
                SCMP_A1(SCMP_CMP_MASKED_EQ, SOCK_TYPE_MASK, (scmp_datum_t)s->type),
                SCMP_A2(SCMP_CMP_EQ, (scmp_datum_t)s->protocol),
            };
            int rc = seccomp_rule_add_array(ctx, act, nr, s->protocol < 0 ? 2 : 3, cmp);
            if (rc)
                return rc;
        }
        return 0;
    }
    if (a->read_only)
        return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
                                SCMP_A2(SCMP_CMP_MASKED_EQ, OPEN_WRITE_FLAGS, 0));
    if (a->fail_errno)
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO((uint32_t)a->fail_errno), nr, 0);
    if (a->arg_is && a->arg_has) {
        struct scmp_arg_cmp cmp = {.arg = a->arg_n, .op = SCMP_CMP_MASKED_EQ, .datum_a = a->arg,
                                   .datum_b = a->arg};
        return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &cmp);
    }
    if (a->arg_is) {
        struct scmp_arg_cmp cmp = {.arg = a->arg_n, .op = SCMP_CMP_EQ, .datum_a = a->arg};
        return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &cmp);
    }
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
    /* NO_NEW_PRIVS: libseccomp sets it (SCMP_FLTATR_CTL_NNP defaults on).
     * The daemon's filter binds every thread it has (TSYNC). */
    if (!rc && kind == SECCOMP_DAEMON)
        rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
    if (!rc)
        rc = seccomp_load(ctx);
    seccomp_release(ctx);
    return rc;
}

/* Every request number an allowlist above names (a missing one shows as
 * "?" in `airlock surface`; the surface test looks for that). */
static const char *ioctl_name(unsigned long nr)
{
#define N(x) {x, #x}
    static const struct {
        unsigned long nr;
        const char *name;
    } names[] = {
        N(KVM_RUN), N(KVM_IRQ_LINE), N(FIONREAD), N(KVM_GET_REGS), N(KVM_GET_SREGS),
        N(KVM_GET_XSAVE), N(KVM_GET_XCRS), N(KVM_GET_LAPIC), N(KVM_GET_MP_STATE),
        N(KVM_GET_VCPU_EVENTS), N(KVM_GET_DEBUGREGS), N(KVM_GET_MSRS),
        N(KVM_GET_MSR_INDEX_LIST), N(KVM_GET_SUPPORTED_CPUID), N(KVM_GET_IRQCHIP), N(KVM_GET_PIT2),
        N(KVM_GET_CLOCK), N(TIOCGWINSZ), N(TCSETS), N(TCGETS),
    };
#undef N
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].nr == nr)
            return names[i].name;
    return "?";
}

static const char *sock_name(int v, bool domain)
{
    if (domain)
        switch (v) {
        case AF_UNIX: return "AF_UNIX";
        case AF_INET: return "AF_INET";
        case AF_INET6: return "AF_INET6";
        case AF_NETLINK: return "AF_NETLINK";
        }
    else
        switch (v) {
        case SOCK_STREAM: return "SOCK_STREAM";
        case SOCK_DGRAM: return "SOCK_DGRAM";
        case SOCK_RAW: return "SOCK_RAW";
        }
    return "?";
}

/* Appends to a fixed buffer; output past its end is cut. */
static void add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    if (*len >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    *len = n < 0 ? cap : *len + (size_t)n;
}

/* The reason, then the argument filter in words, read off the same fields
 * add_rule() turns into the filter. */
static void describe(const struct allow *a, char *buf, size_t cap)
{
    size_t len = 0;
    add(buf, cap, &len, "%s", a->why);
    for (unsigned j = 0; j < MAX_IOCTLS && a->ioctls[j]; j++)
        add(buf, cap, &len, "%s%s", j ? "," : " [only ", ioctl_name(a->ioctls[j]));
    const char *sep = " [only ";
    for (unsigned j = 0; j < MAX_SOCKETS && a->sockets[j].domain; j++) {
        const struct sock_kind *k = &a->sockets[j];
        if (k->fail_errno)
            continue;
        add(buf, cap, &len, "%s%s/%s", sep, sock_name(k->domain, true), sock_name(k->type, false));
        if (k->protocol == NETLINK_ROUTE && k->domain == AF_NETLINK)
            add(buf, cap, &len, "/NETLINK_ROUTE");
        sep = ",";
    }
    for (unsigned j = 0; j < MAX_SOCKETS && a->sockets[j].domain; j++)
        if (a->sockets[j].fail_errno)
            add(buf, cap, &len, "; %s/%s fails with %s", sock_name(a->sockets[j].domain, true),
                sock_name(a->sockets[j].type, false), strerrorname_np(a->sockets[j].fail_errno));
    if (a->ioctls[0] || a->sockets[0].domain)
        add(buf, cap, &len, "]");
    if (a->read_only)
        add(buf, cap, &len, " [only read-only: no O_WRONLY, O_RDWR, O_CREAT, O_TRUNC]");
    if (a->arg_is)
        add(buf, cap, &len, a->arg_has ? " [only with %s]" : " [only %s]", a->arg_is);
    if (a->fail_errno)
        add(buf, cap, &len, " [fails with %s]", strerrorname_np(a->fail_errno));
}

const struct seccomp_list *seccomp_lists(void)
{
    static struct seccomp_syscall calls[SECCOMP_KINDS][SECCOMP_LIST_MAX];
    static char text[SECCOMP_KINDS][SECCOMP_LIST_MAX][640];
    static struct seccomp_list lists[SECCOMP_KINDS];
    for (unsigned k = 0; k < SECCOMP_KINDS; k++) {
        unsigned m = kinds[k].n < SECCOMP_LIST_MAX ? kinds[k].n : SECCOMP_LIST_MAX;
        for (unsigned i = 0; i < m; i++) {
            describe(&kinds[k].list[i], text[k][i], sizeof(text[k][i]));
            calls[k][i] = (struct seccomp_syscall){.name = kinds[k].list[i].name, .reason = text[k][i]};
        }
        lists[k] = (struct seccomp_list){.thread = kinds[k].name, .calls = calls[k],
                                                 .ncalls = m};
    }
    return lists;
}
