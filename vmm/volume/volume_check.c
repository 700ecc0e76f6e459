/* e2fsck before an attach; see volume_check.h. */
#include "vmm/volume/volume_check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/image/e2fs_tool.h"

/* e2fsck(8)'s exit status bits */
#define FSCK_CORRECTED 1
#define FSCK_REBOOT    2
#define FSCK_LEFT      4

/* One e2fsck run: its status, its last line in `line`, and whether it
 * replayed the journal (which it does, and says, with status 0 when that
 * was all: a VM stopped or killed with the volume mounted leaves one). */
static int fsck(const char *flags, const char *disk, char *line, size_t cap, bool *replayed)
{
    int log = memfd_create("e2fsck", MFD_CLOEXEC);
    if (log < 0)
        return -errno;
    char *argv[] = {"e2fsck", (char *)flags, (char *)disk, NULL};
    int rc = e2fs_tool_run(argv, NULL, log);
    e2fs_tool_last_line(log, line, cap);
    char head[4096];
    ssize_t n = pread(log, head, sizeof(head) - 1, 0);
    head[n > 0 ? n : 0] = '\0';
    *replayed = *replayed || strstr(head, "recovering journal");
    close(log);
    return rc;
}

int volume_check(const struct volume_store *vs, const char *name, bool readers_before, char *did,
                 size_t dcap, char *err, size_t ecap)
{
    char disk[PATH_MAX], line[300];
    volume_disk_path(vs, name, disk, sizeof(disk));
    const char *how = readers_before ? "-n" : "-p";
    bool replayed = false;
    int rc = fsck(how, disk, line, sizeof(line), &replayed);
    if (rc == FSCK_LEFT && !readers_before) {
        how = "-fy";
        rc = fsck(how, disk, line, sizeof(line), &replayed);
    }
    if (rc < 0) {
        snprintf(err, ecap, "cannot run e2fsck: %s", strerror(-rc));
        return rc;
    }
    if (rc & ~(FSCK_CORRECTED | FSCK_REBOOT)) {
        snprintf(err, ecap, "e2fsck %s left it damaged (status %d): %.200s", how, rc, line);
        return -EIO;
    }
    if (rc)
        snprintf(did, dcap, "%srepaired by e2fsck %s: %.200s",
                 replayed ? "journal replayed and " : "", how, line);
    else if (replayed)
        snprintf(did, dcap, "journal replayed by e2fsck -p: %.200s", line);
    else
        snprintf(did, dcap, "clean");
    return 0;
}
