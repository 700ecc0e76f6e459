/* A member's way into its pod; see pod.h. */
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

#include "devices/disk.h"
#include "vmm/runtime/pod_wire.h"

/* An empty file no one else can reach, for the slot's copy-on-write
 * overlay: the VM may open no file itself. */
static int overlay_file(char *err, size_t cap)
{
    const char *dir = getenv("TMPDIR"); /* where disk_open makes its own */
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = disk_overlay_file(dir);
    if (fd < 0)
        snprintf(err, cap, "an overlay file in %.200s: %s", dir, strerror(-fd));
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

int pod_oom_asked(int conn, uint32_t pid)
{
    char msg[POD_WIRE_MAX];
    snprintf(msg, sizeof(msg), "OOM %u", pid);
    int e = pod_wire_send(conn, msg, NULL, 0);
    if (e)
        return e;
    if ((e = pod_wire_recv(conn, msg, sizeof(msg), POD_CONTROL_MS)) < 0)
        return e;
    return !strcmp(msg, "YES") ? 1 : !strcmp(msg, "NO") ? 0 : -EPROTO;
}
