#include "vmm/sandbox/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/sandbox/sandbox_boot.h"
#include "vmm/sandbox/vm_identity.h"
#include "vmm/sandbox/vm_proc.h"
#include "vmm/snapshot/snapshot_dir.h"
#include "vmm/image/image_ref.h"
#include "vmm/util/guest_paths.h"
#include "vmm/util/parse.h"
#include "vmm/util/user_dirs.h"

int pool_add(struct pool *p, const char *arg, char *err, size_t cap)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(p->spec[0].image)) {
        snprintf(err, cap, "--pool '%.200s': want IMAGE=N[,mem=MiB][,cpus=N]", arg);
        return -1;
    }
    if (p->n >= POOL_SPECS_MAX) {
        snprintf(err, cap, "--pool '%.200s': at most %d pools", arg, POOL_SPECS_MAX);
        return -1;
    }
    struct pool_spec s = {.mem_mib = SANDBOX_DEFAULT_MEM_MIB, .cpus = 1};
    memcpy(s.image, arg, (size_t)(eq - arg));
    char rest[256];
    snprintf(rest, sizeof(rest), "%s", eq + 1);
    char *save = NULL;
    bool first = true;
    for (char *t = strtok_r(rest, ",", &save); t; t = strtok_r(NULL, ",", &save), first = false) {
        uint64_t v;
        const char *what = first ? "N" : !strncmp(t, "mem=", 4) ? "mem" :
                           !strncmp(t, "cpus=", 5) ? "cpus" : NULL;
        const char *num = first ? t : what ? strchr(t, '=') + 1 : t;
        bool bad = !what || parse_uint(num, 1u << 20, &v) ||
                   (first && (v < 1 || v > POOL_SIZE_MAX)) ||
                   (!first && *what == 'm' && v < 8) || (!first && *what == 'c' && (v < 1 || v > 64));
        if (bad) {
            snprintf(err, cap, "--pool '%.200s': %s%.64s%s", arg,
                     !what ? "unknown setting '" : "bad value for ", what ? what : t,
                     !what ? "' (want mem= or cpus=)" : first ? " (1 to 64)" : "");
            return -1;
        }
        if (first)
            s.size = (unsigned)v;
        else if (*what == 'm')
            s.mem_mib = (unsigned)v;
        else
            s.cpus = (unsigned)v;
    }
    if (!s.size) {
        snprintf(err, cap, "--pool '%.200s': want IMAGE=N[,mem=MiB][,cpus=N]", arg);
        return -1;
    }
    for (unsigned i = 0; i < p->n; i++)
        if (!strcmp(p->spec[i].image, s.image) && p->spec[i].mem_mib == s.mem_mib &&
            p->spec[i].cpus == s.cpus) {
            snprintf(err, cap, "--pool '%.200s': that pool is given twice", arg);
            return -1;
        }
    p->spec[p->n++] = s;
    return 0;
}

/* ---- the snapshot of a spec, made once and cached ---- */

/* Where spec s's snapshot is cached: a checksum of what it depends on
 * (this airlock binary, which also fixes the snapshot format and the CPUID
 * it gives, the image file, the kernel, each by path, inode, size and
 * mtime, and the VM's shape), so a rebuilt airlock or image gets a new
 * one.  A checksum, not a cryptographic hash: nothing here is an
 * adversary's, and a restore checks the image's identity and the CPUID
 * itself, so even a collision could not restore a stale snapshot. */
static void cache_path(const struct pool *p, const struct pool_spec *s, char *out, size_t cap)
{
    char shape[64], line[PATH_MAX + 160];
    struct vm_identity id;
    vm_identity_files(s->image, s->cpus, &id);
    uLong crc = crc32(0, Z_NULL, 0);
    for (int i = 0; i < VM_IDENTITY_FILES; i++)
        crc = crc32(crc, (const Bytef *)line, (uInt)vm_identity_line(id.path[i], line, sizeof(line)));
    int sl = snprintf(shape, sizeof(shape), "mem %u cpus %u\n", s->mem_mib, s->cpus);
    crc = crc32(crc, (const Bytef *)shape, (uInt)sl);
    const char *base = strrchr(s->image, '/');
    snprintf(out, cap, "%.3900s/snapshots/%.64s-%08lx", p->cache_dir, base ? base + 1 : s->image,
             (unsigned long)crc);
}

