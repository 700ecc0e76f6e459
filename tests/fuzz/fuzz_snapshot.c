/* libFuzzer target: arbitrary bytes as a snapshot's state file
 * (vmm/snapshot/snapshot_file).  A file is either refused with a one-line
 * "state: ..." error and a known code, or it decodes to a state the writer
 * accepts, and writing and reading that back gives the same state (the
 * reader's rules and the writer's agree), byte for byte the same file
 * twice (the writer is deterministic). */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/snapshot/snapshot_file.h"

/* ~2 MiB each: static, not per input. */
static struct snap_state first, second;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256] = "";
    int rc = snap_decode(data, size, &first, err, sizeof(err));
    if (rc) {
        assert(rc == -EINVAL || rc == -EFBIG || rc == -ENOTSUP || rc == -ENOMEM);
        assert(strncmp(err, "state: ", 7) == 0 && !strchr(err, '\n'));
        return 0;
    }
    void *blob, *again;
    size_t len, again_len;
    assert(snap_encode(&first, &blob, &len, err, sizeof(err)) == 0);
    assert(snap_decode(blob, len, &second, err, sizeof(err)) == 0);
    /* The decoder fills the vCPU slots the state has, not the rest. */
    assert(memcmp(&first, &second, offsetof(struct snap_state, vcpus) +
                                        first.ncpus * sizeof(struct snap_vcpu)) == 0);
    assert(snap_encode(&second, &again, &again_len, err, sizeof(err)) == 0);
    assert(again_len == len && memcmp(blob, again, len) == 0);
    free(blob);
    free(again);
    return 0;
}
