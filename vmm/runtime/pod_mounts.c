/* A pod member's mounts; see pod_mounts.h. */
#include "vmm/runtime/pod_mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/runtime/container_vm.h"
#include "vmm/runtime/pod.h"
#include "vmm/sandbox/guest_put.h"
#include "vmm/sandbox/vm_proc.h"
#include "vmm/util/tar_pack.h"

/* What a configMap or a secret may bring: kubelet caps a configMap at
 * 1 MiB, and a folder that is larger is not one of kubelet's. */
static const struct tar_in_limits copy_limits = {.max_entries = 4096, .max_bytes = 64u << 20};

static ssize_t read_spool(void *opaque, void *buf, size_t len)
{
    ssize_t n;
    while ((n = read(*(int *)opaque, buf, len)) < 0 && errno == EINTR)
        ;
    return n;
}

/* Host folder src into guest folder dst (made), through a tar: the
 * guest side checks every member as an upload's (guest_put.h). */
static int copy_folder(int agent, const char *src, const char *dst, char *err, size_t cap)
{
    FILE *spool = tmpfile();
    if (!spool)
        return snprintf(err, cap, "a spool file: %s", strerror(errno)), -1;
    int fd = fileno(spool), rc = -1;
    char failed[AGENT_MAX_PATH], why[600];
    struct tar_in_result res;
    int e;
    if (tar_pack(src, ".", true, fd, why, sizeof(why)))
        snprintf(err, cap, "%s", why);
    else if (lseek(fd, 0, SEEK_SET) < 0)
        snprintf(err, cap, "the spool file: %s", strerror(errno));
    else if ((e = guest_put_dest(agent, dst, failed)))
        snprintf(err, cap, "the guest folder %.200s: %s", failed[0] ? failed : dst, strerror(-e));
    else if (guest_put_tar(agent, dst, NULL, read_spool, &fd, &copy_limits, &res))
        snprintf(err, cap, "copying it into the guest: %s",
                 res.sink_errno ? strerror(res.sink_errno) : "the folder is too large or broken");
    else
        rc = 0;
    fclose(spool);
    return rc;
}

static int copy_file(int agent, const char *src, const char *dst, char *err, size_t cap)
{
    struct stat st;
    int fd = open(src, O_RDONLY | O_CLOEXEC), e;
    if (fd < 0 || fstat(fd, &st) < 0)
        e = -errno;
    else
        e = container_vm_put(agent, dst, fd, &st);
    if (fd >= 0)
        close(fd);
    if (e)
        snprintf(err, cap, "copying it into the guest: %s", strerror(-e));
    return e ? -1 : 0;
}

/* The emptyDir volume a source is, or NULL. */
static const char *empty_dir_name(const char *source)
{
    const char *p = strstr(source, POD_EMPTY_DIR);
    if (!p)
        return NULL;
    p += strlen(POD_EMPTY_DIR);
    size_t n = strlen(p);
    /* a volume's name is a DNS label (at most 63), a container name's characters */
    return n <= 63 && agent_ctr_name_ok(p, n) ? p : NULL;
}

int pod_mounts_prepare(const char *agent_sock, const char *name, const struct oci_config *c,
                       struct pod_binds *pb, char *err, size_t cap)
{
    int agent = -1, rc = 0;
    memset(pb, 0, sizeof(*pb));
    for (unsigned i = 0; i < c->nmounts && !rc; i++) {
        const struct oci_mount *m = &c->mounts[i];
        struct stat st;
        if (!m->bind || oci_mount_guest_own(m) || stat(m->source, &st) < 0 ||
            !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
            continue; /* not there: runc would fail the mount; a VM need not */
        if (pb->n == AGENT_CTR_MAX_BINDS)
            return snprintf(err, cap, "mounts: more than %d in a pod's container",
                            AGENT_CTR_MAX_BINDS), -1;
        char *src = pb->source[pb->n];
        const char *vol = S_ISDIR(st.st_mode) ? empty_dir_name(m->source) : NULL;
        if (vol) {
            snprintf(src, sizeof(pb->source[0]), "%s/%s", POD_GUEST_VOLUMES, vol);
        } else {
            snprintf(src, sizeof(pb->source[0]), "%s/%s/%u", POD_GUEST_FILES, name, pb->n);
            if (agent < 0 && (agent = vm_proc_dial(agent_sock)) < 0)
                return snprintf(err, cap, "cannot reach the pod's agent: %s",
                                strerror(-agent)), -1;
            char why[800];
            rc = S_ISDIR(st.st_mode) ? copy_folder(agent, m->source, src, why, sizeof(why))
                                     : copy_file(agent, m->source, src, why, sizeof(why));
            if (rc)
                snprintf(err, cap, "mounts: %.200s on %.200s: %s", m->source, m->destination,
                         why);
        }
        pb->bind[pb->n] = (struct agent_bind){.source = src, .target = m->destination,
                                              .flags = m->readonly ? AGENT_BIND_F_RO : 0};
        pb->n++;
    }
    if (agent >= 0)
        close(agent);
    return rc;
}
