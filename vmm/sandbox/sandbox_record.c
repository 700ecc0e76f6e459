#include "vmm/sandbox/sandbox_record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/sandbox/api_create.h"
#include "vmm/sandbox/background_keep.h"
#include "vmm/sandbox/daemon_state.h"
#include "vmm/sandbox/sandbox_audit.h"
#include "vmm/sandbox/sandbox_pause.h"
#include "vmm/sandbox/sandbox_ports.h"
#include "vmm/sandbox/vm_identity.h"
#include "vmm/snapshot/snapshot_dir.h"

#define RECORD_VERSION 1

static json_t *record_json(struct registry *reg, struct sandbox *sb)
{
    struct forward_info *ports = malloc(FORWARD_MAX_PORTS * sizeof(*ports));
    if (!ports)
        return NULL;
    size_t nports = sandbox_ports_list(sb, ports);
    json_t *ports_json = record_ports_json(ports, nports);
    free(ports);
    json_t *limits = json_array();
    for (unsigned i = 0; i < sb->nlimits; i++)
        json_array_append_new(limits, json_pack("[ss]", sb->limits[i].flag, sb->limits[i].value));
    const char *vm = strrchr(sb->vm_snapshot, '/');
    return json_pack("{s:i,s:s,s:s,s:i,s:i,s:O,s:s,s:b,s:i,s:i,s:s,s:O,s:I,s:i,s:s,s:i,s:i,"
                     "s:O,s:O,s:o,s:b,s:s,s:i,s:I,s:i,s:i,s:s,s:s,s:O,s:o,s:o,s:b,s:b}",
                     "version", RECORD_VERSION, "id", sb->id, "image", sb->image,
                     "mem", sb->mem_mib, "cpus", sb->cpus, "env", sb->env, "cwd", sb->cwd,
                     "has_user", sb->has_user, "uid", (int)sb->uid, "gid", (int)sb->gid,
                     "user_error", sb->user_error, "labels", sb->labels,
                     "created_ms", (json_int_t)sb->created_ms, "create_ms", sb->create_ms,
                     "how", sb->how ? sb->how : "cold", "timeout_s", sb->lease_s,
                     "max_lifetime_s", sb->max_lifetime_s, "allow", sb->allow,
                     "allow_ip", sb->allow_ip, "limits", limits,
                     "pause_on_timeout", sb->pause_on_timeout, "vm", vm ? vm + 1 : "",
                     "vm_gen", sb->vm_gen, "paused_ms", (json_int_t)sb->paused_ms,
                     "pauses", sb->pauses, "resumes", sb->resumes,
                     "template_id", sb->template_id, "access_token", sb->access_token,
                     "identity", sb->identity ? sb->identity : json_null(),
                     "ports", ports_json, "commands", bg_save(reg, sb),
                     "pause_memory", !sb->timeout_fs_only, "memory_saved", !sb->paused_fs_only);
}

int sandbox_record_write(struct registry *reg, struct sandbox *sb, const char *dir)
{
    char tmp[PATH_MAX + 32], path[PATH_MAX + 32];
    snprintf(tmp, sizeof(tmp), "%s/.%s.new", dir, SANDBOX_RECORD_FILE);
    snprintf(path, sizeof(path), "%s/%s", dir, SANDBOX_RECORD_FILE);
    json_t *o = record_json(reg, sb);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        return -ENOMEM;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600), e = 0;
    size_t len = strlen(text);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 || fsync(fd) < 0)
        e = errno ? -errno : -EIO;
    if (fd >= 0)
        close(fd);
    free(text);
    if (!e && rename(tmp, path) < 0)
        e = -errno;
    if (e) {
        unlink(tmp);
        return e;
    }
    /* The rename itself reaches the disk with the folder. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}

int sandbox_record_check(const struct sandbox *sb, char *err, size_t cap)
{
    if (!sb->identity)
        return 0;
    struct vm_identity id;
    vm_identity_files(sb->image, sb->cpus, &id);
    return vm_identity_check(&id, sb->identity, err, cap);
}

static bool is_id(const char *s)
{
    if (strlen(s) != SANDBOX_ID_HEX)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

static bool all_strings(json_t *v, bool object)
{
    const char *k;
    json_t *e;
    size_t i;
    if (object) {
        if (!json_is_object(v))
            return false;
        json_object_foreach(v, k, e) if (!json_is_string(e)) return false;
        return true;
    }
    if (!json_is_array(v))
        return false;
    json_array_foreach(v, i, e) if (!json_is_string(e)) return false;
    return true;
}

/* What a record keeps beyond the sandbox's shape (record_keeps.h); the
 * commands' info and exit are borrowed from the record's document. */
struct kept {
    struct forward_spec ports[FORWARD_MAX_PORTS];
    size_t nports;
    struct bg_saved cmds[BG_MAX];
    size_t ncmds;
};

/* Fills sb and k from a record: 0, or -1 with err saying what is wrong
 * in it. */
