#include "vmm/sandbox/sandbox_stats.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/agent_client/agent_conn.h"

/* One line of the process table: who its parent is and its CPU time. */
struct proc_row {
    pid_t pid, ppid;
    uint64_t ticks; /* utime + stime */
    uint64_t rss_pages;
};

struct proc_table {
    struct proc_row *row;
    size_t n, cap;
};

/* /proc/PID/stat's fields after the command (which may hold spaces and
 * parentheses: the last ')' ends it). */
static bool read_stat(pid_t pid, struct proc_row *r)
{
    char p[64], buf[1024];
    snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    char *s = strrchr(buf, ')');
    if (!s)
        return false;
    /* fields 3.. : state ppid pgrp session tty tpgid flags minflt cminflt
     * majflt cmajflt utime(14) stime(15) ... rss(24) */
    unsigned long long f[22] = {0};
    char state;
    int got = sscanf(s + 1, " %c %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
                            "%llu %llu %llu %llu %llu %llu %llu %llu %llu",
                     &state, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9],
                     &f[10], &f[11], &f[12], &f[13], &f[14], &f[15], &f[16], &f[17], &f[18],
                     &f[19], &f[20]);
    if (got < 22)
        return false;
    r->pid = pid;
    r->ppid = (pid_t)f[0];
    r->ticks = f[10] + f[11];
    r->rss_pages = f[20];
    return true;
}

/* Every process's parent and CPU time, one pass over /proc. */
static void scan(struct proc_table *t)
{
    t->n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        if (t->n == t->cap) {
            size_t cap = t->cap ? 2 * t->cap : 512;
            struct proc_row *row = realloc(t->row, cap * sizeof(*row));
            if (!row)
                break;
            t->row = row;
            t->cap = cap;
        }
        if (read_stat((pid_t)atoi(e->d_name), &t->row[t->n]))
            t->n++;
    }
    closedir(d);
}

/* Rss and Pss of /proc/PID/smaps_rollup, in bytes; false when it cannot
 * be read (a kernel before 4.14, or the process went). */
static bool read_rollup(pid_t pid, uint64_t *rss, uint64_t *pss)
{
    char p[64], line[256];
    snprintf(p, sizeof(p), "/proc/%d/smaps_rollup", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return false;
    bool got = false;
    unsigned long long kb;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "Rss: %llu kB", &kb) == 1) {
            *rss += kb << 10;
            got = true;
        } else if (sscanf(line, "Pss: %llu kB", &kb) == 1) {
            *pss += kb << 10;
        }
    }
    fclose(f);
    return got;
}

/* The copy-on-write overlays PID holds open: unlinked files that
 * devices/disk_cow.c made (O_TMPFILE, shown as "DIR/#INODE (deleted)",
 * or its mkstemp fallback "DIR/airlock-cow-XXXXXX (deleted)"); each file
 * counted once however many fds hold it. */
struct seen_files {
    dev_t dev[16];
    ino_t ino[16];
    unsigned n;
};

static uint64_t overlays(pid_t pid, struct seen_files *seen)
{
    char dir[64], p[64 + 256], target[4096];
    snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    uint64_t bytes = 0;
    struct dirent *e;
    static const char deleted[] = " (deleted)";
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        ssize_t n = readlink(p, target, sizeof(target) - 1);
        if (n <= 0 || target[0] != '/')
            continue; /* sockets, pipes, anon inodes */
        target[n] = '\0';
        size_t dl = sizeof(deleted) - 1;
        if ((size_t)n <= dl || strcmp(target + n - dl, deleted))
            continue;
        const char *base = strrchr(target, '/') + 1;
        if (base[0] != '#' && strncmp(base, "airlock-cow-", 12))
            continue;
        struct stat st;
        if (stat(p, &st) < 0 || !S_ISREG(st.st_mode))
            continue;
        bool dup = false;
        for (unsigned i = 0; i < seen->n && !dup; i++)
            dup = seen->dev[i] == st.st_dev && seen->ino[i] == st.st_ino;
        if (dup)
            continue;
        if (seen->n < 16) {
            seen->dev[seen->n] = st.st_dev;
            seen->ino[seen->n++] = st.st_ino;
        }
        bytes += (uint64_t)st.st_blocks * 512;
    }
    closedir(d);
    return bytes;
}

