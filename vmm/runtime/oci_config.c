/* config.json and process.json, checked; see oci_config.h. */
#include "vmm/runtime/oci_config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "vmm/runtime/oci_json.h"

static const struct {
    const char *name;
    int number;
} rlimit_names[] = {
    {"RLIMIT_CPU", RLIMIT_CPU},       {"RLIMIT_FSIZE", RLIMIT_FSIZE},
    {"RLIMIT_DATA", RLIMIT_DATA},     {"RLIMIT_STACK", RLIMIT_STACK},
    {"RLIMIT_CORE", RLIMIT_CORE},     {"RLIMIT_RSS", RLIMIT_RSS},
    {"RLIMIT_NPROC", RLIMIT_NPROC},   {"RLIMIT_NOFILE", RLIMIT_NOFILE},
    {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK}, {"RLIMIT_AS", RLIMIT_AS},
    {"RLIMIT_LOCKS", RLIMIT_LOCKS},   {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
    {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},
    {"RLIMIT_RTPRIO", RLIMIT_RTPRIO}, {"RLIMIT_RTTIME", RLIMIT_RTTIME},
};

int oci_rlimit_number(const char *name)
{
    for (size_t i = 0; i < sizeof(rlimit_names) / sizeof(rlimit_names[0]); i++)
        if (!strcmp(name, rlimit_names[i].name))
            return rlimit_names[i].number;
    return -1;
}

static int parse_rlimits(const json_t *a, struct oci_process *p, char *err, size_t cap)
{
    if (!a)
        return 0;
    if (!json_is_array(a) || json_array_size(a) > OCI_MAX_RLIMITS)
        return oci_json_bad(err, cap, "process.rlimits", "want an array of at most 16 limits");
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        const char *type = oci_json_str_of(json_object_get(e, "type"));
        const json_t *soft = json_object_get(e, "soft"), *hard = json_object_get(e, "hard");
        int num = type ? oci_rlimit_number(type) : -1;
        if (num < 0)
            return oci_json_bad(err, cap, "process.rlimits", "a type that is no RLIMIT_* name");
        /* JSON integers are signed 64 bits: RLIM_INFINITY arrives as -1 or
         * does not fit; both mean unlimited. */
        if (!json_is_integer(soft) || !json_is_integer(hard))
            return oci_json_bad(err, cap, "process.rlimits", "want integer soft and hard values");
        uint64_t s = (uint64_t)json_integer_value(soft), h = (uint64_t)json_integer_value(hard);
        if (s > h)
            return oci_json_bad(err, cap, "process.rlimits", "a soft value above its hard value");
        for (unsigned k = 0; k < p->nrlimits; k++)
            if (p->rlimits[k].resource == num)
                return oci_json_bad(err, cap, "process.rlimits", "a type given twice");
        p->rlimits[p->nrlimits++] = (struct oci_rlimit){num, s, h};
    }
    return 0;
}

/* process.capabilities: five lists of "CAP_*" names (libcap's names, any
 * case).  A name that is no capability is an error, as the runtime spec
 * asks: a set the config asks for and the process would not get must not
 * start. */
static int parse_caps(const json_t *o, struct oci_process *p, char *err, size_t cap)
{
    static const char *const keys[OCI_CAP_SETS] = {"bounding", "effective", "permitted",
                                                   "inheritable", "ambient"};
    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o))
        return oci_json_bad(err, cap, "process.capabilities", "want an object");
    p->has_caps = true;
    for (int s = 0; s < OCI_CAP_SETS; s++) {
        const json_t *a = json_object_get(o, keys[s]);
        if (!a || json_is_null(a))
            continue;
        if (!json_is_array(a) || json_array_size(a) > 64) {
            snprintf(err, cap, "process.capabilities.%s: want an array of at most 64 names",
                     keys[s]);
            return -1;
        }
        size_t i;
        json_t *e;
        json_array_foreach(a, i, e) {
            const char *name = oci_json_str_of(e);
            cap_value_t v;
            if (!name || strncasecmp(name, "CAP_", 4) || cap_from_name(name, &v) || v < 0 ||
                v > 63) {
                snprintf(err, cap, "process.capabilities.%s: %.64s: not a capability", keys[s],
                         name ? name : "(not a string)");
                return -1;
            }
            p->caps[s] |= 1ull << v;
        }
    }
    return 0;
}

