/* libFuzzer target: hostile bytes as a client of the sandbox API would
 * send them (vmm/http/http_request.c, http_request_parse_server).  A success
 * must keep its promises (the head inside the input, ending in CRLFCRLF;
 * an origin-form target; the strings NUL-terminated within their
 * buffers; its query parameters decoded within bounds), a failure leaves nothing filled in, and a prefix of the input
 * gives 0 or the same verdict. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/http/http_query.h"
#include "vmm/http/http_request.h"

static int parse_copy(const uint8_t *data, size_t n, struct http_server_request *r)
{
    char *copy = malloc(n ? n : 1);
    if (!copy)
        return -500;
    memcpy(copy, data, n);
    int rc = http_request_parse_server(copy, n, r);
    free(copy);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct http_server_request r, p;
    int rc = parse_copy(data, size, &r);
    assert(rc == 1 || rc == 0 || rc == -400 || rc == -411 || rc == -414 || rc == -431 ||
           rc == -505);
    if (rc == 1) {
        assert(r.head_len >= 4 && r.head_len <= size && r.head_len <= HTTP_HEAD_MAX);
        assert(memcmp(data + r.head_len - 4, "\r\n\r\n", 4) == 0);
        assert(r.target[0] == '/' && strlen(r.target) <= HTTP_TARGET_MAX);
        assert(r.method[0] && strlen(r.method) < sizeof(r.method));
        assert(strlen(r.authorization) <= HTTP_AUTH_MAX);
        assert(r.http_minor == 0 || r.http_minor == 1);
        assert(r.body_len < 1000000000000000000ull);
        /* its query, as the files paths read it: bounded, NUL-free */
        char v[64];
        int q = query_param(r.target, "path", v, sizeof(v));
        assert(q == -1 || q == 0 || (q == 1 && strlen(v) < sizeof(v)));
        q = query_param(r.target, "m", v, 1);
        assert(q == -1 || q == 0 || (q == 1 && v[0] == '\0'));
    } else {
        assert(r.head_len == 0 && r.method[0] == '\0');
    }
    size_t cut = rc == 1 ? r.head_len - 1 - (size ? data[0] % r.head_len : 0) : size / 2;
    int prc = parse_copy(data, cut, &p);
    assert(prc == 0 || (rc < 0 && prc == rc));
    if (rc == 1) {
        assert(parse_copy(data, r.head_len, &p) == 1);
        assert(p.head_len == r.head_len && p.body_len == r.body_len &&
               strcmp(p.target, r.target) == 0 && p.keep_alive == r.keep_alive);
    }
    return 0;
}
