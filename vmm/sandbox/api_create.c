#include "vmm/sandbox/api_create.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/image/image_ref.h"
#include "vmm/sandbox/api_fields.h"
#include "vmm/forward/forward.h"
#include "vmm/sandbox/api_ports.h"
#include "vmm/sandbox/events.h"
#include "vmm/sandbox/metrics.h"
#include "vmm/sandbox/create_volumes.h"
#include "vmm/sandbox/image_defaults.h"
#include "vmm/sandbox/sandbox_boot.h"
#include "vmm/sandbox/sandbox_egress.h"
#include "vmm/sandbox/sandbox_life.h"
#include "vmm/volume/volume_hold.h"

static const char *const create_fields[] = {
    "image", "mem", "cpus", "allow", "allow_ip", "env", "labels", "timeout_s", "max_lifetime_s",
    "append", "snapshot", "disk_cap_mib", "cpu_quota_pct", "egress_max_conns", "egress_max_mib",
    "egress_rate", "secrets", "ca_file", "mounts", "ports", "on_timeout", "pause_memory", NULL,
};

/* The VM-wide limits a create may give, as `airlock run`'s flags (the VM
 * checks their values and names the field when it refuses one). */
static const struct { const char *field, *flag; bool shapes; } vm_limits[] = {
    {"disk_cap_mib", "--disk-cap", true}, /* a snapshot fixed its disks: cold only */
    {"cpu_quota_pct", "--cpu-quota", false},
    {"egress_max_conns", "--egress-max-conns", false},
    {"egress_max_mib", "--egress-max-mib", false},
    {"egress_rate", "--egress-rate", false},
};
#define VM_LIMITS (sizeof(vm_limits) / sizeof(vm_limits[0]))
_Static_assert(VM_LIMITS <= SANDBOX_LIMITS_MAX, "a sandbox keeps every limit");

const char *api_create_resume_flag(const char *flag)
{
    for (size_t i = 0; i < VM_LIMITS; i++)
        if (!vm_limits[i].shapes && !strcmp(flag, vm_limits[i].flag))
            return vm_limits[i].flag;
    return NULL;
}

/* A create's large parts (secrets, host folders, ports: tens of KiB), on
 * the heap: as thread-local statics they made every thread's static TLS
 * so large that the forwarder's 256 KiB connection threads could no
 * longer be made (pthread_create: EINVAL). */
struct create_parts {
    struct create_secrets secrets;
    struct create_mounts mounts;
    struct forward_spec ports[API_PORTS_MAX];
};

