/* libFuzzer target: hostile multipart/form-data bodies (vmm/http/multipart).
 * The input's first line is a Content-Type value, the rest the body.
 * Every part the parser yields must lie inside the body, its name and
 * filename NUL-terminated within their bounds and free of CR, LF and '"';
 * a -1 must stay -1, and 0 must stay 0. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/http/multipart.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size < 200 ? size : 200);
    char ct[201];
    size_t cl = nl ? (size_t)(nl - data) : 0;
    memcpy(ct, data, cl);
    ct[cl] = '\0';
    if (memchr(ct, 0, cl))
        return 0;
    const uint8_t *body_src = nl ? nl + 1 : data;
    size_t n = size - (size_t)(body_src - data);
    char *body = malloc(n ? n : 1); /* an exact-size copy: reads past n are caught */
    memcpy(body, body_src, n);
    char boundary[MULTIPART_BOUNDARY_MAX + 1];
    if (multipart_boundary(ct, boundary) == 0) {
        size_t bl = strlen(boundary);
        assert(bl >= 1 && bl <= MULTIPART_BOUNDARY_MAX);
        struct multipart m;
        static struct multipart_part p;
        multipart_init(&m, boundary, body, n);
        int rc, parts = 0;
        while ((rc = multipart_next(&m, &p)) == 1) {
            assert(p.data >= body && p.len <= n && p.data + p.len <= body + n);
            assert(strlen(p.name) <= MULTIPART_NAME_MAX && strlen(p.filename) <= MULTIPART_NAME_MAX);
            assert(!strpbrk(p.name, "\r\n\"") && !strpbrk(p.filename, "\r\n\""));
            assert(++parts <= MULTIPART_PARTS_MAX);
        }
        assert(rc == 0 || rc == -1);
        assert(rc == 0 || p.why);
        assert(multipart_next(&m, &p) == rc);
    }
    free(body);
    return 0;
}
