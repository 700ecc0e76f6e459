/* The warm pool (`airlock serve --pool IMAGE=N`): for each image named,
 * the daemon makes a snapshot of a freshly booted VM once (cached on
 * disk, keyed by the airlock binary, the image file and the VM's shape)
 * and keeps N sandboxes restored from it ready.  A create that asks for
 * exactly that (image, memory, vCPUs; no egress rules, no extra kernel
 * words) takes one; the pool refills in the background.  A create of the
 * same shape with egress rules is restored from the snapshot (its rules
 * are the VM's own flags, so it cannot come from the pool); anything else
 * boots cold.
 *
 * Pooled VMs are sandboxes in state SB_POOLED: they count against
 * --max-sandboxes and --max-mem, and a create that finds no room evicts
 * one.  Each is as private as any restored VM (copy-on-write RAM and disk)
 * and was reseeded (entropy, clock) when it was restored. */
#ifndef AIRLOCK_SANDBOX_POOL_H
#define AIRLOCK_SANDBOX_POOL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>

#include <jansson.h>

#include "vmm/sandbox/registry.h"

#define POOL_SPECS_MAX 8
#define POOL_SIZE_MAX  64
/* Refills start this long after the last take: a burst of creates does
 * not compete for the CPUs with the restores that replace what it took
 * (one vCPU in the lab: a take beside a restore took 4x as long). */
#define POOL_REFILL_DELAY_MS 1000
/* A snapshot gets this long to be made (a cold boot; the lab is slow). */
#define POOL_SNAPSHOT_MS 300000

struct pool_spec {
    char image[PATH_MAX]; /* as --image takes it */
    unsigned size, mem_mib, cpus;
    char snapshot[PATH_MAX]; /* "" until there is one */
    bool cached;          /* found in the cache, not made by this daemon */
    unsigned snapshot_ms; /* how long making it took */
    char error[512];      /* why there is none */
    unsigned failures;    /* restores that failed in a row */
};

struct pool {
    struct pool_spec spec[POOL_SPECS_MAX];
    unsigned n;
    char cache_dir[PATH_MAX];
    struct registry *reg;
    char run_dir[PATH_MAX];
    pthread_mutex_t lock; /* the specs' snapshot fields, stop */
    pthread_cond_t wake;
    bool stop, started;
    int64_t last_take_ms; /* monotonic, under lock */
    pthread_t thread;
};

/* Adds "IMAGE=N[,mem=MiB][,cpus=N]" (N 1..POOL_SIZE_MAX).  0, or -1 with
 * err naming what is wrong. */
int pool_add(struct pool *p, const char *arg, char *err, size_t cap);


/* Starts the thread that makes the snapshots and fills the pools (a
 * no-op without specs).  0 or -errno. */
int pool_start(struct pool *p, struct registry *reg, const char *run_dir);
/* Stops filling (the VMs already pooled go with the registry). */
void pool_stop(struct pool *p);
/* A pooled VM was taken: refill, POOL_REFILL_DELAY_MS later (and try
 * again restores that failed). */
void pool_kick(struct pool *p);

/* The spec that makes exactly this shape, or -1. */
int pool_match(struct pool *p, const char *image, unsigned mem_mib, unsigned cpus);
/* A pooled sandbox of spec k whose VM still runs, claimed (SB_STARTING,
 * one reference); NULL when none is ready. */
struct sandbox *pool_take(struct pool *p, int k);
/* Spec k's snapshot directory (for a restore), or NULL. */
bool pool_snapshot(struct pool *p, int k, char *out, size_t cap);
/* Destroys one pooled sandbox to make room for a create: whether there
 * was one. */
bool pool_evict_one(struct pool *p);

/* {"pools": [{"image","mem","cpus","size","ready","snapshot","cached",
 *  "snapshot_ms","error"}...]} */
json_t *pool_json(struct pool *p);

#endif
