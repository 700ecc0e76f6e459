/* An OCI bundle's config.json (runtime spec 1.0), and the process.json
 * `airlock-runtime exec --process` reads, as the runtime uses them.
 *
 * Both files come from the caller (a container engine, or whoever wrote
 * the bundle) and are checked field by field: a wrong type, a value out
 * of range or a list over its bound is an error naming the field
 * ("process.user.uid: ..."), never a crash or a silent default.  What the
 * runtime does not use is not looked at (seccomp, apparmor, devices: the
 * VM is the boundary), so an unknown field is no error, as in runc. */
#ifndef AIRLOCK_RUNTIME_OCI_CONFIG_H
#define AIRLOCK_RUNTIME_OCI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define OCI_CONFIG_MAX_BYTES (4u << 20) /* config.json, process.json */
#define OCI_MAX_ARGS 4096
#define OCI_MAX_ENV 4096
#define OCI_MAX_GROUPS 32
#define OCI_MAX_RLIMITS 16
#define OCI_MAX_MOUNTS 64
#define OCI_MAX_HOOKS 32 /* of each kind */
#define OCI_MAX_NAMESPACES 8 /* one of each type */
#define OCI_MAX_LINUX_LIST 64 /* of each: maskedPaths, readonlyPaths, sysctl, devices */

/* process.capabilities' five sets, in the order runc lists them. */
enum oci_cap_set {
    OCI_CAP_BOUNDING,
    OCI_CAP_EFFECTIVE,
    OCI_CAP_PERMITTED,
    OCI_CAP_INHERITABLE,
    OCI_CAP_AMBIENT,
    OCI_CAP_SETS
};

struct oci_rlimit {
    int resource; /* RLIMIT_* */
    uint64_t soft, hard;
};

struct oci_process {
    const char **args; /* NULL-terminated; strings point into the document */
    unsigned nargs;
    const char **env;  /* NULL-terminated */
    unsigned nenv;
    const char *cwd;   /* absolute */
    uint32_t uid, gid;
    uint32_t groups[OCI_MAX_GROUPS];
    unsigned ngroups;
    struct oci_rlimit rlimits[OCI_MAX_RLIMITS];
    unsigned nrlimits;
    bool terminal, no_new_privs;
    unsigned rows, cols; /* consoleSize, 0 when not given */
    /* process.capabilities as bit masks (1 << CAP_*); has_caps when the
     * object is given.  Without it the process keeps what the agent gives
     * any command: every capability as root, none as another user. */
    bool has_caps;
    uint64_t caps[OCI_CAP_SETS];
    bool has_oom; /* process.oomScoreAdj given: */
    int oom_score_adj;
};

struct oci_mount {
    const char *destination, *type, *source; /* type/source may be "" */
    bool bind, readonly;
    /* type "tmpfs": its options as mount(2) takes them (oci_linux.c) */
    unsigned long flags;     /* MS_RDONLY, MS_NOSUID, ... */
    const char *propagation; /* "rslave", ... as written, or NULL */
    char *data;              /* "mode=755,size=1k", or "" (owned) */
};

struct oci_hook {
    const char *path;
    const char *const *args; /* NULL-terminated, NULL when none */
    const char *const *env;
    int timeout_s;           /* 0: none */
};

enum oci_hook_kind {
    OCI_HOOK_PRESTART,
    OCI_HOOK_CREATE_RUNTIME,
    OCI_HOOK_CREATE_CONTAINER,
    OCI_HOOK_START_CONTAINER,
    OCI_HOOK_POSTSTART,
    OCI_HOOK_POSTSTOP,
    OCI_HOOK_KINDS
};

struct oci_namespace {
    int clone_flag;   /* CLONE_NEW* of the entry's type */
    const char *path; /* join this one, or NULL: a new one */
};

/* linux.devices' entry: type 'c' (also for "u"), 'b' or 'p'. */
struct oci_device {
    const char *path;
    char type;
    uint32_t major, minor;
    uint32_t mode; /* fileMode's permissions (0666 when not given) */
    uint32_t uid, gid;
};

struct oci_sysctl {
    const char *key, *value;
};

/* What linux asks of the container's own view, applied by the agent in
 * the guest (oci_linux.c reads it; proto.h's EXEC linux section). */
