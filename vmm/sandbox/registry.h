/* The daemon's sandboxes: a fixed table under one lock.  A handler takes
 * a reference (sandbox_get) for as long as it uses a sandbox, so a DELETE
 * that races a command waits for nothing and frees nothing in use: the
 * sandbox is marked gone at once (new requests get 404) and its slot is
 * reused only once the last reference is dropped. */
#ifndef AIRLOCK_SANDBOX_REGISTRY_H
#define AIRLOCK_SANDBOX_REGISTRY_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "vmm/audit/audit.h"

struct bg_table;
struct forwarder;

#define SANDBOX_MAX     256 /* the most --max-sandboxes allows */
#define SANDBOX_ID_HEX  16  /* 64 random bits, as hex */

/* SB_POOLED: ready in the warm pool (vmm/sandbox/pool.h), not yet anyone's:
 * counted against the limits, never listed or found by id.  SB_PAUSED:
 * saved to the state folder, no VM process (vmm/sandbox/sandbox_pause.h):
 * listed and found, holding a slot but no share of --max-sandboxes or
 * --max-mem. */
enum sandbox_state { SB_FREE, SB_STARTING, SB_POOLED, SB_RUNNING, SB_PAUSED, SB_GONE };

/* The VM-wide limits a create gave, as `airlock run` flags: a resume
 * gives them to the new VM process again. */
#define SANDBOX_LIMITS_MAX 8
struct sandbox_limit {
    const char *flag; /* a static string ("--cpu-quota") */
    char value[24];
};

#define SANDBOX_DEFAULT_MEM_MIB 256

/* What its VM processes use on the host, sampled by
 * vmm/sandbox/sandbox_stats.h (at most SANDBOX_STATS_MAX_AGE_MS old). */
struct sandbox_stats {
    int64_t at_ms;        /* wall clock of the sample, ms since the epoch; 0: none yet */
    int64_t at_mono_ms;
    uint64_t cpu_ms;      /* user + system time of the processes, all told */
    int cpu_pct10;        /* tenths of a percent of one CPU since the sample before; -1: none */
    uint64_t rss, pss;    /* bytes */
    uint64_t overlay;     /* bytes its disk overlays hold on the host */
};

