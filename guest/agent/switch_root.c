/* An imported image's root: the agent comes from airlock, not from the
 * image (a `FROM scratch` image holds no agent, and one baked into a disk
 * would speak an old protocol after the next bump).  So airlock boots such
 * a VM from its small read-only agent disk (/init is the agent) and names
 * the image's disk as `airlock.root=/dev/vdX` on the kernel command line;
 * the agent mounts it and makes it the root, as switch_root(8) does, then
 * goes on as PID 1 of the image.  The agent disk stays mounted beneath,
 * reachable by nothing once the root has moved. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent/agent.h"

#define ROOT_KEY "airlock.root=/dev/"
#define NEW_ROOT "/newroot"

/* The device after ROOT_KEY in the command line: one word of [a-z0-9]
 * (vda, vdb...), so no path of the guest's choosing is ever opened. */
static int root_device(char *dev, size_t cap)
{
    char line[4096];
    int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, line, sizeof(line) - 1);
    int e = errno;
    close(fd);
    if (n < 0)
        return -e;
    line[n] = '\0';
    for (char *p = line; (p = strstr(p, ROOT_KEY)); p++) {
        if (p != line && p[-1] != ' ')
            continue;
        p += strlen(ROOT_KEY);
        size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789");
        if (!len || len + 6 > cap || (p[len] && p[len] != ' ' && p[len] != '\n'))
            return -EINVAL;
        snprintf(dev, cap, "/dev/%.*s", (int)len, p);
        return 1;
    }
    return 0;
}

/* virtio-blk probes during the kernel's initcalls, before /init, so the
 * node is there at once; a second's patience costs nothing when it is. */
static int mount_root(const char *dev)
{
    for (int i = 0; i < 100; i++) {
        /* noinit_itable: no background thread zeroing the inode tables
         * mke2fs left lazy (a VM lives briefly; its disk is a cow). */
        if (!mount(dev, NEW_ROOT, "ext4", 0, "noinit_itable"))
            return 0;
        if (errno != ENOENT && errno != ENXIO)
            return -errno;
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
    return -ENOENT;
}

int agent_switch_root(void)
{
    mkdir("/proc", 0555);
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) && errno != EBUSY)
        return -errno;
    char dev[32];
    int rc = root_device(dev, sizeof(dev));
    umount2("/proc", MNT_DETACH); /* PID 1 mounts the image's own later */
    if (rc <= 0)
        return rc;
    mkdir("/dev", 0755);
    if (mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755") && errno != EBUSY)
        return -errno;
    mkdir(NEW_ROOT, 0755);
    rc = mount_root(dev);
    umount2("/dev", MNT_DETACH);
    if (rc)
        return rc;
    if (chdir(NEW_ROOT) || mount(".", "/", NULL, MS_MOVE, NULL) || chroot(".") || chdir("/"))
        return -errno;
    return 1;
}
