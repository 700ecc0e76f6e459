/* libFuzzer target: hostile bytes as an image layer (vmm/image/layer_apply.c,
 * libarchive's tar and compression readers underneath), applied onto a
 * fresh staging folder per input; the folder must be removable afterwards
 * and nothing may appear beside it (a write through a symlink or a ".."
 * would land there). */
#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/image/layer_apply.h"
#include "vmm/util/rmtree.h"

static char box[64];

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (!box[0]) {
        snprintf(box, sizeof(box), "/tmp/airlock-fuzz-layer-XXXXXX");
        assert(mkdtemp(box));
    }
    char stage[96];
    snprintf(stage, sizeof(stage), "%s/stage", box);
    assert(mkdir(stage, 0700) == 0);
    int root = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = memfd_create("layer", MFD_CLOEXEC);
    assert(root >= 0 && fd >= 0 && write(fd, data, size) == (ssize_t)size);
    lseek(fd, 0, SEEK_SET);
    struct layer_limits lim = {.max_bytes = 1 << 20, .max_entries = 1000, .max_depth = 32};
    struct layer_totals tot = {0};
    struct layer_result res;
    layer_apply(fd, root, &lim, &tot, NULL, NULL, &res);
    close(fd);
    close(root);
    assert(rmtree(stage) == 0);
    /* the box holds nothing else: nothing escaped the staging folder */
    assert(rmdir(box) == 0 && mkdir(box, 0700) == 0);
    return 0;
}
