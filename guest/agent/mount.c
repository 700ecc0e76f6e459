/* MOUNT (proto.h): a disk the host made from a folder of its own
 * (`--mount HOSTDIR:GUESTDIR`), mounted at the guest folder before the
 * first command.  The folder and its parents are made beneath "/" with no
 * symlink on the way (beneath.c), and the mount goes onto that very
 * folder through its fd, so nothing can swap the path in between. */
#include <errno.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/agent.h"
#include "guest/agent/beneath.h"

/* 0 or an errno. */
static int mount_disk(uint32_t device, uint32_t flags, const char *path)
{
    char dev[16], target[32];
    struct stat st;
    /* device is 1..AGENT_MOUNT_MAX_DEVICE (the decoder checked): vdb..vdh */
    snprintf(dev, sizeof(dev), "/dev/vd%c", 'a' + (int)device);
    if (stat(dev, &st) < 0)
        return errno;
    if (!S_ISBLK(st.st_mode))
        return ENOTBLK;
    int fd = agent_mkdirs_beneath(path);
    if (fd < 0)
        return -fd;
    snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
    /* nosuid, nodev: a host folder brings files, not privileges or
     * devices; ro: the device itself refuses writes too (virtio-blk's
     * read-only feature), this only says so to the filesystem. */
    unsigned long mf = MS_NOSUID | MS_NODEV | (flags & AGENT_MOUNT_F_RO ? MS_RDONLY : 0);
    int rc = mount(dev, target, "ext4", mf, NULL) < 0 ? errno : 0;
    close(fd);
    return rc;
}

int agent_do_mount(struct aconn *c, const struct agent_msg *m)
{
    int e = mount_disk(m->u.mount.device, m->u.mount.flags, m->u.mount.path);
    return e ? aconn_send_error(c, e, AGENT_OP_MOUNT) : aconn_send(c, AGENT_DONE, NULL, 0);
}
