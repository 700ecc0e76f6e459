/* A container's VM; see container_vm.h. */
#include "vmm/runtime/container_vm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/sandbox/api_fields.h"
#include "vmm/sandbox/create_mounts.h"
#include "vmm/sandbox/sandbox_boot.h"
#include "vmm/sandbox/vm_proc.h"
#include "vmm/util/rmtree.h"

int container_vm_shape(const struct oci_config *c, unsigned *mem_mib, unsigned *cpus, char *err,
                       size_t cap)
{
    *mem_mib = SANDBOX_DEFAULT_MEM_MIB;
    *cpus = 1;
    if (c->memory_limit > 0) {
        int64_t mib = c->memory_limit >> 20;
        if (mib < CONTAINER_VM_MIN_MIB) {
            snprintf(err, cap, "linux.resources.memory.limit: %lld MiB is less than the %d MiB "
                     "a container's VM needs", (long long)mib, CONTAINER_VM_MIN_MIB);
            return -1;
        }
        *mem_mib = mib > 1 << 20 ? 1 << 20 : (unsigned)mib;
    }
    if (c->cpu_quota > 0 && c->cpu_period > 0) {
        uint64_t n = ((uint64_t)c->cpu_quota + c->cpu_period - 1) / c->cpu_period;
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        if (n > CONTAINER_VM_MAX_CPUS)
            n = CONTAINER_VM_MAX_CPUS;
        if (online > 0 && n > (uint64_t)online)
            n = (uint64_t)online;
        *cpus = n ? (unsigned)n : 1;
    }
    return 0;
}

/* The rules of an annotation, split at commas and spaces, appended to arr. */
static int add_rules(const struct oci_config *c, const char *key, json_t *arr, char *err,
                     size_t cap)
{
    const char *v = json_string_value(json_object_get(c->annotations, key));
    if (!v)
        return 0;
    char *copy = strdup(v), *save = NULL;
    if (!copy)
        return snprintf(err, cap, "out of memory"), -1;
    for (char *r = strtok_r(copy, ", \t\n", &save); r; r = strtok_r(NULL, ", \t\n", &save)) {
        if (json_array_size(arr) >= FIELD_MAX_LIST) {
            free(copy);
            return snprintf(err, cap, "annotation %s: more than %d rules", key, FIELD_MAX_LIST),
                   -1;
        }
        json_array_append_new(arr, json_string(r));
    }
    free(copy);
    return 0;
}

bool container_vm_egress(const struct oci_config *c)
{
    const char *a = json_string_value(json_object_get(c->annotations, CONTAINER_VM_ALLOW_ANNOTATION));
    const char *b =
        json_string_value(json_object_get(c->annotations, CONTAINER_VM_ALLOW_IP_ANNOTATION));
    return (a && strspn(a, ", \t\n") < strlen(a)) || (b && strspn(b, ", \t\n") < strlen(b));
}

/* The config's bind mounts of folders as --mount specs: those of one
 * source folder and read-only flag share one disk (create_mounts_owner),
 * mounted at each destination, so a folder bound at many places (the
 * runtime-tools suite binds /etc at eight) takes one virtio slot. */
static int folder_mounts(const struct oci_config *c, struct create_mounts *cm, char *err,
                         size_t cap)
{
    memset(cm, 0, sizeof(*cm));
    for (unsigned i = 0; i < c->nmounts; i++) {
        const struct oci_mount *m = &c->mounts[i];
        struct stat st;
        if (!m->bind || oci_mount_guest_own(m) || stat(m->source, &st) < 0 || !S_ISDIR(st.st_mode))
            continue;
        size_t tl = strlen(m->destination);
        if (m->source[0] != '/' || strchr(m->source, ':') || strchr(m->destination, ':') ||
            !agent_mount_path_ok(m->destination, tl))
            return snprintf(err, cap, "mounts: %.200s on %.200s: a folder airlock cannot mount "
                            "(absolute paths without ':', not /, /proc, /sys or /dev)",
                            m->source, m->destination), -1;
        if (cm->n == CREATE_MOUNTS_MAX)
            return snprintf(err, cap, "mounts: %.200s on %.200s: more than %d bind mounts of "
                            "folders", m->source, m->destination, CREATE_MOUNTS_MAX), -1;
        unsigned k = cm->n++;
        cm->rw[k] = !m->readonly;
        snprintf(cm->spec[k], sizeof(cm->spec[k]), "%s:%s:%s", m->source, m->destination,
                 cm->rw[k] ? "rw" : "ro");
        memcpy(cm->target[k], m->destination, tl + 1);
        if (create_mounts_disks(cm) > CONTAINER_VM_FOLDER_DISKS)
            return snprintf(err, cap, "mounts: %.200s on %.200s: more folders than the %d "
                            "disks a container's VM has room for (binds of one folder with one "
                            "read-only flag share a disk)", m->source, m->destination,
                            CONTAINER_VM_FOLDER_DISKS), -1;
    }
    return 0;
}

int container_vm_put(int conn, const char *path, int fd, const struct stat *st)
{
    /* its folders first, as runc makes a mount point (Docker's --init is
     * /sbin/docker-init, and an image may have no /sbin) */
    char dir[AGENT_MAX_PATH];
    if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
        return -ENAMETOOLONG;
    for (char *sl = strchr(dir + 1, '/'); sl; sl = strchr(sl + 1, '/')) {
        *sl = '\0';
        agent_mkdir(conn, dir, 0, 0755); /* one already there is fine */
        *sl = '/';
    }
    return agent_file_put(conn, path, st->st_mode & 07777, fd, (uint64_t)st->st_size);
}

