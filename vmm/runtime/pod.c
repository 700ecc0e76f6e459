/* A pod's roles and a member's way into its pod; see pod.h. */
#include "vmm/runtime/pod.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/runtime/container_state.h"
#include "vmm/runtime/container_vm.h"
#include "vmm/runtime/pod_wire.h"

static const char *annotation(const struct oci_config *c, const char *key)
{
    return c->annotations ? json_string_value(json_object_get(c->annotations, key)) : NULL;
}

int pod_role_of(const struct oci_config *c, const char **sandbox_id, char *err, size_t cap)
{
    const char *type = annotation(c, POD_TYPE_ANNOTATION);
    *sandbox_id = NULL;
    if (!type)
        return POD_NONE;
    if (!strcmp(type, "sandbox"))
        return POD_SANDBOX;
    if (strcmp(type, "container"))
        return snprintf(err, cap, "annotations: %s: '%.100s' is neither sandbox nor container",
                        POD_TYPE_ANNOTATION, type), -1;
    const char *sid = annotation(c, POD_SANDBOX_ID_ANNOTATION);
    if (!sid || !container_id_ok(sid))
        return snprintf(err, cap, "annotations: %s: a pod's container needs its pod's sandbox id",
                        POD_SANDBOX_ID_ANNOTATION), -1;
    *sandbox_id = sid;
    return POD_MEMBER;
}

/* An annotation's whole number in [lo, hi]: 1 when set, 0 when not, -1. */
static int annotation_number(const struct oci_config *c, const char *key, unsigned lo,
                             unsigned hi, unsigned *out, char *err, size_t cap)
{
    const char *s = annotation(c, key);
    if (!s)
        return 0;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi)
        return snprintf(err, cap, "annotations: %s: '%.40s' is not a number from %u to %u", key,
                        s, lo, hi), -1;
    *out = (unsigned)v;
    return 1;
}

int pod_vm_shape(const struct oci_config *c, unsigned *mem_mib, unsigned *cpus, char *err,
                 size_t cap)
{
    if (container_vm_shape(c, mem_mib, cpus, err, cap))
        return -1;
    unsigned v;
    int r = annotation_number(c, POD_MEMORY_ANNOTATION, CONTAINER_VM_MIN_MIB, 1u << 20, &v, err,
                              cap);
    if (r < 0)
        return -1;
    if (c->memory_limit <= 0)
        *mem_mib = r ? v : POD_DEFAULT_MEM_MIB;
    r = annotation_number(c, POD_CPUS_ANNOTATION, 1, CONTAINER_VM_MAX_CPUS, &v, err, cap);
    if (r < 0)
        return -1;
    if (r && !(c->cpu_quota > 0 && c->cpu_period > 0)) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        *cpus = online > 0 && v > (unsigned long)online ? (unsigned)online : v;
    }
    return 0;
}

int pod_member_names(const char *id, char *name, size_t name_cap, char *serial, char *err,
                     size_t cap)
{
    size_t n = strlen(id);
    if (!n || n >= name_cap || id[0] == '.' || strspn(id, POD_NAME_CHARS) != n)
        return snprintf(err, cap, "container id %.80s: a pod's container needs an id of at most "
                        "%zu letters, digits, '_', '.' and '-'", id, name_cap - 1), -1;
    memcpy(name, id, n + 1);
    snprintf(serial, POD_SERIAL_MAX + 1, "%s", id);
    return 0;
}

/* An empty file no one else can reach, for the slot's copy-on-write
 * overlay: the VM may open no file itself. */
static int overlay_file(char *err, size_t cap)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        snprintf(err, cap, "an overlay file in %.200s: %s", dir, strerror(errno));
    return fd;
}

int pod_join(const char *pod_sock, const char *name, const char *serial, const char *disk,
             unsigned *slot, char *err, size_t cap)
{
    int fds[2] = {open(disk, O_RDONLY | O_CLOEXEC), -1};
    if (fds[0] < 0)
        return snprintf(err, cap, "the root disk %.200s: %s", disk, strerror(errno)), -1;
    if ((fds[1] = overlay_file(err, cap)) < 0) {
        close(fds[0]);
        return -1;
    }
    int conn = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char msg[POD_WIRE_MAX];
    int e = 0;
    if (conn < 0 || snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", pod_sock) >=
                        (int)sizeof(sa.sun_path))
        e = conn < 0 ? errno : ENAMETOOLONG;
    else if (connect(conn, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        e = errno;
    if (e) {
        snprintf(err, cap, "the pod's VM (%.200s): %s", pod_sock, strerror(e));
        goto fail;
    }
    snprintf(msg, sizeof(msg), "FILL %s %s", serial, name);
    if ((e = pod_wire_send(conn, msg, fds, 2))) {
        snprintf(err, cap, "the pod's VM: %s", strerror(-e));
        goto fail;
    }
    close(fds[0]);
    close(fds[1]);
    fds[0] = fds[1] = -1;
    if ((e = pod_wire_recv(conn, msg, sizeof(msg), POD_CONTROL_MS)) < 0) {
        snprintf(err, cap, "the pod's VM did not answer: %s", strerror(-e));
        goto fail;
    }
    unsigned s;
    char tail;
    if (sscanf(msg, "OK %u%c", &s, &tail) != 1) {
        snprintf(err, cap, "the pod's VM: %s", !strncmp(msg, "ERR ", 4) ? msg + 4 : msg);
        goto fail;
    }
    *slot = s;
    return conn;
fail:
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    if (conn >= 0)
        close(conn);
    return -1;
}
