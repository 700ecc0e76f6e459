/* libFuzzer target: hostile bytes as the tar of a folder --copy-out
 * (vmm/cli/run_copy_tree.c: the waiting parent's unpacker, outside the jail,
 * vmm/sandbox/tar_in.c's checks underneath), unpacked into a fresh staging
 * folder per input; the folder must be removable afterwards and nothing
 * may appear beside it (a write through a symlink or a ".." would land
 * there). */
#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/cli/run_copy_tree.h"
#include "vmm/util/rmtree.h"

static char box[64];

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (!box[0]) {
        snprintf(box, sizeof(box), "/tmp/airlock-fuzz-copy-XXXXXX");
        assert(mkdtemp(box));
    }
    char stage[96], err[512];
    snprintf(stage, sizeof(stage), "%s/stage", box);
    assert(mkdir(stage, 0700) == 0);
    int root = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = memfd_create("tree", MFD_CLOEXEC);
    assert(root >= 0 && fd >= 0 && write(fd, data, size) == (ssize_t)size);
    struct run_copy_tree_limits lim = {.tar = {.max_entries = 1000, .max_bytes = 1 << 20},
                                       .max_archive = 4 << 20, .max_names = 1 << 20};
    run_copy_tree_unpack(fd, root, strlen(stage), &lim, err, sizeof(err));
    close(fd);
    close(root);
    assert(rmtree(stage) == 0);
    /* the box holds nothing else: nothing escaped the staging folder */
    assert(rmdir(box) == 0 && mkdir(box, 0700) == 0);
    return 0;
}
