/* config.json's tmpfs mounts' options and linux.maskedPaths,
 * readonlyPaths, sysctl, devices and rootfsPropagation (oci_config.h): what the container's own view of the
 * guest should be, which the agent applies when it makes the container
 * (guest/agent/proto.h, EXEC's linux section).  Each value is checked
 * here by the agent's own rules (vmm/agent_client), so a config the
 * agent would refuse fails at `create` naming the field, not at `start`
 * as a protocol error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/runtime/oci_config.h"
#include "vmm/runtime/oci_json.h"

/* The agent's rule for the section's paths (agent_lnx_path_ok). */
static bool path_ok(const char *p, bool device)
{
    return agent_lnx_path_ok(p, strlen(p), device);
}

/* j is an array (an object, with `object`) of at most OCI_MAX_LINUX_LIST
 * entries: 0, or -1 with err "FIELD: want an array of at most 64 WHAT". */
static int bounded(const json_t *j, bool object, const char *field, const char *what, char *err,
                   size_t cap)
{
    if (object ? json_is_object(j) && json_object_size(j) <= OCI_MAX_LINUX_LIST
               : json_is_array(j) && json_array_size(j) <= OCI_MAX_LINUX_LIST)
        return 0;
    char why[64];
    snprintf(why, sizeof(why), "want an %s of at most %d %s", object ? "object" : "array",
             OCI_MAX_LINUX_LIST, what);
    return oci_json_bad(err, cap, field, why);
}

static int bad_value(char *err, size_t cap, const char *field, const char *value, const char *why)
{
    snprintf(err, cap, "%s: %.200s: %s", field, value, why);
    return -1;
}

static int parse_paths(const json_t *a, const char *field, const char **out, unsigned *n,
                       char *err, size_t cap)
{
    if (!a || json_is_null(a))
        return 0;
    if (bounded(a, false, field, "paths", err, cap))
        return -1;
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        const char *p = oci_json_str_of(e);
        if (!p)
            return oci_json_bad(err, cap, field, "want strings");
        if (!path_ok(p, false))
            return bad_value(err, cap, field, p, "want a clean absolute path");
        out[(*n)++] = p;
    }
    return 0;
}

static int parse_sysctl(const json_t *o, struct oci_linux *v, char *err, size_t cap)
{
    if (!o || json_is_null(o))
        return 0;
    if (bounded(o, true, "linux.sysctl", "strings", err, cap))
        return -1;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)o, key, val) {
        const char *s = json_string_value(val);
        if (!agent_sysctl_key_ok(key, strlen(key)))
            return bad_value(err, cap, "linux.sysctl", key,
                             "want a key of letters, digits, '_' and '-' joined by '.'");
        if (!s || strlen(s) != json_string_length(val) || !agent_sysctl_value_ok(s, strlen(s)))
            return bad_value(err, cap, "linux.sysctl", key, "want a one-line string value");
        v->sysctl[v->nsysctl++] = (struct oci_sysctl){key, s};
    }
    return 0;
}

static int parse_device(const json_t *e, struct oci_device *d, char *err, size_t cap)
{
    const char *type = oci_json_str_of(json_object_get(e, "type"));
    d->path = oci_json_str_of(json_object_get(e, "path"));
    if (!json_is_object(e) || !d->path || !type)
        return oci_json_bad(err, cap, "linux.devices", "want objects with a path and a type");
    if (!path_ok(d->path, true))
        return bad_value(err, cap, "linux.devices", d->path,
                         "want a clean absolute path outside /proc and /sys");
    if (strlen(type) != 1 || !strchr("cubp", type[0]))
        return bad_value(err, cap, "linux.devices.type", type, "want c, u, b or p");
    d->type = type[0] == 'u' ? 'c' : type[0];
    int64_t major = 0, minor = 0, mode = 0666, uid = 0, gid = 0;
    if (oci_json_int_field(e, "major", "linux.devices.major", 0, AGENT_LNX_MAJOR_LIMIT - 1, &major, err, cap) ||
        oci_json_int_field(e, "minor", "linux.devices.minor", 0, AGENT_LNX_MINOR_LIMIT - 1, &minor, err, cap) ||
        oci_json_int_field(e, "fileMode", "linux.devices.fileMode", 0, 07777, &mode, err, cap) ||
        oci_json_int_field(e, "uid", "linux.devices.uid", 0, UINT32_MAX - 1, &uid, err, cap) ||
        oci_json_int_field(e, "gid", "linux.devices.gid", 0, UINT32_MAX - 1, &gid, err, cap))
        return -1;
    /* The spec: major and minor are required for every type but a FIFO. */
    if (d->type != 'p' && (!json_object_get(e, "major") || !json_object_get(e, "minor")))
        return bad_value(err, cap, "linux.devices", d->path, "a device without major and minor");
    d->major = d->type == 'p' ? 0 : (uint32_t)major;
    d->minor = d->type == 'p' ? 0 : (uint32_t)minor;
    d->mode = (uint32_t)mode;
    d->uid = (uint32_t)uid;
    d->gid = (uint32_t)gid;
    return 0;
}

static int parse_devices(const json_t *a, struct oci_linux *v, char *err, size_t cap)
{
    if (!a || json_is_null(a))
        return 0;
    if (bounded(a, false, "linux.devices", "devices", err, cap))
        return -1;
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e)
        if (parse_device(e, &v->devices[v->ndevices++], err, cap))
            return -1;
    return 0;
}