struct sandbox {
    enum sandbox_state state;
    unsigned refs;
    char id[SANDBOX_ID_HEX + 1];
    pid_t pid;            /* the airlock sandbox-vm process; 0 once reaped */
    char dir[PATH_MAX];   /* private: agent.sock, vm.log */
    char sock[PATH_MAX];  /* dir/agent.sock (--vsock-uds) */
    char image[PATH_MAX];
    unsigned mem_mib, cpus;
    json_t *env;          /* object: defaults for its commands (owned) */
    /* More defaults for its commands, from an imported image's config
     * (vmm/sandbox/image_defaults.h): WorkingDir ("" = /), User as numbers,
     * or why its User has none (a command must then give "user"). */
    char cwd[256];
    bool has_user;
    uint32_t uid, gid;
    char user_error[320];
    json_t *labels;       /* object (owned) */
    int64_t created_ms;   /* wall clock, ms since the epoch */
    unsigned create_ms;   /* how long the create took */
    unsigned lease_s;     /* idle this long: destroyed (0: never) */
    unsigned max_lifetime_s; /* destroyed this long after creation (0: never) */
    int64_t last_used_mono_ms;
    unsigned running;     /* commands running now */
    unsigned foreground;  /* of those, streamed to their caller (a pause would end them) */
    unsigned proxying;    /* requests on a guest port's HTTP route now */
    unsigned watches;     /* file watches open now (vmm/sandbox/watch_stream.h) */
    uint64_t commands;    /* commands run so far */
    struct bg_table *bg;  /* background commands (vmm/sandbox/background.h), made on first use */
    int pool;             /* SB_POOLED, or taken from it: its pool's index; else -1 */
    struct audit audit;   /* dir/audit.jsonl, records under its id (vmm/sandbox/sandbox_audit.h) */
    /* Its published ports (vmm/sandbox/sandbox_ports.h), made on the
     * first; the pointer is read and changed under ports_lock. */
    struct forwarder *ports;
    pthread_mutex_t ports_lock;
    int control_fd;       /* its VM's control socket (snapshots), -1: none */
    pthread_mutex_t control_lock; /* one request at a time on it */
    /* Its egress broker's allowlist channel (vmm/egress/egress_rules.h),
     * -1: none; and the lists in force, as the API takes them (arrays of
     * strings, owned; replaced under egress_lock and the registry's lock,
     * read under either). */
    int egress_fd;
    pthread_mutex_t egress_lock; /* one change at a time */
    json_t *allow, *allow_ip;
    char snapshot[SANDBOX_ID_HEX + 1]; /* restored from this snapshot of the API, or "" */
    uint64_t audit_forwarded; /* bytes of it copied to the daemon's --audit */
    uint64_t audit_tallied;   /* bytes of it counted (vmm/sandbox/audit_tally.h) */
    uint64_t egress_out, egress_in; /* bytes of its egress connections that ended */
    struct sandbox_stats stats;
    const char *how;      /* "pool", "restore" or "cold" */
    /* The E2B layer's (vmm/e2b/): the sandbox plane's access token, made
     * when first handed out (hex of 32 random bytes, "" until then), and
     * the template name a create gave. */
    char access_token[65];
    char template_id[128];
    /* Pausing and resuming (vmm/sandbox/sandbox_pause.h). */
    pthread_mutex_t life_lock;  /* one pause or resume at a time */
    pthread_cond_t vm_cond;     /* (with the registry's lock) a resume, or the end */
    unsigned vm_gen;            /* VMs it had: +1 at each resume */
    char vm_snapshot[PATH_MAX]; /* the folder its VM was restored from or
                                 * paused into, kept until the next pause
                                 * or its end ("" for none of its own) */
    struct sandbox_limit limits[SANDBOX_LIMITS_MAX];
    unsigned nlimits;
    const char *no_pause;       /* why it cannot be paused (static), or NULL */
    bool pause_on_timeout;      /* on_timeout "pause": a lease that runs out pauses it */
    bool timeout_fs_only;       /* ...keeping its files only (create's pause_memory false) */
    bool paused_fs_only;        /* paused without its memory: it resumes by a cold boot */
    int64_t paused_ms;          /* wall clock of its last pause */
    unsigned pauses, resumes;
    json_t *identity;           /* what its saved VM depends on (vm_identity.h), owned */
    /* Its named volumes as its record shows them (create_volumes.h), owned;
     * NULL: none.  Held in the store under its id until it is destroyed. */
    json_t *volumes;
    bool volume_rw; /* one of them read-write: synced before its VM stops */
};

struct registry {
    pthread_mutex_t lock;
    /* Called (under the lock) as a slot is freed, for what others hung
     * on it (background commands): the registry knows nothing of them. */
    void (*release)(struct sandbox *sb);
    struct sandbox slots[SANDBOX_MAX];
    unsigned max;       /* --max-sandboxes */
    uint64_t max_mem_mib; /* --max-mem: RAM of all sandboxes together (0: no limit) */
};

void registry_init(struct registry *reg, unsigned max, uint64_t max_mem_mib);

/* A new sandbox in state SB_STARTING with one reference, or NULL with
 * *why: -ENOSPC (--max-sandboxes reached) or -ENOMEM (--max-mem). */
struct sandbox *registry_add(struct registry *reg, unsigned mem_mib, int *why);

/* The sandbox with this id in state SB_RUNNING, with a reference taken;
 * NULL when there is none. */
struct sandbox *registry_get(struct registry *reg, const char *id);
/* The same, SB_RUNNING or SB_PAUSED. */
struct sandbox *registry_find(struct registry *reg, const char *id);

/* Whether sb (SB_PAUSED) fits the limits again, beside the others: 0,
 * -ENOSPC (--max-sandboxes) or -ENOMEM (--max-mem). */
int registry_admit(struct registry *reg, const struct sandbox *sb);

/* A slot for a sandbox a record in the state folder describes, with its
 * id: SB_STARTING, one reference (the caller fills it in and makes it
 * SB_PAUSED); NULL when the id is taken or no slot is free. */
struct sandbox *registry_add_saved(struct registry *reg, const char *id);

/* One more reference to a sandbox the caller holds one of. */
void registry_ref(struct registry *reg, struct sandbox *sb);

/* Drops a reference; the slot is freed with the last one once the
 * sandbox is SB_GONE. */
void registry_put(struct registry *reg, struct sandbox *sb);

/* Marks it SB_GONE (under the lock); true when this call did it (so the
 * caller stops its VM), false when someone else already had. */
bool registry_retire(struct registry *reg, struct sandbox *sb);

#endif