static int parse_user(const json_t *u, struct oci_process *p, char *err, size_t cap)
{
    int64_t uid = 0, gid = 0;
    if (!u)
        return 0;
    if (!json_is_object(u))
        return oci_json_bad(err, cap, "process.user", "want an object");
    if (oci_json_int_field(u, "uid", "process.user.uid", 0, 0xfffffffe, &uid, err, cap) ||
        oci_json_int_field(u, "gid", "process.user.gid", 0, 0xfffffffe, &gid, err, cap))
        return -1;
    p->uid = (uint32_t)uid;
    p->gid = (uint32_t)gid;
    const json_t *g = json_object_get(u, "additionalGids");
    if (g && !json_is_null(g)) {
        if (!json_is_array(g) || json_array_size(g) > OCI_MAX_GROUPS)
            return oci_json_bad(err, cap, "process.user.additionalGids",
                       "want an array of at most 32 numbers");
        size_t i;
        json_t *e;
        json_array_foreach(g, i, e) {
            if (!json_is_integer(e) || json_integer_value(e) < 0 ||
                json_integer_value(e) > 0xfffffffe)
                return oci_json_bad(err, cap, "process.user.additionalGids", "want numbers");
            p->groups[p->ngroups++] = (uint32_t)json_integer_value(e);
        }
    }
    if (json_object_get(u, "username"))
        return oci_json_bad(err, cap, "process.user.username", "is for Windows containers");
    return 0;
}

static int parse_process(const json_t *o, struct oci_process *p, char *err, size_t cap)
{
    memset(p, 0, sizeof(*p));
    if (!json_is_object(o))
        return oci_json_bad(err, cap, "process", "want an object");
    if (oci_json_str_array(json_object_get(o, "args"), "process.args", OCI_MAX_ARGS, true, &p->args,
                  &p->nargs, err, cap) ||
        oci_json_str_array(json_object_get(o, "env"), "process.env", OCI_MAX_ENV, false, &p->env,
                  &p->nenv, err, cap))
        goto fail;
    if (!p->nargs || !p->args[0][0]) {
        oci_json_bad(err, cap, "process.args", "want at least the program");
        goto fail;
    }
    for (unsigned i = 0; i < p->nenv; i++)
        if (!strchr(p->env[i], '=') || p->env[i][0] == '=') {
            oci_json_bad(err, cap, "process.env", "want NAME=VALUE entries");
            goto fail;
        }
    p->cwd = oci_json_str_of(json_object_get(o, "cwd"));
    if (!p->cwd || p->cwd[0] != '/' || strlen(p->cwd) >= 4096) {
        oci_json_bad(err, cap, "process.cwd", "want an absolute path");
        goto fail;
    }
    const json_t *t = json_object_get(o, "terminal");
    if (t && !json_is_boolean(t)) {
        oci_json_bad(err, cap, "process.terminal", "want true or false");
        goto fail;
    }
    p->terminal = json_is_true(t);
    const json_t *nnp = json_object_get(o, "noNewPrivileges");
    if (nnp && !json_is_boolean(nnp)) {
        oci_json_bad(err, cap, "process.noNewPrivileges", "want true or false");
        goto fail;
    }
    p->no_new_privs = json_is_true(nnp);
    const json_t *cs = json_object_get(o, "consoleSize");
    if (cs) {
        int64_t h = 0, w = 0;
        if (!json_is_object(cs) ||
            oci_json_int_field(cs, "height", "process.consoleSize.height", 0, 65535, &h, err, cap) ||
            oci_json_int_field(cs, "width", "process.consoleSize.width", 0, 65535, &w, err, cap)) {
            if (!json_is_object(cs))
                oci_json_bad(err, cap, "process.consoleSize", "want an object");
            goto fail;
        }
        p->rows = (unsigned)h;
        p->cols = (unsigned)w;
    }
    int64_t oom = INT64_MIN;
    if (oci_json_int_field(o, "oomScoreAdj", "process.oomScoreAdj", -1000, 1000, &oom, err, cap))
        goto fail;
    p->has_oom = oom != INT64_MIN;
    p->oom_score_adj = p->has_oom ? (int)oom : 0;
    if (parse_user(json_object_get(o, "user"), p, err, cap) ||
        parse_rlimits(json_object_get(o, "rlimits"), p, err, cap) ||
        parse_caps(json_object_get(o, "capabilities"), p, err, cap))
        goto fail;
    return 0;
fail:
    oci_process_free(p);
    return -1;
}

