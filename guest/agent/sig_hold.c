/* A signal for a container's process that the kernel would drop: see
 * agent.h (sig_hold_*).  The process is PID 1 of its PID namespace, and
 * the kernel protects such an init from every signal it has no handler
 * for (SIGKILL and SIGSTOP from an ancestor namespace aside): one sent
 * between its execve and its first sigaction (a shell's `trap`, read a
 * moment later) is lost.  runc has the same window, but a process on the
 * host reaches its handlers in a millisecond; in a VM the first exec of
 * a program reads it from a cold disk, and `kill` right after `start`
 * came first (the OCI suite's killsig).  So such a signal is held until
 * the process catches it (or blocks it: the kernel then queues it), for
 * SIG_HOLD_MS at most; one the process ignores is dropped, as the kernel
 * would. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "guest/agent/agent.h"

#define SIG_HOLD_MS 10000
#define SIG_HOLD_POLL_MS 20

/* The process's blocked, ignored and caught sets: 0, or -1 when gone. */
static int sig_masks(pid_t pid, uint64_t *blk, uint64_t *ign, uint64_t *cgt)
{
    char path[40], line[128];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    int seen = 0;
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long long v;
        if (sscanf(line, "SigBlk: %llx", &v) == 1)
            *blk = v, seen |= 1;
        else if (sscanf(line, "SigIgn: %llx", &v) == 1)
            *ign = v, seen |= 2;
        else if (sscanf(line, "SigCgt: %llx", &v) == 1)
            *cgt = v, seen |= 4;
    }
    if (f)
        fclose(f);
    return seen == 7 ? 0 : -1;
}

/* Sends what the process can take now, drops what it ignores (or all,
 * once the time is up or it is gone), keeps the rest. */
static void sig_hold_try(struct sig_hold *h, pid_t pid, int64_t now)
{
    uint64_t blk = 0, ign = 0, cgt = 0;
    if (sig_masks(pid, &blk, &ign, &cgt) || now >= h->until) {
        h->pending = 0;
        return;
    }
    for (int s = 1; s <= 64; s++) {
        uint64_t bit = 1ull << (s - 1);
        if (!(h->pending & bit))
            continue;
        if (cgt & bit || blk & bit)
            kill(pid, s);
        if ((cgt | blk | ign) & bit)
            h->pending &= ~bit;
    }
}

void sig_hold_send(struct sig_hold *h, pid_t pid, int signo, int64_t now)
{
    if (signo == SIGKILL || signo == SIGSTOP) {
        kill(pid, signo); /* the kernel lets these through */
        return;
    }
    h->pending |= 1ull << (signo - 1);
    h->until = now + SIG_HOLD_MS;
    sig_hold_try(h, pid, now);
}

void sig_hold_retry(struct sig_hold *h, pid_t pid, int64_t now)
{
    if (h->pending)
        sig_hold_try(h, pid, now);
}

int sig_hold_wait_ms(const struct sig_hold *h)
{
    return h->pending ? SIG_HOLD_POLL_MS : -1;
}