static int from_record(struct sandbox *sb, struct kept *k, json_t *o, const char *dir, char *err,
                       size_t cap)
{
    json_error_t je;
    int version, mem, cpus, has_user, uid, gid, create_ms, lease, life, pot, gen, pauses, resumes;
    const char *id, *image, *cwd, *user_error, *how, *vm, *template_id, *token;
    json_t *env, *labels, *allow, *allow_ip, *limits, *identity, *ports = NULL, *cmds = NULL;
    int pause_memory = 1, memory_saved = 1; /* absent before filesystem-only pauses */
    json_int_t created, paused;
    /* ports and commands: absent from the records of daemons before them. */
    if (json_unpack_ex(o, &je, JSON_STRICT,
                       "{s:i,s:s,s:s,s:i,s:i,s:o,s:s,s:b,s:i,s:i,s:s,s:o,s:I,s:i,s:s,s:i,s:i,"
                       "s:o,s:o,s:o,s:b,s:s,s:i,s:I,s:i,s:i,s:s,s:s,s:o,s?o,s?o,s?b,s?b}",
                       "version", &version, "id", &id, "image", &image, "mem", &mem, "cpus", &cpus,
                       "env", &env, "cwd", &cwd, "has_user", &has_user, "uid", &uid, "gid", &gid,
                       "user_error", &user_error, "labels", &labels, "created_ms", &created,
                       "create_ms", &create_ms, "how", &how, "timeout_s", &lease,
                       "max_lifetime_s", &life, "allow", &allow, "allow_ip", &allow_ip,
                       "limits", &limits, "pause_on_timeout", &pot, "vm", &vm, "vm_gen", &gen,
                       "paused_ms", &paused, "pauses", &pauses, "resumes", &resumes,
                       "template_id", &template_id, "access_token", &token,
                       "identity", &identity, "ports", &ports, "commands", &cmds,
                       "pause_memory", &pause_memory, "memory_saved", &memory_saved)) {
        snprintf(err, cap, "%s", je.text);
        return -1;
    }
    if (version != RECORD_VERSION || strcmp(id, sb->id) || mem < 8 || mem > 1048576 || cpus < 1 ||
        cpus > 64 || lease < 0 || life < 0 || gen < 0 || pauses < 0 || resumes < 0 ||
        strlen(image) >= sizeof(sb->image) || strlen(cwd) >= sizeof(sb->cwd) ||
        strlen(user_error) >= sizeof(sb->user_error) ||
        strlen(template_id) >= sizeof(sb->template_id) ||
        strlen(token) >= sizeof(sb->access_token) || !all_strings(env, true) ||
        !all_strings(labels, true) || !all_strings(allow, false) ||
        !all_strings(allow_ip, false) || !json_is_array(limits) ||
        json_array_size(limits) > SANDBOX_LIMITS_MAX || !json_is_object(identity) ||
        strncmp(vm, "vm-", 3) || strchr(vm, '/') || strlen(vm) > 16) {
        snprintf(err, cap, "a field is out of its range");
        return -1;
    }
    if (record_ports_parse(ports, k->ports, &k->nports, err, cap) ||
        record_commands_parse(cmds, k->cmds, &k->ncmds, err, cap))
        return -1;
    size_t i;
    json_t *l;
    json_array_foreach(limits, i, l) {
        const char *flag, *value;
        if (json_unpack(l, "[ss!]", &flag, &value) || !api_create_resume_flag(flag) ||
            strlen(value) >= sizeof(sb->limits[0].value)) {
            snprintf(err, cap, "limits[%zu] is not a limit a VM takes", i);
            return -1;
        }
        sb->limits[sb->nlimits].flag = api_create_resume_flag(flag);
        snprintf(sb->limits[sb->nlimits++].value, sizeof(sb->limits[0].value), "%s", value);
    }
    snprintf(sb->image, sizeof(sb->image), "%s", image);
    snprintf(sb->cwd, sizeof(sb->cwd), "%s", cwd);
    snprintf(sb->user_error, sizeof(sb->user_error), "%s", user_error);
    snprintf(sb->template_id, sizeof(sb->template_id), "%s", template_id);
    snprintf(sb->access_token, sizeof(sb->access_token), "%s", token);
    snprintf(sb->vm_snapshot, sizeof(sb->vm_snapshot), "%.3900s/%s", dir, vm);
    sb->mem_mib = (unsigned)mem;
    sb->cpus = (unsigned)cpus;
    sb->has_user = has_user;
    sb->uid = (uint32_t)uid;
    sb->gid = (uint32_t)gid;
    sb->env = json_incref(env);
    sb->labels = json_incref(labels);
    sb->allow = json_incref(allow);
    sb->allow_ip = json_incref(allow_ip);
    sb->identity = json_incref(identity);
    sb->created_ms = created;
    sb->create_ms = (unsigned)create_ms;
    sb->how = !strcmp(how, "pool") ? "pool" : !strcmp(how, "restore") ? "restore" : "cold";
    sb->lease_s = (unsigned)lease;
    sb->max_lifetime_s = (unsigned)life;
    sb->pause_on_timeout = pot;
    sb->timeout_fs_only = !pause_memory;
    sb->paused_fs_only = !memory_saved;
    sb->vm_gen = (unsigned)gen;
    sb->paused_ms = paused;
    sb->pauses = (unsigned)pauses;
    sb->resumes = (unsigned)resumes;
    return 0;
}