void oci_process_free(struct oci_process *p)
{
    free(p->args);
    free(p->env);
    p->args = p->env = NULL;
    p->nargs = p->nenv = 0;
}

static int parse_mounts(const json_t *a, struct oci_config *c, char *err, size_t cap)
{
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a) || json_array_size(a) > OCI_MAX_MOUNTS)
        return oci_json_bad(err, cap, "mounts", "want an array of at most 64 mounts");
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        struct oci_mount *m = &c->mounts[c->nmounts];
        const json_t *type = json_object_get(e, "type"), *src = json_object_get(e, "source");
        m->destination = oci_json_str_of(json_object_get(e, "destination"));
        if (!json_is_object(e) || !m->destination || m->destination[0] != '/')
            return oci_json_bad(err, cap, "mounts", "a mount without an absolute destination");
        m->type = type ? oci_json_str_of(type) : "";
        m->source = src ? oci_json_str_of(src) : "";
        if (!m->type || !m->source)
            return oci_json_bad(err, cap, "mounts", "a mount whose type or source is not a string");
        const char **opts;
        unsigned nopts;
        if (oci_json_str_array(json_object_get(e, "options"), "mounts.options", 64, true, &opts, &nopts,
                      err, cap))
            return -1;
        m->bind = !strcmp(m->type, "bind");
        if (!strcmp(m->type, "tmpfs") && oci_tmpfs_options(m, opts, nopts, err, cap)) {
            free(opts);
            c->nmounts++; /* its data is freed with the config */
            return -1;
        }
        for (unsigned k = 0; k < nopts; k++) {
            if (!strcmp(opts[k], "bind") || !strcmp(opts[k], "rbind"))
                m->bind = true;
            else if (!strcmp(opts[k], "ro"))
                m->readonly = true;
            else if (!strcmp(opts[k], "rw"))
                m->readonly = false;
        }
        free(opts);
        c->nmounts++;
    }
    return 0;
}

static const char *const hook_keys[OCI_HOOK_KINDS] = {
    "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop",
};

static int parse_hooks(const json_t *o, struct oci_config *c, char *err, size_t cap)
{
    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o))
        return oci_json_bad(err, cap, "hooks", "want an object");
    for (int k = 0; k < OCI_HOOK_KINDS; k++) {
        const json_t *a = json_object_get(o, hook_keys[k]);
        char field[48];
        snprintf(field, sizeof(field), "hooks.%s", hook_keys[k]);
        if (!a || json_is_null(a))
            continue;
        if (!json_is_array(a) || json_array_size(a) > OCI_MAX_HOOKS)
            return oci_json_bad(err, cap, field, "want an array of at most 32 hooks");
        size_t i;
        json_t *e;
        json_array_foreach(a, i, e) {
            struct oci_hook *h = &c->hooks[k][c->nhooks[k]];
            const char **args, **env;
            unsigned na, ne;
            int64_t timeout = 0;
            h->path = oci_json_str_of(json_object_get(e, "path"));
            if (!json_is_object(e) || !h->path || h->path[0] != '/')
                return oci_json_bad(err, cap, field, "a hook without an absolute path");
            if (oci_json_int_field(e, "timeout", field, 1, 86400, &timeout, err, cap) ||
                oci_json_str_array(json_object_get(e, "args"), field, OCI_MAX_ARGS, true, &args, &na, err,
                          cap))
                return -1;
            if (oci_json_str_array(json_object_get(e, "env"), field, OCI_MAX_ENV, false, &env, &ne, err,
                          cap)) {
                free(args);
                return -1;
            }
            h->args = args;
            h->env = env;
            h->timeout_s = (int)timeout;
            c->nhooks[k]++;
        }
    }
    return 0;
}

static int parse_resources(const json_t *r, struct oci_config *c, char *err, size_t cap)
{
    if (!r || json_is_null(r))
        return 0;
    if (!json_is_object(r))
        return oci_json_bad(err, cap, "linux.resources", "want an object");
    const json_t *mem = json_object_get(r, "memory"), *cpu = json_object_get(r, "cpu"),
                 *pids = json_object_get(r, "pids");
    int64_t period = 0;
    if ((mem && !json_is_object(mem)) || (cpu && !json_is_object(cpu)) ||
        (pids && !json_is_object(pids)))
        return oci_json_bad(err, cap, "linux.resources", "memory, cpu and pids want objects");
    if (oci_json_int_field(mem, "limit", "linux.resources.memory.limit", -1, INT64_MAX, &c->memory_limit,
                  err, cap) ||
        oci_json_int_field(cpu, "quota", "linux.resources.cpu.quota", -1, INT64_MAX, &c->cpu_quota, err,
                  cap) ||
        oci_json_int_field(cpu, "period", "linux.resources.cpu.period", 0, 1000000000, &period, err,
                  cap) ||
        oci_json_int_field(pids, "limit", "linux.resources.pids.limit", -1, INT64_MAX, &c->pids_limit, err,
                  cap))
        return -1;
    c->cpu_period = (uint64_t)period;
    return 0;
}