/* Removes a snapshot folder a failed `airlock snapshot` left. */
static void remove_tree(const char *dir)
{
    static const char *const names[] = {SNAP_STATE_FILE, SNAP_MEMORY_FILE, "disk0.cow",
                                        "disk1.cow", "disk2.cow", "disk3.cow"};
    char f[PATH_MAX + 32];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(f, sizeof(f), "%s/%s", dir, names[i]);
        unlink(f);
    }
    rmdir(dir);
}

/* A complete snapshot folder: its state file is written last. */
static bool snapshot_complete(const char *dir)
{
    char f[PATH_MAX + 32];
    struct stat st;
    snprintf(f, sizeof(f), "%s/%s", dir, SNAP_STATE_FILE);
    return stat(f, &st) == 0 && st.st_size > 0;
}

/* The first "airlock: ..." line of a log, for the reason. */
static void log_reason(const char *log, char *out, size_t cap)
{
    FILE *f = fopen(log, "re");
    char line[600];
    snprintf(out, cap, "airlock snapshot failed (no reason given)");
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "airlock: ", 9)) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(out, cap, "%.400s", line + 9);
            break;
        }
    if (f)
        fclose(f);
}

/* Makes (or finds) spec k's snapshot; false with s->error set when it
 * could not. */
static bool make_snapshot(struct pool *p, unsigned k)
{
    struct pool_spec *s = &p->spec[k];
    char dir[PATH_MAX], tmp[PATH_MAX + 16], log[PATH_MAX + 32], err[512] = "";
    cache_path(p, s, dir, sizeof(dir));
    if (snapshot_complete(dir)) {
        pthread_mutex_lock(&p->lock);
        snprintf(s->snapshot, sizeof(s->snapshot), "%s", dir);
        s->cached = true;
        pthread_mutex_unlock(&p->lock);
        fprintf(stderr, "airlock: pool %s: snapshot from the cache (%s)\n", s->image, dir);
        return true;
    }
    int64_t t0 = agent_mono_ms();
    char parent[PATH_MAX];
    snprintf(parent, sizeof(parent), "%.3900s/snapshots", p->cache_dir);
    snprintf(tmp, sizeof(tmp), "%.3990s/.new-XXXXXX", parent);
    int e = make_dirs(parent, 0700);
    if (e || !mkdtemp(tmp)) {
        snprintf(err, sizeof(err), "cannot make %.300s: %s", e ? parent : tmp,
                 strerror(e ? -e : errno));
    } else {
        fprintf(stderr, "airlock: pool %s: making its snapshot (once: it is cached in %s)\n",
                s->image, parent);
        snprintf(log, sizeof(log), "%s.log", tmp); /* beside: the folder must be empty */
        int log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        char mem[24], cpus[24];
        snprintf(mem, sizeof(mem), "%u", s->mem_mib);
        snprintf(cpus, sizeof(cpus), "%u", s->cpus);
        char *argv[] = {"airlock", "snapshot", "--out", tmp, "--image", s->image, "--mem", mem,
                        "--cpus", cpus, NULL};
        pid_t pid = log_fd < 0 ? -errno : vm_proc_spawn(argv, log_fd, -1, NULL, 0);
        if (log_fd >= 0)
            close(log_fd);
        int status = -1;
        while (pid > 0 && !vm_proc_ended(pid, &status) && !p->stop) {
            if (agent_mono_ms() - t0 > POOL_SNAPSHOT_MS) {
                vm_proc_stop(pid, SANDBOX_STOP_MS);
                snprintf(err, sizeof(err), "airlock snapshot ran past %d s",
                         POOL_SNAPSHOT_MS / 1000);
                break;
            }
            usleep(50000);
        }
        if (pid < 0)
            snprintf(err, sizeof(err), "cannot start airlock snapshot: %s", strerror((int)-pid));
        else if (p->stop)
            vm_proc_stop(pid, SANDBOX_STOP_MS);
        else if (!err[0] && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
            log_reason(log, err, sizeof(err));
        unlink(log);
        /* Another daemon may have made the same one meanwhile: keep that. */
        if (!err[0] && !p->stop && rename(tmp, dir) < 0 && !snapshot_complete(dir))
            snprintf(err, sizeof(err), "cannot keep the snapshot as %.300s: %s", dir,
                     strerror(errno));
        if (err[0] || p->stop || snapshot_complete(tmp))
            remove_tree(tmp);
    }
    pthread_mutex_lock(&p->lock);
    if (err[0])
        snprintf(s->error, sizeof(s->error), "%s", err);
    else if (!p->stop) {
        snprintf(s->snapshot, sizeof(s->snapshot), "%s", dir);
        s->snapshot_ms = (unsigned)(agent_mono_ms() - t0);
        s->error[0] = '\0';
    }
    pthread_mutex_unlock(&p->lock);
    if (err[0])
        fprintf(stderr, "airlock: pool %s: no snapshot, so no pool: %s\n", s->image, err);
    else if (!p->stop)
        fprintf(stderr, "airlock: pool %s: snapshot made in %.1f s\n", s->image,
                (double)s->snapshot_ms / 1000);
    return !err[0];
}

/* ---- filling ---- */

/* Pooled (ready) sandboxes of spec k; under the registry's lock. */
static unsigned ready_locked(struct pool *p, int k)
{
    unsigned n = 0;
    for (unsigned i = 0; i < SANDBOX_MAX; i++)
        n += p->reg->slots[i].state == SB_POOLED && p->reg->slots[i].pool == k;
    return n;
}

/* Restores one VM of spec k into the pool: 1 done, 0 no room (or
 * stopping), -1 it failed. */
static int fill_one(struct pool *p, unsigned k)
{
    struct pool_spec *s = &p->spec[k];
    int why;
    struct sandbox *sb = registry_add(p->reg, s->mem_mib, &why);
    if (!sb)
        return 0;
    sb->pool = (int)k;
    sb->cpus = s->cpus;
    snprintf(sb->image, sizeof(sb->image), "%s", s->image);
    char snap[PATH_MAX];
    pool_snapshot(p, (int)k, snap, sizeof(snap));
    struct sandbox_boot_req b = {.from_snapshot = snap};
    char err[600];
    const char *field;
    int http = sandbox_boot(p->run_dir, sb, &b, err, sizeof(err), &field);
    pthread_mutex_lock(&p->reg->lock);
    bool keep = !http && !p->stop;
    if (keep)
        sb->state = SB_POOLED;
    pthread_mutex_unlock(&p->reg->lock);
    if (!keep) {
        if (!http)
            sandbox_teardown(sb);
        registry_retire(p->reg, sb);
    }
    registry_put(p->reg, sb);
    if (http) {
        pthread_mutex_lock(&p->lock);
        s->failures++;
        snprintf(s->error, sizeof(s->error), "a restore failed: %.480s", err);
        pthread_mutex_unlock(&p->lock);
        fprintf(stderr, "airlock: pool %s: a restore failed: %s\n", s->image, err);
        return -1;
    }
    pthread_mutex_lock(&p->lock);
    s->failures = 0;
    pthread_mutex_unlock(&p->lock);
    return keep;
}

/* Restores that fail this many times in a row stop the pool's filling
 * until a create or a kick asks again: a broken snapshot must not spin. */
#define POOL_MAX_FAILURES 3

static void *pool_thread(void *arg)
{
    struct pool *p = arg;
    for (unsigned k = 0; k < p->n && !p->stop; k++)
        make_snapshot(p, k);
    while (!p->stop) {
        pthread_mutex_lock(&p->lock);
        int64_t quiet = p->last_take_ms + POOL_REFILL_DELAY_MS - agent_mono_ms();
        if (quiet > 0 && !p->stop) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_sec += quiet / 1000;
            until.tv_nsec += (quiet % 1000) * 1000000;
            if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&p->wake, &p->lock, &until);
        }
        pthread_mutex_unlock(&p->lock);
        if (quiet > 0)
            continue; /* look again: another take may have come */
        bool filled = false;
        for (unsigned k = 0; k < p->n && !p->stop; k++) {
            struct pool_spec *s = &p->spec[k];
            pthread_mutex_lock(&p->reg->lock);
            unsigned ready = ready_locked(p, (int)k);
            pthread_mutex_unlock(&p->reg->lock);
            if (!s->snapshot[0] || ready >= s->size || s->failures >= POOL_MAX_FAILURES)
                continue;
            /* One at a time: restores of several VMs at once would only
             * compete for the same CPUs. */
            if (fill_one(p, k) == 1)
                filled = true;
        }
        if (filled)
            continue;
        pthread_mutex_lock(&p->lock);
        if (!p->stop) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_sec += 1; /* room may have come back without a kick */
            pthread_cond_timedwait(&p->wake, &p->lock, &until);
        }
        pthread_mutex_unlock(&p->lock);
    }
    return NULL;
}