unsigned oci_propagation_of(const char *name)
{
    static const char *const names[] = {
        [AGENT_LNX_PROP_SHARED] = "shared",     [AGENT_LNX_PROP_SLAVE] = "slave",
        [AGENT_LNX_PROP_PRIVATE] = "private",   [AGENT_LNX_PROP_UNBINDABLE] = "unbindable",
        [AGENT_LNX_PROP_RSHARED] = "rshared",   [AGENT_LNX_PROP_RSLAVE] = "rslave",
        [AGENT_LNX_PROP_RPRIVATE] = "rprivate", [AGENT_LNX_PROP_RUNBINDABLE] = "runbindable",
    };
    for (unsigned p = 1; name && p <= AGENT_LNX_PROP_LAST; p++)
        if (!strcmp(name, names[p]))
            return p;
    return 0;
}

int oci_linux_parse(const json_t *l, struct oci_linux *v, char *err, size_t cap)
{
    memset(v, 0, sizeof(*v));
    if (parse_paths(json_object_get(l, "maskedPaths"), "linux.maskedPaths", v->masked,
                    &v->nmasked, err, cap) ||
        parse_paths(json_object_get(l, "readonlyPaths"), "linux.readonlyPaths", v->readonly,
                    &v->nreadonly, err, cap) ||
        parse_sysctl(json_object_get(l, "sysctl"), v, err, cap) ||
        parse_devices(json_object_get(l, "devices"), v, err, cap))
        return -1;
    const json_t *prop = json_object_get(l, "rootfsPropagation");
    if (!prop || json_is_null(prop))
        return 0;
    v->propagation = oci_json_str_of(prop);
    if (oci_propagation_of(v->propagation))
        return 0;
    return oci_json_bad(err, cap, "linux.rootfsPropagation",
                        "want shared, slave, private, unbindable or one of them with r before it");
}

bool oci_mount_guest_own(const struct oci_mount *m)
{
    static const char *const own[] = {"/proc", "/sys", "/dev", NULL};
    for (size_t i = 0; own[i]; i++)
        if (!strcmp(m->destination, own[i]))
            return true;
    return !strncmp(m->destination, "/proc/", 6) || !strncmp(m->destination, "/sys/", 5) ||
           !strncmp(m->destination, "/dev/", 5);
}

/* mount(8)'s flag options a tmpfs may carry: set or cleared. */
static const struct {
    const char *name;
    unsigned long flag;
    bool clear;
} flag_opts[] = {
    {"ro", MS_RDONLY, false},          {"rw", MS_RDONLY, true},
    {"nosuid", MS_NOSUID, false},      {"suid", MS_NOSUID, true},
    {"nodev", MS_NODEV, false},        {"dev", MS_NODEV, true},
    {"noexec", MS_NOEXEC, false},      {"exec", MS_NOEXEC, true},
    {"sync", MS_SYNCHRONOUS, false},   {"async", MS_SYNCHRONOUS, true},
    {"dirsync", MS_DIRSYNC, false},    {"noatime", MS_NOATIME, false},
    {"atime", MS_NOATIME, true},       {"nodiratime", MS_NODIRATIME, false},
    {"diratime", MS_NODIRATIME, true}, {"relatime", MS_RELATIME, false},
    {"norelatime", MS_RELATIME, true}, {"strictatime", MS_STRICTATIME, false},
    {"nostrictatime", MS_STRICTATIME, true},
};

int oci_tmpfs_options(struct oci_mount *m, const char *const *options, unsigned n, char *err,
                      size_t cap)
{
    char data[AGENT_LNX_MAX_DATA] = "";
    size_t len = 0;
    if (!path_ok(m->destination, true) && !oci_mount_guest_own(m))
        return snprintf(err, cap, "mounts: tmpfs on %.200s: want a clean absolute destination",
                        m->destination), -1;
    for (unsigned i = 0; i < n; i++) {
        const char *o = options[i];
        size_t k = 0, ol = strlen(o);
        while (k < sizeof(flag_opts) / sizeof(flag_opts[0]) && strcmp(o, flag_opts[k].name))
            k++;
        if (k < sizeof(flag_opts) / sizeof(flag_opts[0])) {
            m->flags = flag_opts[k].clear ? m->flags & ~flag_opts[k].flag : m->flags | flag_opts[k].flag;
            continue;
        }
        if (oci_propagation_of(o)) {
            m->propagation = o;
            continue;
        }
        /* Podman's copy-up of the image's files into a tmpfs (crun's and
         * runc's extension): not done, the tmpfs starts empty. */
        if (!strcmp(o, "tmpcopyup") || !strcmp(o, "notmpcopyup"))
            continue;
        if (!ol || strchr(o, ',') || !agent_tmpfs_options_ok(o, ol) ||
            len + (len != 0) + ol >= sizeof(data))
            return snprintf(err, cap, "mounts: tmpfs on %.200s: option '%.100s': want printable "
                            "options without ',' or space, %d bytes in all", m->destination, o,
                            AGENT_LNX_MAX_DATA - 1), -1;
        len += (size_t)snprintf(data + len, sizeof(data) - len, "%s%s", len ? "," : "", o);
    }
    if (!(m->data = strdup(data)))
        return snprintf(err, cap, "mounts: out of memory"), -1;
    return 0;
}