/* The sample of root and every process under it. */
static void sample(const struct proc_table *t, pid_t root, struct sandbox_stats *s)
{
    pid_t tree[64];
    unsigned n = 0;
    tree[n++] = root;
    /* Breadth first: a process's children are after it in `tree`. */
    for (unsigned i = 0; i < n; i++)
        for (size_t k = 0; k < t->n && n < sizeof(tree) / sizeof(tree[0]); k++)
            if (t->row[k].ppid == tree[i])
                tree[n++] = t->row[k].pid;
    long hz = sysconf(_SC_CLK_TCK);
    long page = sysconf(_SC_PAGESIZE);
    struct seen_files seen = {.n = 0};
    for (unsigned i = 0; i < n; i++) {
        const struct proc_row *r = NULL;
        for (size_t k = 0; k < t->n && !r; k++)
            if (t->row[k].pid == tree[i])
                r = &t->row[k];
        if (!r)
            continue; /* gone since the scan */
        s->cpu_ms += r->ticks * 1000 / (uint64_t)(hz > 0 ? hz : 100);
        if (!read_rollup(r->pid, &s->rss, &s->pss))
            s->rss += r->rss_pages * (uint64_t)page;
        s->overlay += overlays(r->pid, &seen);
    }
}

/* Stores a new sample (under the lock), its CPU share from the last one. */
static void store(struct sandbox *sb, struct sandbox_stats *s)
{
    const struct sandbox_stats *old = &sb->stats;
    s->cpu_pct10 = -1;
    if (old->at_ms && s->at_mono_ms > old->at_mono_ms) {
        int64_t used = s->cpu_ms > old->cpu_ms ? (int64_t)(s->cpu_ms - old->cpu_ms) : 0;
        s->cpu_pct10 = (int)(used * 1000 / (s->at_mono_ms - old->at_mono_ms));
    }
    sb->stats = *s;
}

void sandbox_stats_refresh(struct registry *reg, int64_t max_age_ms)
{
    struct sandbox *due[SANDBOX_MAX];
    pid_t pid[SANDBOX_MAX];
    unsigned n = 0;
    int64_t now = agent_mono_ms();
    pthread_mutex_lock(&reg->lock);
    for (unsigned i = 0; i < SANDBOX_MAX; i++) {
        struct sandbox *sb = &reg->slots[i];
        if (sb->state != SB_RUNNING || sb->pid <= 0 ||
            (sb->stats.at_ms && now - sb->stats.at_mono_ms < max_age_ms))
            continue;
        sb->refs++;
        pid[n] = sb->pid;
        due[n++] = sb;
    }
    pthread_mutex_unlock(&reg->lock);
    if (!n)
        return;
    struct proc_table t = {0};
    scan(&t);
    for (unsigned i = 0; i < n; i++) {
        struct sandbox_stats s = {.at_ms = agent_wall_ms(), .at_mono_ms = agent_mono_ms()};
        sample(&t, pid[i], &s);
        pthread_mutex_lock(&reg->lock);
        if (due[i]->pid == pid[i]) /* not reaped meanwhile */
            store(due[i], &s);
        pthread_mutex_unlock(&reg->lock);
        registry_put(reg, due[i]);
    }
    free(t.row);
}

void sandbox_stats_refresh_one(struct registry *reg, struct sandbox *sb, int64_t max_age_ms)
{
    pthread_mutex_lock(&reg->lock);
    pid_t pid = sb->pid;
    bool due = pid > 0 && (!sb->stats.at_ms || agent_mono_ms() - sb->stats.at_mono_ms >= max_age_ms);
    pthread_mutex_unlock(&reg->lock);
    if (!due)
        return;
    struct proc_table t = {0};
    scan(&t);
    struct sandbox_stats s = {.at_ms = agent_wall_ms(), .at_mono_ms = agent_mono_ms()};
    sample(&t, pid, &s);
    free(t.row);
    pthread_mutex_lock(&reg->lock);
    if (sb->pid == pid)
        store(sb, &s);
    pthread_mutex_unlock(&reg->lock);
}

void sandbox_stats_json(const struct sandbox *sb, json_t *o)
{
    const struct sandbox_stats *s = &sb->stats;
    json_object_set_new(o, "cpu_ms", json_integer((json_int_t)s->cpu_ms));
    json_object_set_new(o, "cpu_pct", s->cpu_pct10 >= 0 && s->at_ms
                                          ? json_real(s->cpu_pct10 / 10.0) : json_null());
    json_object_set_new(o, "rss_bytes", json_integer((json_int_t)s->rss));
    json_object_set_new(o, "pss_bytes", json_integer((json_int_t)s->pss));
    json_object_set_new(o, "overlay_bytes", json_integer((json_int_t)s->overlay));
    json_object_set_new(o, "egress_bytes", json_pack("{s:I,s:I}", "out", (json_int_t)sb->egress_out,
                                                     "in", (json_int_t)sb->egress_in));
    json_object_set_new(o, "stats_ms", s->at_ms ? json_integer(s->at_ms) : json_null());
}