int pool_start(struct pool *p, struct registry *reg, const char *run_dir)
{
    p->reg = reg;
    snprintf(p->run_dir, sizeof(p->run_dir), "%s", run_dir);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (!p->n)
        return 0;
    int e = pthread_create(&p->thread, NULL, pool_thread, p);
    p->started = !e;
    return -e;
}

void pool_stop(struct pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    /* Not joined: a restore in flight may wait long for its VM, which the
     * daemon's exit ends anyway; a VM it makes now is not pooled. */
}

void pool_kick(struct pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->last_take_ms = agent_mono_ms();
    for (unsigned k = 0; k < p->n; k++)
        p->spec[k].failures = 0;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

/* ---- taking ---- */

int pool_match(struct pool *p, const char *image, unsigned mem_mib, unsigned cpus)
{
    for (unsigned k = 0; k < p->n; k++)
        if (!strcmp(p->spec[k].image, image) && p->spec[k].mem_mib == mem_mib &&
            p->spec[k].cpus == cpus)
            return (int)k;
    return -1;
}

bool pool_snapshot(struct pool *p, int k, char *out, size_t cap)
{
    pthread_mutex_lock(&p->lock);
    bool have = k >= 0 && (unsigned)k < p->n && p->spec[k].snapshot[0];
    snprintf(out, cap, "%s", have ? p->spec[k].snapshot : "");
    pthread_mutex_unlock(&p->lock);
    return have;
}

struct sandbox *pool_take(struct pool *p, int k)
{
    for (;;) {
        struct sandbox *sb = NULL;
        pthread_mutex_lock(&p->reg->lock);
        for (unsigned i = 0; i < SANDBOX_MAX && !sb; i++) {
            struct sandbox *s = &p->reg->slots[i];
            if (s->state == SB_POOLED && s->pool == k) {
                s->state = SB_STARTING;
                s->refs++;
                sb = s;
            }
        }
        pthread_mutex_unlock(&p->reg->lock);
        if (!sb)
            return NULL;
        pool_kick(p);
        /* It was reseeded as it was restored (fresh entropy, the host's
         * clock, which kvm-clock has kept since), before any command: it
         * goes as it is, without a guest round trip that would cost the
         * create as much as a command.  A VM whose process ended since
         * (the supervisor looks once a second) is dropped. */
        if (!vm_proc_ended(sb->pid, NULL))
            return sb;
        fprintf(stderr, "airlock: pool %s: a pooled VM had ended: dropped\n", p->spec[k].image);
        sb->pid = 0;
        registry_retire(p->reg, sb);
        sandbox_teardown(sb);
        registry_put(p->reg, sb);
    }
}

bool pool_evict_one(struct pool *p)
{
    struct sandbox *sb = NULL;
    pthread_mutex_lock(&p->reg->lock);
    for (unsigned i = 0; i < SANDBOX_MAX && !sb; i++)
        if (p->reg->slots[i].state == SB_POOLED) {
            sb = &p->reg->slots[i];
            sb->state = SB_GONE;
            sb->refs++;
        }
    pthread_mutex_unlock(&p->reg->lock);
    if (!sb)
        return false;
    sandbox_teardown(sb);
    registry_put(p->reg, sb);
    return true;
}

json_t *pool_json(struct pool *p)
{
    json_t *arr = json_array();
    for (unsigned k = 0; k < p->n; k++) {
        struct pool_spec *s = &p->spec[k];
        pthread_mutex_lock(&p->reg->lock);
        unsigned ready = ready_locked(p, (int)k);
        pthread_mutex_unlock(&p->reg->lock);
        pthread_mutex_lock(&p->lock);
        json_array_append_new(arr, json_pack("{s:s,s:i,s:i,s:i,s:i,s:s?,s:b,s:i,s:s?}",
                                             "image", s->image, "mem", s->mem_mib, "cpus",
                                             s->cpus, "size", s->size, "ready", ready,
                                             "snapshot", s->snapshot[0] ? s->snapshot : NULL,
                                             "cached", s->cached, "snapshot_ms",
                                             s->snapshot_ms, "error",
                                             s->error[0] ? s->error : NULL));
        pthread_mutex_unlock(&p->lock);
    }
    return json_pack("{s:o}", "pools", arr);
}