/* The config's bind mounts of single files, copied into the guest. */
static int copy_files(const struct oci_config *c, const struct sandbox *sb, char *err, size_t cap)
{
    int conn = -1, rc = 0;
    for (unsigned i = 0; i < c->nmounts && !rc; i++) {
        const struct oci_mount *m = &c->mounts[i];
        struct stat st;
        if (!m->bind || oci_mount_guest_own(m))
            continue;
        int fd = open(m->source, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* not there: runc would fail the mount; a VM need not */
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
            close(fd);
            continue;
        }
        if (conn < 0 && (conn = vm_proc_dial(sb->sock)) < 0) {
            close(fd);
            return snprintf(err, cap, "cannot reach the VM's agent: %s", strerror(-conn)), -1;
        }
        int e = container_vm_put(conn, m->destination, fd, &st);
        close(fd);
        if (e) {
            snprintf(err, cap, "mounts: copying %.200s to %.200s in the guest: %s", m->source,
                     m->destination, strerror(-e));
            rc = -1;
        }
    }
    if (conn >= 0)
        close(conn);
    return rc;
}

int container_vm_boot(const char *root, const struct oci_config *c, const char *disk,
                      const char *cgroup, unsigned mem, unsigned cpus, unsigned *spare_disks,
                      struct sandbox *sb, char *err, size_t cap)
{
    uint8_t rnd[SANDBOX_ID_HEX / 2];
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        return snprintf(err, cap, "getrandom: %s", strerror(errno)), -1;
    memset(sb, 0, sizeof(*sb));
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(sb->id + 2 * i, 3, "%02x", rnd[i]);
    sb->mem_mib = mem;
    sb->cpus = cpus;
    sb->control_fd = -1;
    char vmroot[PATH_MAX];
    snprintf(vmroot, sizeof(vmroot), "%s/vm", root);
    if (mkdir(vmroot, 0700) < 0 && errno != EEXIST)
        return snprintf(err, cap, "%.300s: %s", vmroot, strerror(errno)), -1;
    if (strlen(vmroot) + SANDBOX_ID_HEX + 16 > 107)
        return snprintf(err, cap, "--root %.300s: too long for the VM's Unix socket", root), -1;
    json_t *allow = json_array(), *allow_ip = json_array();
    struct create_mounts cm;
    char pct[24];
    const char *limits[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    char spares[12];
    unsigned nl = 0;
    int rc = -1;
    if (!allow || !allow_ip)
        snprintf(err, cap, "out of memory");
    else if (!add_rules(c, CONTAINER_VM_ALLOW_ANNOTATION, allow, err, cap) &&
             !add_rules(c, CONTAINER_VM_ALLOW_IP_ANNOTATION, allow_ip, err, cap) &&
             !folder_mounts(c, &cm, err, cap)) {
        /* Without a container cgroup the quota is the VM's own cgroup's
         * (with one, the container's cpu.max holds it once booted). */
        if (!cgroup && c->cpu_quota > 0 && c->cpu_period > 0) {
            uint64_t p = (uint64_t)c->cpu_quota * 100 / c->cpu_period;
            snprintf(pct, sizeof(pct), "%llu", (unsigned long long)(p ? p : 1));
            limits[nl++] = "--cpu-quota";
            limits[nl++] = pct;
        }
        /* A pod's VM: its containers' root disks come later, in virtio
         * slots; each folder mounted takes one of them. */
        unsigned disks = create_mounts_disks(&cm);
        *spare_disks = *spare_disks > disks ? *spare_disks - disks : 0;
        if (*spare_disks) {
            snprintf(spares, sizeof(spares), "%u", *spare_disks);
            limits[nl++] = "--spare-disks";
            limits[nl++] = spares;
        }
        if (cgroup) { /* the container's own, beside its stand-ins */
            limits[nl++] = "--cgroup";
            limits[nl++] = cgroup;
        }
        /* The guest kernel sets its hostname from its command line (the
         * config's name is checked to be one word there). */
        char host[80];
        if (c->hostname)
            snprintf(host, sizeof(host), "hostname=%s", c->hostname);
        struct sandbox_boot_req b = {.allow = json_array_size(allow) ? allow : NULL,
                                     .allow_ip = json_array_size(allow_ip) ? allow_ip : NULL,
                                     .root_disk = disk, .limits = limits, .mounts = &cm,
                                     .append = c->hostname ? host : NULL};
        const char *field;
        if (!sandbox_boot(vmroot, sb, &b, err, cap, &field)) {
            rc = copy_files(c, sb, err, cap);
            if (rc)
                sandbox_teardown(sb);
        }
    }
    json_decref(allow);
    json_decref(allow_ip);
    return rc;
}

void container_vm_forget(const json_t *state)
{
    const char *sock = json_string_value(json_object_get(state, "vm_sock"));
    char dir[PATH_MAX];
    if (json_object_get(state, "pod"))
        return; /* a pod's member: the VM is the pod's (vmm/runtime/pod.h) */
    if (!sock || snprintf(dir, sizeof(dir), "%s", sock) >= (int)sizeof(dir))
        return;
    char *slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = '\0';
    /* only a folder of ours: ROOT/vm/<id> */
    if (!strstr(dir, "/vm/"))
        return;
    pid_t vm = (pid_t)json_integer_value(json_object_get(state, "vm_pid"));
    if (vm > 0)
        kill(vm, SIGKILL); /* no-op when it is gone; it died with its stand-in */
    rmtree(dir);
}
