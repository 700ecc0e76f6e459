/* Volume holders; see volume_hold.h. */
#include "vmm/volume/volume_hold.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/util/proc_start.h"

static bool same(const struct volume_holder *a, const struct volume_holder *b)
{
    if (a->sandbox[0] || b->sandbox[0])
        return !strcmp(a->sandbox, b->sandbox);
    return a->pid == b->pid && a->pid_start == b->pid_start;
}

void volume_holder_text(const struct volume_holder *h, char *out, size_t cap)
{
    if (h->sandbox[0])
        snprintf(out, cap, "sandbox %s", h->sandbox);
    else
        snprintf(out, cap, "airlock run (pid %ld)", h->pid);
}

void volume_holders_text(const struct volume_rec *rec, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < rec->nholders && n < cap; i++) {
        char who[80];
        volume_holder_text(&rec->h[i], who, sizeof(who));
        n += (size_t)snprintf(out + n, cap - n, "%s%s (%s)", i ? ", " : "", who,
                              rec->h[i].readonly ? "read-only" : "read-write");
    }
}

void volume_holder_self(struct volume_holder *h, bool readonly)
{
    memset(h, 0, sizeof(*h));
    h->pid = (long)getpid();
    h->pid_start = proc_start_time((pid_t)h->pid);
    h->readonly = readonly;
}

/* The record's holders without those that are gone; whether any went. */
static bool drop_gone(struct volume_rec *rec)
{
    unsigned k = 0;
    for (unsigned i = 0; i < rec->nholders; i++)
        if (volume_holder_alive(&rec->h[i]))
            rec->h[k++] = rec->h[i];
    bool dropped = k != rec->nholders;
    rec->nholders = k;
    return dropped;
}

int volume_hold(const struct volume_store *vs, const char *name, const struct volume_holder *who,
                bool *readers_before, struct volume_holder *in_way)
{
    static __thread struct volume_rec rec; /* 256 holders: too big for a thread's stack */
    *readers_before = false;
    int lk = volume_store_lock(vs, true);
    if (lk < 0)
        return lk;
    int rc = volume_store_read(vs, name, &rec);
    if (!rc)
        drop_gone(&rec);
    for (unsigned i = 0; !rc && i < rec.nholders; i++) {
        const struct volume_holder *h = &rec.h[i];
        if (same(h, who))
            rc = -EEXIST;
        else if (!who->readonly || !h->readonly)
            rc = -EBUSY;
        if (rc)
            *in_way = *h;
    }
    if (!rc && rec.nholders >= VOLUME_HOLDERS_MAX) {
        *in_way = rec.h[0];
        rc = -EBUSY;
    }
    if (!rc) {
        *readers_before = rec.nholders > 0;
        rec.h[rec.nholders++] = *who;
        rc = volume_store_write(vs, &rec);
    }
    volume_store_unlock(lk);
    return rc;
}

/* Drops every holder match() takes from one volume's record. */
static int drop(const struct volume_store *vs, const char *name,
                bool (*match)(const struct volume_holder *h, const void *arg), const void *arg)
{
    static __thread struct volume_rec rec;
    int rc = volume_store_read(vs, name, &rec);
    if (rc)
        return rc;
    bool changed = drop_gone(&rec);
    unsigned k = 0;
    for (unsigned i = 0; i < rec.nholders; i++)
        if (!match(&rec.h[i], arg))
            rec.h[k++] = rec.h[i];
    changed = changed || k != rec.nholders;
    rec.nholders = k;
    return changed ? volume_store_write(vs, &rec) : 0;
}

static bool is_holder(const struct volume_holder *h, const void *who)
{
    return same(h, who);
}

int volume_release(const struct volume_store *vs, const char *name, const struct volume_holder *who)
{
    int lk = volume_store_lock(vs, true);
    if (lk < 0)
        return lk;
    int rc = drop(vs, name, is_holder, who);
    volume_store_unlock(lk);
    return rc == -ENOENT ? 0 : rc;
}

/* Over every volume, under one lock. */
static void drop_everywhere(const struct volume_store *vs,
                            bool (*match)(const struct volume_holder *h, const void *arg),
                            const void *arg)
{
    char **names;
    size_t n;
    int lk = volume_store_lock(vs, true);
    if (lk < 0)
        return;
    if (!volume_names(vs, &names, &n)) {
        for (size_t i = 0; i < n; i++) {
            drop(vs, names[i], match, arg);
            free(names[i]);
        }
        free(names);
    }
    volume_store_unlock(lk);
}

static bool is_sandbox(const struct volume_holder *h, const void *id)
{
    return h->sandbox[0] && !strcmp(h->sandbox, id);
}

void volume_release_holder(const struct volume_store *vs, const char *sandbox_id)
{
    drop_everywhere(vs, is_sandbox, sandbox_id);
}

struct prune {
    bool (*kept)(const char *sandbox_id, void *opaque);
    void *opaque;
};

static bool not_kept(const struct volume_holder *h, const void *arg)
{
    const struct prune *p = arg;
    return h->sandbox[0] && !p->kept(h->sandbox, p->opaque);
}

void volume_prune_sandboxes(const struct volume_store *vs,
                            bool (*kept)(const char *sandbox_id, void *opaque), void *opaque)
{
    struct prune p = {kept, opaque};
    drop_everywhere(vs, not_kept, &p);
}