static struct sandbox *create_with(struct api_server *srv, struct api_conn *c, json_t *o,
                                   struct create_parts *parts)
{
    struct fields f = {c, o, false};
    only_known(&f, create_fields);
    const char *image = get_text(&f, "image");
    const char *append = get_text(&f, "append");
    long long mem = get_uint(&f, "mem", 8, 1048576, SANDBOX_DEFAULT_MEM_MIB);
    long long cpus = get_uint(&f, "cpus", 1, 64, 1);
    json_t *allow = get_list(&f, "allow", FIELD_MAX_TEXT);
    json_t *allow_ip = get_list(&f, "allow_ip", FIELD_MAX_TEXT);
    json_t *env = get_vars(&f, "env"), *labels = get_vars(&f, "labels");
    long long lease = get_uint(&f, "timeout_s", 0, 31536000, SANDBOX_DEFAULT_LEASE_S);
    long long life = get_uint(&f, "max_lifetime_s", 0, 31536000, 0);
    const char *snap_id = get_text(&f, "snapshot");
    const char *ca_file = get_text(&f, "ca_file");
    const char *on_timeout = get_text(&f, "on_timeout");
    if (!f.failed && on_timeout && strcmp(on_timeout, "kill") && strcmp(on_timeout, "pause"))
        field_error(&f, "on_timeout", "on_timeout '%.32s': want \"kill\" or \"pause\"",
                    on_timeout);
    bool pause_memory = get_bool(&f, "pause_memory", true);
    if (!f.failed && !pause_memory && !(on_timeout && !strcmp(on_timeout, "pause")))
        field_error(&f, "pause_memory", "%s",
                    "pause_memory is how on_timeout \"pause\" pauses: give on_timeout \"pause\"");
    struct create_secrets *secrets = &parts->secrets;
    create_secrets_parse(&f, secrets);
    if (!f.failed && ca_file && !secrets->n)
        field_error(&f, "ca_file", "%s", "ca_file is for the hosts of secrets");
    struct create_mounts *mounts = &parts->mounts;
    /* a token is what TCP's listener asks (cmd_serve.c) */
    struct mount_policy policy = {&srv->mount_roots, c->token != NULL};
    create_mounts_parse(&f, mounts, &policy);
    struct forward_spec *ports = parts->ports;
    unsigned nports;
    api_ports_parse(&f, ports, &nports);
    if (!f.failed && snap_id && mounts->n)
        field_error(&f, "mounts", "%s", "mounts are fixed by the snapshot (its VM's disks)");
    const char *limits[2 * VM_LIMITS + 1];
    char limit_val[VM_LIMITS][24];
    size_t nlimits = 0;
    bool shaped = false; /* a limit that only a cold boot can give */
    for (size_t i = 0; i < VM_LIMITS; i++) {
        long long v = get_uint(&f, vm_limits[i].field, 0, 1LL << 40, -1);
        if (v < 0)
            continue;
        snprintf(limit_val[i], sizeof(limit_val[i]), "%lld", v);
        limits[nlimits++] = vm_limits[i].flag;
        limits[nlimits++] = limit_val[i];
        shaped = shaped || vm_limits[i].shapes;
    }
    limits[nlimits] = NULL;
    if (!f.failed && snap_id && shaped)
        field_error(&f, "disk_cap_mib", "%s", "disk_cap_mib is fixed by the snapshot");
    struct snapshot_rec snap;
    if (!f.failed && snap_id) {
        /* The snapshot fixed the VM: its image, memory and vCPUs. */
        static const char *const fixed[] = {"image", "mem", "cpus", "append"};
        for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]) && !f.failed; i++)
            if (json_object_get(o, fixed[i]))
                field_error(&f, fixed[i], "%s is fixed by the snapshot", fixed[i]);
        if (!f.failed && !snapshots_find(&srv->snaps, snap_id, &snap)) {
            api_error(c, 404, "snapshot", "no snapshot '%.64s'", snap_id);
            return NULL;
        }
        if (!f.failed) {
            image = snap.image;
            mem = snap.mem_mib;
            cpus = snap.cpus;
        }
    }
    /* The image must exist before a VM is asked for; an imported one's
     * config gives its commands their defaults. */
    struct image_ref ref = {0};
    char image_err[600];
    if (!f.failed && image_ref_resolve(image, &ref, image_err, sizeof(image_err)))
        field_error(&f, "image", "%s", image_err);
    if (f.failed) {
        create_secrets_close(secrets);
        return NULL;
    }
    int64_t t0 = agent_mono_ms();
    if (!image)
        image = "python";
    /* The pool when the create asks for exactly its VM; a restore of the
     * pool's snapshot when only the egress rules differ (they are the
     * VM's own flags); else a cold boot. */
    int k = snap_id ? -1 : pool_match(&srv->pool, image, (unsigned)mem, (unsigned)cpus);
    bool plain = !append && !json_array_size(allow) && !json_array_size(allow_ip) && !nlimits &&
                 !secrets->n && !mounts->n;
    struct sandbox *sb = k >= 0 && plain ? pool_take(&srv->pool, k) : NULL;
    int why = 0;
    if (sb) {
        sb->how = "pool";
    } else {
        while (!(sb = registry_add(&srv->reg, (unsigned)mem, &why)) && why != -EIO &&
               pool_evict_one(&srv->pool))
            ; /* a pooled VM makes room for one that is asked for */
    }
    if (!sb) {
        api_error(c, 503, why == -ENOMEM ? "mem" : NULL,
                  why == -ENOSPC ? "the daemon runs as many sandboxes as --max-sandboxes allows"
                  : why == -ENOMEM ? "this sandbox's memory would pass the daemon's --max-mem"
                                   : "cannot make a sandbox id");
        create_secrets_close(secrets);
        image_ref_release(&ref);
        return NULL;
    }
    /* Its volumes, held under its id before its VM starts. */
    json_t *volumes = NULL;
    char vol_err[900], vol_field[40];
    int vol_http = create_volumes_hold(&srv->volumes, sb->id, mounts, &volumes, vol_err,
                                       sizeof(vol_err), vol_field, sizeof(vol_field));
    if (vol_http) {
        api_error(c, vol_http, vol_field, "%s", vol_err);
        create_secrets_close(secrets);
        image_ref_release(&ref);
        registry_retire(&srv->reg, sb);
        registry_put(&srv->reg, sb);
        return NULL;
    }
    sb->volumes = volumes;
    for (unsigned i = 0; i < mounts->n; i++)
        sb->volume_rw = sb->volume_rw || (mounts->volume[i] && mounts->rw[i]);
    sb->cpus = (unsigned)cpus;
    sb->lease_s = (unsigned)lease;
    sb->pause_on_timeout = on_timeout && !strcmp(on_timeout, "pause");
    sb->timeout_fs_only = !pause_memory;
    for (size_t i = 0; limits[i] && limits[i + 1] && sb->nlimits < SANDBOX_LIMITS_MAX; i += 2) {
        if (!api_create_resume_flag(limits[i]))
            continue; /* the disks' shape is in the snapshot */
        sb->limits[sb->nlimits].flag = limits[i];
        snprintf(sb->limits[sb->nlimits++].value, sizeof(sb->limits[0].value), "%s", limits[i + 1]);
    }
    /* A restored VM gets its flags again, but not these: a secret's value
     * is never kept (nor written to the state folder), and a host folder's
     * disk is the VM's own, not in a snapshot. */
    sb->no_pause = secrets->n ? "it has secrets, whose values the daemon does not keep"
                   : volumes ? "it has named volumes mounted (a volume's disk is its own, "
                               "not in a snapshot)"
                   : mounts->n ? "it has host folders mounted (mounts)" : NULL;
    sb->max_lifetime_s = (unsigned)life;
    image_defaults_apply(sb, ref.rec, env);
    image_ref_release(&ref);
    sb->labels = labels ? json_incref(labels) : json_object();
    sandbox_egress_init(sb, allow, allow_ip);
    if (!sb->how) {
        snprintf(sb->image, sizeof(sb->image), "%s", image);
        char pool_snap[PATH_MAX];
        struct sandbox_boot_req b = {.append = append, .allow = allow, .allow_ip = allow_ip,
                                     .limits = limits, .secrets = secrets, .ca_file = ca_file,
                                     .mounts = mounts};
        if (snap_id) {
            b.from_snapshot = snap.dir;
            snprintf(sb->snapshot, sizeof(sb->snapshot), "%s", snap.id);
        } else if (k >= 0 && !append && !shaped && !mounts->n && /* disks: cold only */
                   pool_snapshot(&srv->pool, k, pool_snap, sizeof(pool_snap))) {
            b.from_snapshot = pool_snap;
        }
        sb->how = b.from_snapshot ? "restore" : "cold";
        char err[600];
        const char *field;
        int http = sandbox_boot(srv->run_dir, sb, &b, err, sizeof(err), &field);
        create_secrets_close(secrets); /* the VM has them, or never will */
        if (http) {
            api_error(c, http, field, "%s", err);
            if (sb->volumes)
                volume_release_holder(&srv->volumes, sb->id);
            registry_retire(&srv->reg, sb);
            registry_put(&srv->reg, sb);
            return NULL;
        }
    }
    char port_err[300];
    const char *port_field;
    int port_http = api_ports_publish(sb, ports, nports, port_err, sizeof(port_err), &port_field);
    if (port_http) {
        api_error(c, port_http, port_field, "%s", port_err);
        registry_ref(&srv->reg, sb);
        sandbox_destroy(srv, sb); /* its VM too */
        registry_put(&srv->reg, sb);
        return NULL;
    }
    pthread_mutex_lock(&srv->reg.lock);
    sb->created_ms = agent_wall_ms();
    sb->create_ms = (unsigned)(agent_mono_ms() - t0);
    sb->last_used_mono_ms = agent_mono_ms();
    sb->state = SB_RUNNING;
    json_t *ev = json_pack("{s:s,s:s,s:i}", "how", sb->how, "image", sb->image, "create_ms",
                           (json_int_t)sb->create_ms);
    pthread_mutex_unlock(&srv->reg.lock);
    metrics_count_create(sb->how, sb->create_ms);
    events_emit(EVENT_CREATED, sb->id, ev);
    return sb;
}

struct sandbox *api_create_sandbox(struct api_server *srv, struct api_conn *c, json_t *o)
{
    struct create_parts *parts = calloc(1, sizeof(*parts));
    if (!parts) {
        api_error(c, 500, NULL, "out of memory");
        return NULL;
    }
    struct sandbox *sb = create_with(srv, c, o, parts);
    free(parts);
    return sb;
}
