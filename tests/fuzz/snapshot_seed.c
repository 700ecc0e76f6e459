/* Writes valid state files for fuzz_snapshot to start from (the sample of
 * tests/unit/snap_sample.c), so the seeds follow the layout as it changes
 * instead of being committed blobs:  snapshot-seed DIR */
#include <stdio.h>
#include <stdlib.h>

#include "tests/unit/snap_sample.h"
#include "vmm/snapshot/snapshot_file.h"

int main(int argc, char **argv)
{
    /* vCPUs, transports, disks, seed (the seed sets each vCPU's MSR count). */
    static const unsigned shapes[][4] = {{1, 0, 0, 0}, {1, 3, 2, 20}, {2, 5, 1, 3}};
    static struct snap_state s;
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        char err[256], path[4096];
        void *blob;
        size_t len;
        snap_sample(&s, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3]);
        if (snap_encode(&s, &blob, &len, err, sizeof(err))) {
            fprintf(stderr, "snapshot-seed: %s\n", err);
            return 1;
        }
        snprintf(path, sizeof(path), "%s/seed-snapshot-%zu", argv[1], i);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(blob, 1, len, f) != len || fclose(f)) {
            perror(path);
            return 1;
        }
        free(blob);
    }
    return 0;
}
