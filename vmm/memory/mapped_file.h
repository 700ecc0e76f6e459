/* A user-named input file (kernel, initrd) mapped read-only. */
#ifndef AIRLOCK_MEMORY_MAPPED_FILE_H
#define AIRLOCK_MEMORY_MAPPED_FILE_H

#include <stddef.h>
#include <stdint.h>

struct mapped_file {
    const uint8_t *data;
    size_t size;
    int fd; /* kept open while data is, so guest RAM can map it (gmem_load_file) */
};

/* Maps `path`, which must be a non-empty regular file of at most `max`
 * bytes.  -errno with `err` as "OPTION PATH: what is wrong". */
int mapped_file_open(struct mapped_file *f, const char *option, const char *path, size_t max,
                     char *err, size_t errlen);

void mapped_file_close(struct mapped_file *f);

#endif
