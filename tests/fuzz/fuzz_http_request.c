/* libFuzzer target: hostile bytes as a guest's proxy client would send them
 * (vmm/http/http_request).  The whole input is parsed once; a success must obey
 * the invariants airlock relies on (the head is inside the input and ends
 * in CRLFCRLF, a real destination, a well-formed origin head carrying
 * "Connection: close"), and a prefix of the input must give 0 or the same
 * verdict (the result depends on the head only, so a guest cannot change
 * it by how it splits its writes). */
#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vmm/http/http_request.h"

static bool is_known_result(int rc)
{
    return rc == 1 || rc == 0 || rc == -400 || rc == -405 || rc == -411 || rc == -414 || rc == -431 ||
           rc == -505 || rc == -500;
}

/* Every line of the rewritten head ends in CRLF, there are no other CR,
 * LF or NUL bytes, the last line before the empty one is the forced
 * "Connection: close", and no other Connection or Proxy- line survives. */
static void check_origin_head(const struct http_request *r)
{
    const char *h = r->origin_head;
    size_t n = r->origin_head_len;
    static const char tail[] = "\r\nConnection: close\r\n\r\n";
    assert(h && n > sizeof(tail) && h[n] == '\0' && strlen(h) == n);
    assert(memcmp(h + n - (sizeof(tail) - 1), tail, sizeof(tail) - 1) == 0);
    size_t ml = strlen(r->method);
    assert(strncmp(h, r->method, ml) == 0 && h[ml] == ' ' && h[ml + 1] == '/');
    int connection_lines = 0;
    for (size_t i = 0; i < n; i++) {
        if (h[i] == '\r')
            assert(h[i + 1] == '\n');
        if (h[i] == '\n') {
            assert(i > 0 && h[i - 1] == '\r');
            const char *line = h + i + 1;
            if (strncasecmp(line, "Connection:", 11) == 0)
                connection_lines++;
            assert(strncasecmp(line, "Proxy-Connection:", 17) != 0);
            assert(strncasecmp(line, "Proxy-Authorization:", 20) != 0);
            assert(line[0] != '\r' || i + 3 == n); /* only the last line is empty */
        }
    }
    assert(connection_lines == 1);
    assert(strstr(h, "\r\nHost: ") != NULL);
}

static void check_success(const uint8_t *data, size_t size, const struct http_request *r)
{
    assert(r->head_len >= 4 && r->head_len <= size && r->head_len <= HTTP_HEAD_MAX);
    assert(memcmp(data + r->head_len - 4, "\r\n\r\n", 4) == 0);
    assert(r->host[0] != '\0' && strlen(r->host) <= HTTP_HOST_MAX);
    assert(r->port != 0);
    assert(r->method[0] != '\0' && strlen(r->method) < sizeof(r->method));
    assert(r->http_minor == 0 || r->http_minor == 1);
    if (r->kind == HTTP_REQ_CONNECT) {
        assert(strcmp(r->method, "CONNECT") == 0 && r->origin_head == NULL && r->body_len == 0);
    } else {
        assert(r->kind == HTTP_REQ_FORWARD);
        check_origin_head(r);
        /* The body is what Content-Length says; a chunked one is refused. */
        assert(r->body_len < 1000000000000000000ull);
        assert(!memmem(r->origin_head, r->origin_head_len, "\r\nTransfer-Encoding:", 20));
    }
}

/* Parses an exact-size copy of data[0..n) so reads past n are caught. */
static int parse_prefix(const uint8_t *data, size_t n, struct http_request *r)
{
    char *copy = malloc(n ? n : 1);
    if (!copy)
        return -500;
    memcpy(copy, data, n);
    int rc = http_request_parse(copy, n, r);
    free(copy);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct http_request r, p;
    int rc = http_request_parse((const char *)data, size, &r);
    assert(is_known_result(rc));
    if (rc == 1)
        check_success(data, size, &r);
    else
        assert(r.origin_head == NULL && r.head_len == 0);

    /* A prefix that ends inside the head gives 0 or this verdict; one that
     * holds the whole head gives exactly this result. */
    size_t cut = rc == 1 ? r.head_len - 1 - (size ? data[0] % r.head_len : 0) : size / 2;
    int prc = parse_prefix(data, cut, &p);
    assert(prc == 0 || (rc < 0 && prc == rc));
    http_request_free(&p);
    if (rc == 1) {
        assert(parse_prefix(data, r.head_len, &p) == 1);
        assert(p.head_len == r.head_len && p.port == r.port && strcmp(p.host, r.host) == 0);
        assert(p.origin_head_len == r.origin_head_len);
        assert(!r.origin_head || memcmp(p.origin_head, r.origin_head, r.origin_head_len) == 0);
        http_request_free(&p);
    }
    http_request_free(&r);
    http_request_free(&r); /* twice is safe */
    return 0;
}