static int parse_linux(const json_t *l, struct oci_config *c, char *err, size_t cap)
{
    if (!l || json_is_null(l))
        return 0;
    if (!json_is_object(l))
        return oci_json_bad(err, cap, "linux", "want an object");
    if (parse_resources(json_object_get(l, "resources"), c, err, cap) ||
        oci_linux_parse(l, &c->linux_view, err, cap))
        return -1;
    const json_t *cg = json_object_get(l, "cgroupsPath");
    if (cg && !(c->cgroups_path = oci_json_str_of(cg)))
        return oci_json_bad(err, cap, "linux.cgroupsPath", "want a path");
    const json_t *ns = json_object_get(l, "namespaces");
    if (ns && !json_is_array(ns))
        return oci_json_bad(err, cap, "linux.namespaces", "want an array");
    size_t i;
    json_t *e;
    static const struct {
        const char *name;
        int flag;
    } types[] = {
        {"pid", CLONE_NEWPID}, {"network", CLONE_NEWNET}, {"mount", CLONE_NEWNS},
        {"ipc", CLONE_NEWIPC}, {"uts", CLONE_NEWUTS},     {"user", CLONE_NEWUSER},
        {"cgroup", CLONE_NEWCGROUP}, {"time", CLONE_NEWTIME},
    };
    json_array_foreach(ns, i, e) {
        const char *type = oci_json_str_of(json_object_get(e, "type"));
        const json_t *path = json_object_get(e, "path");
        if (!type)
            return oci_json_bad(err, cap, "linux.namespaces", "an entry without a type");
        if (path && (!oci_json_str_of(path) || oci_json_str_of(path)[0] != '/'))
            return oci_json_bad(err, cap, "linux.namespaces", "a path that is not absolute");
        size_t t = 0;
        while (t < sizeof(types) / sizeof(types[0]) && strcmp(type, types[t].name))
            t++;
        if (t == sizeof(types) / sizeof(types[0])) {
            snprintf(err, cap, "linux.namespaces: %.32s: not a namespace type", type);
            return -1;
        }
        if (oci_config_namespace(c, types[t].flag))
            return oci_json_bad(err, cap, "linux.namespaces", "a type given twice");
        c->namespaces[c->nnamespaces].clone_flag = types[t].flag;
        c->namespaces[c->nnamespaces++].path = path ? oci_json_str_of(path) : NULL;
    }
    return 0;
}

const struct oci_namespace *oci_config_namespace(const struct oci_config *c, int clone_flag)
{
    for (unsigned k = 0; k < c->nnamespaces; k++)
        if (c->namespaces[k].clone_flag == clone_flag)
            return &c->namespaces[k];
    return NULL;
}

int oci_namespaces_check(const struct oci_config *c, char *err, size_t cap)
{
    for (unsigned k = 0; k < c->nnamespaces; k++) {
        const char *path = c->namespaces[k].path;
        if (!path)
            continue;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        int type = fd < 0 ? -1 : ioctl(fd, NS_GET_NSTYPE);
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (fd < 0 || (type < 0 && e != ENOTTY)) {
            snprintf(err, cap, "linux.namespaces: %.300s: %s", path, strerror(e));
            return -1;
        }
        if (type != c->namespaces[k].clone_flag) {
            snprintf(err, cap, "linux.namespaces: %.300s: not a namespace of the entry's type",
                     path);
            return -1;
        }
    }
    return 0;
}

