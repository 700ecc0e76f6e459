/* oci_config's linux settings into EXEC's linux section (container_linux.h). */
#include "vmm/runtime/container_linux.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

_Static_assert(OCI_MAX_LINUX_LIST <= AGENT_LNX_MAX_LIST, "a config's list must fit the section's");

/* The config's tmpfs mounts the agent makes (not those of /dev and the
 * like: the guest's own). */
static bool made_tmpfs(const struct oci_mount *m)
{
    return m->data && !oci_mount_guest_own(m);
}

void container_linux_section(const struct oci_config *c, struct agent_exec_req *r)
{
    const struct oci_linux *v = &c->linux_view;
    const struct oci_process *p = &c->process;
    unsigned ntmpfs = 0;
    for (unsigned i = 0; i < c->nmounts; i++)
        ntmpfs += made_tmpfs(&c->mounts[i]);
    if (!c->root_readonly && !p->has_oom && !v->propagation && !v->nmasked && !v->nreadonly &&
        !v->nsysctl && !v->ndevices && !ntmpfs)
        return;
    r->flags |= AGENT_EXEC_F_LINUX;
    for (unsigned i = 0; i < c->nmounts; i++)
        if (made_tmpfs(&c->mounts[i]))
            r->tmpfs[r->ntmpfs++] = (struct agent_tmpfs){
                c->mounts[i].destination, c->mounts[i].data, (uint32_t)c->mounts[i].flags,
                oci_propagation_of(c->mounts[i].propagation)};
    r->lnx_flags = (c->root_readonly ? AGENT_LNX_F_ROOT_RO : 0) | (p->has_oom ? AGENT_LNX_F_OOM : 0);
    r->oom_score_adj = p->has_oom ? p->oom_score_adj : 0;
    r->propagation = oci_propagation_of(v->propagation);
    r->nmasked = v->nmasked;
    memcpy(r->masked, v->masked, v->nmasked * sizeof(*v->masked));
    r->nreadonly = v->nreadonly;
    memcpy(r->readonly, v->readonly, v->nreadonly * sizeof(*v->readonly));
    r->nsysctl = v->nsysctl;
    for (unsigned i = 0; i < v->nsysctl; i++)
        r->sysctl[i] = (struct agent_sysctl){v->sysctl[i].key, v->sysctl[i].value};
    r->ndevices = v->ndevices;
    for (unsigned i = 0; i < v->ndevices; i++) {
        const struct oci_device *d = &v->devices[i];
        uint32_t type = d->type == 'b' ? S_IFBLK : d->type == 'p' ? S_IFIFO : S_IFCHR;
        r->devices[i] = (struct agent_device){d->path, type | d->mode, d->major, d->minor,
                                              d->uid, d->gid};
    }
}

int container_linux_check(const struct oci_config *c, char *err, size_t cap)
{
    /* Zeroed: only the section's own fields and pidns are looked at. */
    struct agent_exec_req *r = calloc(1, sizeof(*r));
    if (!r)
        return snprintf(err, cap, "linux: out of memory"), -1;
    r->pidns = AGENT_PIDNS_NEW;
    container_linux_section(c, r);
    size_t size = agent_exec_lnx_size(r);
    free(r);
    if (size != SIZE_MAX)
        return 0;
    snprintf(err, cap, "linux: maskedPaths, readonlyPaths, sysctl and devices together are more "
                       "than the %u KiB the guest agent takes", AGENT_LNX_MAX_BYTES >> 10);
    return -1;
}