/* A loaded sandbox's ports bound again: one that cannot be (its host
 * port taken since, say) is left out, and said in one line. */
static void ports_again(struct sandbox *sb, const struct kept *k)
{
    for (size_t i = 0; i < k->nports; i++) {
        char err[300], addr[80];
        if (!sandbox_ports_add(sb, &k->ports[i], NULL, err, sizeof(err)))
            continue;
        forward_addr_format(k->ports[i].host_ip, k->ports[i].host_port, addr, sizeof(addr));
        fprintf(stderr, "airlock: paused sandbox %s: its port %s (guest port %u) is not "
                "published again: %s\n", sb->id, addr, k->ports[i].guest_port, err);
    }
}

/* One sandbox's folder: 0 when it is in the registry now. */
static int load_one(struct api_server *srv, const char *id, char *err, size_t cap)
{
    char dir[PATH_MAX], path[PATH_MAX + 32];
    snprintf(dir, sizeof(dir), "%.3800s/%s/%s", srv->state_dir, DAEMON_STATE_SANDBOXES, id);
    snprintf(path, sizeof(path), "%s/%s", dir, SANDBOX_RECORD_FILE);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SANDBOX_RECORD_MAX) {
        snprintf(err, cap, "%s: %s", SANDBOX_RECORD_FILE,
                 fd < 0 ? strerror(errno) : "not a file of at most 1 MiB");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    json_error_t je;
    json_t *o = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
    close(fd);
    if (!o) {
        snprintf(err, cap, "%s: not JSON (%s), perhaps cut short", SANDBOX_RECORD_FILE, je.text);
        return -1;
    }
    struct kept *k = calloc(1, sizeof(*k));
    struct sandbox *sb = k ? registry_add_saved(&srv->reg, id) : NULL;
    if (!sb) {
        json_decref(o);
        free(k);
        snprintf(err, cap, "no room in the daemon's table, or its id is taken");
        return -1;
    }
    char state[PATH_MAX + 32];
    int rc = from_record(sb, k, o, dir, err, cap);
    snprintf(state, sizeof(state), "%s/%s", sb->vm_snapshot, SNAP_STATE_FILE);
    if (!rc && (stat(state, &st) < 0 || st.st_size == 0)) {
        snprintf(err, cap, "its saved VM (%.300s) is missing or incomplete", sb->vm_snapshot);
        rc = -1;
    }
    /* Its folder for this daemon's run (its agent's socket, its VM's log,
     * a new audit log). */
    int e = 0;
    if (!rc) {
        snprintf(sb->dir, sizeof(sb->dir), "%.3900s/%s", srv->run_dir, sb->id);
        snprintf(sb->sock, sizeof(sb->sock), "%.3900s/agent.sock", sb->dir);
        if (mkdir(sb->dir, 0700) < 0 || (e = sandbox_audit_open(sb))) {
            snprintf(err, cap, "cannot make its folder %.300s: %s", sb->dir,
                     strerror(e ? -e : errno));
            rmdir(sb->dir);
            rc = -1;
        }
    }
    if (rc) {
        json_decref(o);
        free(k);
        sb->vm_snapshot[0] = '\0'; /* not ours to remove */
        registry_retire(&srv->reg, sb);
        registry_put(&srv->reg, sb);
        return -1;
    }
    pthread_mutex_lock(&srv->reg.lock);
    sb->state = SB_PAUSED;
    pthread_mutex_unlock(&srv->reg.lock);
    /* Paused now: a connection to a port resumes it, and the commands
     * that ran wait for that resume to ATTACH. */
    ports_again(sb, k);
    if ((e = bg_restore(&srv->reg, sb, k->cmds, k->ncmds)))
        fprintf(stderr, "airlock: paused sandbox %s: some of its %zu background commands' "
                "records are not listed again: %s\n", sb->id, k->ncmds, strerror(-e));
    json_decref(o);
    free(k);
    registry_put(&srv->reg, sb);
    return 0;
}

unsigned sandbox_records_load(struct api_server *srv)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%.3900s/%s", srv->state_dir, DAEMON_STATE_SANDBOXES);
    DIR *d = opendir(dir);
    unsigned n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char err[600];
        if (!is_id(e->d_name))
            fprintf(stderr, "airlock: %s/%.64s: not a sandbox's folder, left alone\n", dir,
                    e->d_name);
        else if (load_one(srv, e->d_name, err, sizeof(err)))
            fprintf(stderr, "airlock: paused sandbox %s cannot be restored (%s): its folder "
                    "%s/%s is left as it is\n", e->d_name, err, dir, e->d_name);
        else
            n++;
    }
    if (d)
        closedir(d);
    return n;
}