int oci_config_parse(const char *buf, size_t len, struct oci_config *c, char *err, size_t cap)
{
    memset(c, 0, sizeof(*c));
    c->memory_limit = c->cpu_quota = c->pids_limit = -1;
    if (!(c->doc = oci_json_parse_doc(buf, len, "config.json", err, cap)))
        return -1;
    const json_t *ver = json_object_get(c->doc, "ociVersion");
    const json_t *root = json_object_get(c->doc, "root");
    const json_t *proc = json_object_get(c->doc, "process");
    const json_t *host = json_object_get(c->doc, "hostname");
    const json_t *ann = json_object_get(c->doc, "annotations");
    if (!oci_json_str_of(ver) || strncmp(json_string_value(ver), "1.", 2)) {
        oci_json_bad(err, cap, "ociVersion", "want a 1.x version");
        goto fail;
    }
    if (!json_is_object(root) || !(c->root = oci_json_str_of(json_object_get(root, "path")))) {
        oci_json_bad(err, cap, "root.path", "want the root folder's path");
        goto fail;
    }
    const json_t *ro = json_object_get(root, "readonly");
    if (ro && !json_is_boolean(ro)) {
        oci_json_bad(err, cap, "root.readonly", "want true or false");
        goto fail;
    }
    c->root_readonly = json_is_true(ro);
    if (host && !(c->hostname = oci_json_str_of(host)) && !(json_is_string(host) &&
                                                    !json_string_length(host))) {
        oci_json_bad(err, cap, "hostname", "want a string");
        goto fail;
    }
    /* It goes on the guest kernel's command line (hostname=): a space
     * there would be a second kernel parameter. */
    if (c->hostname && (strlen(c->hostname) > 64 ||
                        strspn(c->hostname, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-._") != strlen(c->hostname))) {
        oci_json_bad(err, cap, "hostname", "want at most 64 letters, digits, '-', '.' or '_'");
        goto fail;
    }
    if (ann && !json_is_object(ann)) {
        oci_json_bad(err, cap, "annotations", "want an object of strings");
        goto fail;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)ann, k, v)
        if (!json_is_string(v)) {
            oci_json_bad(err, cap, "annotations", "want an object of strings");
            goto fail;
        }
    c->annotations = (json_t *)ann;
    if (proc) {
        if (parse_process(proc, &c->process, err, cap))
            goto fail;
        c->has_process = true;
    }
    if (parse_mounts(json_object_get(c->doc, "mounts"), c, err, cap) ||
        parse_hooks(json_object_get(c->doc, "hooks"), c, err, cap) ||
        parse_linux(json_object_get(c->doc, "linux"), c, err, cap))
        goto fail;
    return 0;
fail:
    oci_config_free(c);
    return -1;
}

int oci_config_load(const char *path, struct oci_config *c, char *err, size_t cap)
{
    size_t len;
    char *buf = oci_json_slurp(path, &len, err, cap);
    if (!buf) {
        memset(c, 0, sizeof(*c));
        return -1;
    }
    int rc = oci_config_parse(buf, len, c, err, cap);
    free(buf);
    return rc;
}

void oci_config_free(struct oci_config *c)
{
    oci_process_free(&c->process);
    for (unsigned i = 0; i < c->nmounts; i++)
        free(c->mounts[i].data);
    for (int k = 0; k < OCI_HOOK_KINDS; k++)
        for (unsigned i = 0; i < c->nhooks[k]; i++) {
            free((void *)c->hooks[k][i].args);
            free((void *)c->hooks[k][i].env);
        }
    json_decref(c->doc);
    memset(c, 0, sizeof(*c));
}

int oci_process_parse(const char *buf, size_t len, json_t **doc, struct oci_process *p, char *err,
                      size_t cap)
{
    memset(p, 0, sizeof(*p));
    if (!(*doc = oci_json_parse_doc(buf, len, "process.json", err, cap)))
        return -1;
    if (parse_process(*doc, p, err, cap)) {
        json_decref(*doc);
        *doc = NULL;
        return -1;
    }
    return 0;
}

int oci_process_load(const char *path, json_t **doc, struct oci_process *p, char *err, size_t cap)
{
    size_t len;
    char *buf = oci_json_slurp(path, &len, err, cap);
    *doc = NULL;
    if (!buf) {
        memset(p, 0, sizeof(*p));
        return -1;
    }
    int rc = oci_process_parse(buf, len, doc, p, err, cap);
    free(buf);
    return rc;
}

int oci_resources_parse(const char *buf, size_t len, struct oci_config *c, char *err, size_t cap)
{
    c->memory_limit = c->cpu_quota = c->pids_limit = -1;
    c->cpu_period = 0;
    json_t *doc = oci_json_parse_doc(buf, len, "resources", err, cap);
    if (!doc)
        return -1;
    int rc = parse_resources(doc, c, err, cap);
    json_decref(doc);
    return rc;
}
