/* A pod's roles, its VM's shape and its members' names, from the
 * caller's config.json (hostile: fuzz_oci_config reads them too); see
 * pod.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/runtime/container_state.h"
#include "vmm/runtime/container_vm.h"
#include "vmm/runtime/pod.h"

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
    if (n >= name_cap || !agent_ctr_name_ok(id, n))
        return snprintf(err, cap, "container id %.80s: a pod's container needs an id of at most "
                        "%zu letters, digits, '_', '.' and '-'", id, name_cap - 1), -1;
    memcpy(name, id, n + 1);
    snprintf(serial, POD_SERIAL_MAX + 1, "%s", id);
    return 0;
}

