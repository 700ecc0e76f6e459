#include "vmm/report/memstat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int memstat_open(struct memstat *m)
{
    m->status_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    m->smaps_fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
    if (m->status_fd < 0 || m->smaps_fd < 0) {
        int e = errno;
        memstat_close(m);
        return -e;
    }
    return 0;
}

void memstat_close(struct memstat *m)
{
    if (m->status_fd >= 0)
        close(m->status_fd);
    if (m->smaps_fd >= 0)
        close(m->smaps_fd);
    m->status_fd = m->smaps_fd = -1;
}

/* Calls `line` for each line of fd (from its current offset; lines longer
 * than the buffer are cut, which no line we parse is). */
static void each_line(int fd, void (*line)(void *ctx, const char *s), void *ctx)
{
    char buf[4096];
    size_t have = 0;
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
        if (n <= 0)
            break;
        have += (size_t)n;
        buf[have] = 0;
        char *start = buf, *nl;
        while ((nl = strchr(start, '\n'))) {
            *nl = 0;
            line(ctx, start);
            start = nl + 1;
        }
        have = (size_t)(buf + have - start);
        if (have == sizeof(buf) - 1)
            have = 0; /* an overlong line: drop it */
        memmove(buf, start, have);
    }
}

static void status_line(void *ctx, const char *s)
{
    unsigned long long kib;
    if (sscanf(s, "VmHWM: %llu kB", &kib) == 1)
        *(uint64_t *)ctx = kib;
}

struct smaps_ctx {
    const struct gmem *mem;
    bool in_guest; /* the mapping whose fields follow is guest RAM */
    uint64_t kib;
    uint64_t private_all, private_guest;
};

static void smaps_line(void *ctx, const char *s)
{
    struct smaps_ctx *c = ctx;
    unsigned long long start, end, kib;
    /* A mapping's header: "start-end perms offset dev inode [path]". */
    if (sscanf(s, "%llx-%llx ", &start, &end) == 2) {
        c->in_guest = false;
        for (unsigned i = 0; i < c->mem->nregions; i++) {
            uint64_t b = (uint64_t)(uintptr_t)c->mem->regions[i].host;
            if (start < b + c->mem->regions[i].size && b < end)
                c->in_guest = true;
        }
    } else if (c->in_guest && sscanf(s, "Rss: %llu kB", &kib) == 1) {
        c->kib += kib;
    } else if (sscanf(s, "Private_Clean: %llu kB", &kib) == 1 ||
               sscanf(s, "Private_Dirty: %llu kB", &kib) == 1) {
        c->private_all += kib;
        if (c->in_guest)
            c->private_guest += kib;
    }
}

void memstat_read(struct memstat *m, const struct gmem *mem, struct memstat_figures *f)
{
    *f = (struct memstat_figures){0};
    if (m->status_fd < 0)
        return;
    each_line(m->status_fd, status_line, &f->peak);
    struct smaps_ctx c = {.mem = mem};
    each_line(m->smaps_fd, smaps_line, &c);
    f->guest = c.kib;
    f->private_own = c.private_all - c.private_guest;
}