struct oci_linux {
    const char *masked[OCI_MAX_LINUX_LIST], *readonly[OCI_MAX_LINUX_LIST];
    unsigned nmasked, nreadonly;
    struct oci_sysctl sysctl[OCI_MAX_LINUX_LIST];
    unsigned nsysctl;
    struct oci_device devices[OCI_MAX_LINUX_LIST];
    unsigned ndevices;
    const char *propagation; /* linux.rootfsPropagation as written, or NULL */
};

struct oci_config {
    json_t *doc;         /* owns every string below */
    const char *root;    /* root.path as written (relative to the bundle) */
    bool root_readonly;
    const char *hostname; /* or NULL; letters, digits, '-', '.', '_', at most 64 */
    struct oci_process process;
    bool has_process;
    struct oci_mount mounts[OCI_MAX_MOUNTS];
    unsigned nmounts;
    struct oci_hook hooks[OCI_HOOK_KINDS][OCI_MAX_HOOKS];
    unsigned nhooks[OCI_HOOK_KINDS];
    json_t *annotations; /* an object (borrowed from doc), or NULL */
    /* linux.resources; -1 when not given */
    int64_t memory_limit, cpu_quota, pids_limit;
    uint64_t cpu_period; /* 0 when not given */
    const char *cgroups_path;                /* or NULL */
    struct oci_namespace namespaces[OCI_MAX_NAMESPACES]; /* linux.namespaces, each type once */
    unsigned nnamespaces;
    struct oci_linux linux_view; /* maskedPaths, readonlyPaths, sysctl, devices, rootfsPropagation */
};

/* linux.namespaces' entry of one type (CLONE_NEWNET, ...), or NULL when
 * the config does not name that type. */
const struct oci_namespace *oci_config_namespace(const struct oci_config *c, int clone_flag);

/* Reads and checks `path` (a config.json).  0, or -1 with err naming the
 * file or the field and what is wrong.  oci_config_free releases it. */
int oci_config_load(const char *path, struct oci_config *c, char *err, size_t cap);
/* The same from bytes (the unit tests' and the fuzz target's way in). */
int oci_config_parse(const char *buf, size_t len, struct oci_config *c, char *err, size_t cap);
void oci_config_free(struct oci_config *c);

/* A process object alone (exec --process FILE): *doc owns the strings
 * (json_decref it).  0, or -1 with err. */
int oci_process_load(const char *path, json_t **doc, struct oci_process *p, char *err,
                     size_t cap);
int oci_process_parse(const char *buf, size_t len, json_t **doc, struct oci_process *p, char *err,
                      size_t cap);
void oci_process_free(struct oci_process *p);

/* Every linux.namespaces path names a namespace of its entry's type
 * (NS_GET_NSTYPE), as the runtime spec asks: a path to a file that is
 * not one, or to another type of namespace, is an error naming it.
 * 0, or -1 with err. */
int oci_namespaces_check(const struct oci_config *c, char *err, size_t cap);

/* linux.maskedPaths, readonlyPaths, sysctl, devices and rootfsPropagation
 * of the object l into *v (oci_linux.c; called by oci_config_parse),
 * each checked by the rules the agent applies them by.  0, or -1 with
 * err naming the field. */
int oci_linux_parse(const json_t *l, struct oci_linux *v, char *err, size_t cap);

/* A tmpfs mount's options[0, n) into m (flags, propagation, data), each
 * checked (oci_linux.c; called by oci_config_parse).  0, or -1 with err
 * naming the mount. */
int oci_tmpfs_options(struct oci_mount *m, const char *const *options, unsigned n, char *err,
                      size_t cap);
/* A propagation's name ("rslave", ...) as proto.h's AGENT_LNX_PROP_*
 * number, 0 for NULL or a name that is none (oci_linux.c). */
unsigned oci_propagation_of(const char *name);
/* Destinations the guest kernel and agent provide themselves (/proc,
 * /sys, /dev and below): a config's mount there is not made. */
bool oci_mount_guest_own(const struct oci_mount *m);

/* "RLIMIT_NOFILE" -> RLIMIT_NOFILE, -1 when unknown. */
int oci_rlimit_number(const char *name);

/* linux.resources from a file `update --resources` reads (the same
 * object as config.json's): the fields set in *c (memory_limit,
 * cpu_quota, cpu_period, pids_limit).  0, or -1 with err. */
int oci_resources_parse(const char *buf, size_t len, struct oci_config *c, char *err, size_t cap);

#endif
