/* inject-syscall TID CALL: makes one thread of a running process (the
 * monitor, in tests/probe/seccomp-tests) execute one system call it never
 * asked for, the way a guest that took over device code would, so the
 * test can see what the thread's seccomp filter does with it in the real
 * process rather than in a forked copy.
 *
 * The thread is seized and interrupted (PTRACE_SEIZE + PTRACE_INTERRUPT)
 * while it sits in a system call (KVM_RUN for a vCPU, epoll_wait for the
 * event loop), so the two bytes before its rip are a `syscall` instruction
 * (checked).  rip is moved back onto that instruction with rax = the
 * call's number and orig_rax = -1 (no restart of the interrupted call).
 *
 * CALL:
 *   getpid       allowed on every monitor thread: runs to its syscall-exit
 *                stop, prints "getpid=N", then the thread's registers are
 *                put back as they were (the interrupted call restarted if
 *                the kernel would have restarted it) and it goes on.
 *   socket-inet  socket(AF_INET, SOCK_STREAM, 0)    } forbidden: the thread
 *   mkdir        mkdir("/airlock-injected", 0700)   } is let go into it
 *
 * Exit status: 0 done, 1 something failed (said on stderr), 2 usage. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

/* Not in the C library's headers: the kernel's internal restart codes a
 * thread stopped in an interrupted syscall can have in rax. */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

static pid_t tid;

static int fail(const char *what)
{
    fprintf(stderr, "inject-syscall: %d: %s: %s\n", (int)tid, what, strerror(errno));
    return 1;
}

/* Waits for the next stop of the thread; -1 when it is gone. */
static int wait_stop(int *st)
{
    for (;;) {
        pid_t r = waitpid(tid, st, __WALL);
        if (r == tid)
            return WIFSTOPPED(*st) ? 0 : (errno = ESRCH, -1);
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

/* Interrupts the thread and waits for the PTRACE_EVENT_STOP, passing on
 * any signal that arrives first (a vCPU's SIGUSR1 kick). */
static int interrupt(void)
{
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
        return -1;
    for (int i = 0; i < 16; i++) {
        int st;
        if (wait_stop(&st) < 0)
            return -1;
        if (st >> 16 == PTRACE_EVENT_STOP)
            return 0;
        if (ptrace(PTRACE_CONT, tid, 0, (void *)(long)WSTOPSIG(st)) < 0 ||
            ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
            return -1;
    }
    errno = EAGAIN;
    return -1;
}

/* Runs the thread to its next syscall stop (entry or exit). */
static int to_syscall_stop(void)
{
    int st;
    if (ptrace(PTRACE_SYSCALL, tid, 0, 0) < 0 || wait_stop(&st) < 0)
        return -1;
    if (WSTOPSIG(st) != (SIGTRAP | 0x80))
        return errno = EPROTO, -1;
    return 0;
}

/* The registers as the kernel would have resumed the interrupted call:
 * restarted (rip back on `syscall`) for the restart codes, else as is. */
static struct user_regs_struct as_resumed(struct user_regs_struct r)
{
    long rax = (long)r.rax;
    if (rax == -ERESTARTSYS || rax == -ERESTARTNOINTR || rax == -ERESTARTNOHAND) {
        r.rax = r.orig_rax;
        r.rip -= 2;
    } else if (rax == -ERESTART_RESTARTBLOCK) {
        r.rax = SYS_restart_syscall;
        r.rip -= 2;
    }
    r.orig_rax = (unsigned long long)-1; /* we did the restart: the kernel must not */
    return r;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "getpid") && strcmp(argv[2], "socket-inet") &&
                      strcmp(argv[2], "mkdir"))) {
        fprintf(stderr, "usage: inject-syscall TID getpid|socket-inet|mkdir\n");
        return 2;
    }
    tid = (pid_t)atoi(argv[1]);
    if (tid <= 0 || ptrace(PTRACE_SEIZE, tid, 0, (void *)PTRACE_O_TRACESYSGOOD) < 0)
        return fail("PTRACE_SEIZE");
    /* The thread must be stopped inside a system call (a vCPU in KVM_RUN,
     * the loop in epoll_wait): where it spends nearly all its time, but
     * not all (a vCPU handling an exit runs user code).  Caught outside
     * one, it is let go for 10 ms and caught again, up to 100 times. */
    struct user_regs_struct saved, r;
    for (int tries = 0;; tries++) {
        if (interrupt() < 0)
            return fail("PTRACE_INTERRUPT");
        if (ptrace(PTRACE_GETREGS, tid, 0, &saved) < 0)
            return fail("PTRACE_GETREGS");
        errno = 0;
        long insn = ptrace(PTRACE_PEEKTEXT, tid, (void *)(saved.rip - 2), 0);
        if (errno)
            return fail("PTRACE_PEEKTEXT");
        if ((long long)saved.orig_rax >= 0 && (insn & 0xffff) == 0x050f)
            break;
        if (tries == 100) {
            errno = EINVAL;
            return fail("not stopped in a system call in 100 tries (no `syscall` before rip)");
        }
        if (ptrace(PTRACE_CONT, tid, 0, 0) < 0)
            return fail("PTRACE_CONT");
        usleep(10000);
    }
    r = saved;
    r.rip = saved.rip - 2;
    r.orig_rax = (unsigned long long)-1;
    if (!strcmp(argv[2], "getpid")) {
        r.rax = SYS_getpid;
    } else if (!strcmp(argv[2], "socket-inet")) {
        r.rax = SYS_socket;
        r.rdi = AF_INET;
        r.rsi = SOCK_STREAM;
        r.rdx = 0;
    } else {
        /* The path goes on the thread's stack, below the red zone. */
        static const char path[24] = "/airlock-injected";
        unsigned long long at = (saved.rsp - 512) & ~15ULL;
        for (unsigned i = 0; i < sizeof(path); i += sizeof(long)) {
            long word;
            memcpy(&word, path + i, sizeof(word));
            if (ptrace(PTRACE_POKEDATA, tid, (void *)(at + i), (void *)word) < 0)
                return fail("PTRACE_POKEDATA");
        }
        r.rax = SYS_mkdir;
        r.rdi = at;
        r.rsi = 0700;
    }
    if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0)
        return fail("PTRACE_SETREGS");
    if (strcmp(argv[2], "getpid")) {
        /* Forbidden: let it run into its filter. */
        if (ptrace(PTRACE_DETACH, tid, 0, 0) < 0)
            return fail("PTRACE_DETACH");
        printf("%s injected\n", argv[2]);
        return 0;
    }
    if (to_syscall_stop() < 0 || to_syscall_stop() < 0) /* entry, then exit */
        return fail("running the injected getpid");
    if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
        return fail("PTRACE_GETREGS after getpid");
    printf("getpid=%lld\n", (long long)r.rax);
    r = as_resumed(saved);
    if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0 || ptrace(PTRACE_DETACH, tid, 0, 0) < 0)
        return fail("restoring the thread");
    return 0;
}
