/* A guest OOM kill made visible to the engine; see container_oom.h. */
#include "vmm/runtime/container_oom.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/sandbox/vm_proc.h"

#define VMSTAT_MAX 16384
/* The guest kernel's log buffer is 128 KiB (CONFIG_LOG_BUF_SHIFT 17). */
#define KMSG_MAX (256u << 10)
/* What the kernel's OOM killer logs of each kill: "Out of memory: Killed
 * process N (comm) ...", or "Memory cgroup out of memory: ..." */
#define OOM_LINE "of memory: Killed process"
/* Above what the folder holds when the child starts: its allocations
 * reach the limit within a few MiB, and nothing else is squeezed. */
#define HEADROOM (4ull << 20)
/* The child's allocations stop there (no kill came: swap, or no memory
 * controller after all). */
#define CHILD_MAX_EXTRA (64ull << 20)
#define CHUNK (1ull << 20)
#define WAIT_MS 10000
/* After the count moved, before the stand-in exits: containerd's shim
 * reads memory.events when inotify wakes it, and must publish its
 * TaskOOM while the task is still there to carry it. */
#define SETTLE_MS 200

struct text {
    char *b;
    size_t len, cap;
};

static int keep(void *opaque, const void *buf, size_t len)
{
    struct text *t = opaque;
    size_t room = t->cap - 1 - t->len;
    size_t take = len < room ? len : room;
    memcpy(t->b + t->len, buf, take);
    t->len += take;
    t->b[t->len] = '\0';
    return 0;
}

/* The guest file `path` through the agent at `sock` into t (t->cap
 * bytes at most, allocated here): 0 or -errno.  A read that ends in
 * EAGAIN is whole: /proc/kmsg, opened non-blocking by the agent, says
 * so once the log is read. */
static int guest_text(const char *sock, const char *path, struct text *t)
{
    int fd = vm_proc_dial(sock);
    if (fd < 0)
        return fd;
    t->len = 0;
    t->b = calloc(1, t->cap);
    int rc = t->b ? agent_file_get_to(fd, path, t->cap - 1, keep, t) : -ENOMEM;
    close(fd);
    return rc == -EAGAIN ? 0 : rc;
}

/* The value of the line "key N" in text, or -1. */
static long long field(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, key, kl) && p[kl] == ' ')
            return strtoll(p + kl + 1, NULL, 10);
    return -1;
}

bool container_oom_in_guest(const char *sock)
{
    struct text t = {.cap = VMSTAT_MAX};
    long long kills = guest_text(sock, "/proc/vmstat", &t) ? -1 : field(t.b, "oom_kill");
    free(t.b);
    if (kills >= 0)
        return kills > 0;
    /* A guest kernel without event counters (airlock's): its log.  The
     * read takes what it reads (/proc/kmsg is the log's one reader), and
     * the VM ends right after. */
    uint32_t pid;
    return container_oom_killed(sock, &pid, 1) > 0;
}

int container_oom_killed(const char *sock, uint32_t *pids, unsigned max)
{
    struct text t = {.cap = KMSG_MAX};
    int e = guest_text(sock, "/proc/kmsg", &t), n = 0;
    for (const char *p = e ? NULL : t.b; p && (unsigned)n < max;) {
        p = memmem(p, t.len - (size_t)(p - t.b), OOM_LINE, strlen(OOM_LINE));
        if (!p)
            break;
        p += strlen(OOM_LINE);
        char *end;
        unsigned long pid = strtoul(p, &end, 10);
        if (end != p && *end == ' ' && pid > 0 && pid <= UINT32_MAX)
            pids[n++] = (uint32_t)pid;
    }
    free(t.b);
    return e ? e : n;
}

/* dir/name's first line (newline cut) into out: 0 or -errno. */
static int read_line(const char *dir, const char *name, char *out, size_t cap)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, out, cap - 1);
    int e = errno;
    close(fd);
    if (n < 0)
        return -e;
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

static int write_str(const char *dir, const char *name, const char *val)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = write(fd, val, strlen(val)) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

static long long oom_kills(const char *dir)
{
    char p[4096], b[1024];
    snprintf(p, sizeof(p), "%s/memory.events", dir);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, b, sizeof(b) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    b[n] = '\0';
    return field(b, "oom_kill");
}

/* The sacrificial child: the killer's choice, then memory until killed.
 * Only async-signal-safe calls: the stand-in has threads. */
static void __attribute__((noreturn)) sacrifice(int go, unsigned long long limit)
{
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "1000", 4) != 4)
        _exit(2);
    close(fd);
    char b;
    if (read(go, &b, 1) != 1)
        _exit(3); /* the stand-in went first */
    for (unsigned long long got = 0; got < limit; got += CHUNK) {
        void *m = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            _exit(4);
        memset(m, 0x5a, CHUNK);
    }
    _exit(5);
}

/* Waits for pid up to WAIT_MS, then kills it: its wait status. */
static int reap(pid_t pid)
{
    int st = 0;
    for (int waited = 0; waited < WAIT_MS; waited += 10) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            return st;
        poll(NULL, 0, 10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

int container_oom_report(const char *dir, char *err, size_t cap)
{
    char max[64], swap[64] = "", group[16] = "", cur[64], lim[32];
    long long before = oom_kills(dir);
    if (before < 0 || read_line(dir, "memory.max", max, sizeof(max)) ||
        read_line(dir, "memory.current", cur, sizeof(cur))) {
        snprintf(err, cap, "%s: no memory controller's files", dir);
        return -1;
    }
    /* Only the child may die: the stand-in shielded, the group kill off,
     * and no swap for the child's pages to escape to. */
    int self = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (self < 0 || write(self, "-1000", 5) != 5) {
        snprintf(err, cap, "oom_score_adj: %s", strerror(errno));
        if (self >= 0)
            close(self);
        return -1;
    }
    close(self);
    if (!read_line(dir, "memory.oom.group", group, sizeof(group)) && strcmp(group, "0"))
        write_str(dir, "memory.oom.group", "0");
    if (!read_line(dir, "memory.swap.max", swap, sizeof(swap)))
        write_str(dir, "memory.swap.max", "0");
    unsigned long long limit = strtoull(cur, NULL, 10) + HEADROOM;
    limit -= limit % 4096;
    int go[2];
    if (pipe2(go, O_CLOEXEC) < 0) {
        snprintf(err, cap, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(go[1]);
        sacrifice(go[0], limit + CHILD_MAX_EXTRA);
    }
    close(go[0]);
    int rc = -1;
    if (pid < 0) {
        snprintf(err, cap, "fork: %s", strerror(errno));
    } else {
        snprintf(lim, sizeof(lim), "%llu", limit);
        int e = write_str(dir, "memory.max", lim);
        ssize_t w = write(go[1], "g", 1);
        (void)w;
        close(go[1]);
        go[1] = -1;
        int st = reap(pid);
        if (e)
            snprintf(err, cap, "%s/memory.max: %s", dir, strerror(-e));
        else if (oom_kills(dir) <= before)
            snprintf(err, cap, "the host kernel did not count a kill in %s (child's status %#x)",
                     dir, (unsigned)st);
        else
            rc = 0;
    }
    if (go[1] >= 0)
        close(go[1]);
    write_str(dir, "memory.max", max);
    if (swap[0])
        write_str(dir, "memory.swap.max", swap);
    if (group[0] && strcmp(group, "0"))
        write_str(dir, "memory.oom.group", group);
    if (!rc)
        poll(NULL, 0, SETTLE_MS);
    return rc;
}
