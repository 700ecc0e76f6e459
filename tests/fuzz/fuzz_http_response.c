/* libFuzzer target: hostile bytes as an upstream server would send them
 * to the credential broker (vmm/http/http_response, vmm/http/http_chunked).
 *
 * The input is a response head and what follows it.  A parsed head must
 * obey what the broker relies on (inside the input, ending in CRLFCRLF,
 * consistent framing), and a prefix must give 0 or the same verdict.
 * Then the bytes after the head (or the whole input, when there is no
 * head) go through the chunked decoder twice: in one piece and in pieces
 * cut where the input's own bytes say.  Both must agree on the result,
 * the bytes consumed and the data, because the network decides the
 * pieces, not the server. */
#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/http/http_chunked.h"
#include "vmm/http/http_response.h"

static void check_head(const uint8_t *data, size_t size, const struct http_response *r)
{
    assert(r->head_len >= 4 && r->head_len <= size && r->head_len <= HTTP_RESPONSE_HEAD_MAX);
    assert(memcmp(data + r->head_len - 4, "\r\n\r\n", 4) == 0);
    assert(memcmp(data, "HTTP/1.", 7) == 0);
    assert(r->status >= 100 && r->status <= 599);
    assert(r->http_minor == 0 || r->http_minor == 1);
    assert(!(r->chunked && r->has_content_length));
    assert(!r->chunked || r->http_minor == 1);
    assert(r->content_length < 1000000000000000000ull);
    assert(r->has_content_length || r->content_length == 0);
    enum http_body_kind head = http_response_body(r, true), get = http_response_body(r, false);
    assert(head == HTTP_BODY_NONE);
    assert(get != HTTP_BODY_CHUNKED || r->chunked);
    assert(get != HTTP_BODY_LENGTH || r->has_content_length);
    assert(get != HTTP_BODY_NONE || r->status < 200 || r->status == 204 || r->status == 304);
}

/* Parses an exact-size copy of data[0..n) so reads past n are caught. */
static int parse_prefix(const uint8_t *data, size_t n, struct http_response *r)
{
    char *copy = malloc(n ? n : 1);
    assert(copy);
    memcpy(copy, data, n);
    int rc = http_response_parse(copy, n, r);
    free(copy);
    return rc;
}

struct run {
    int rc;
    size_t consumed;
    uint8_t *out; /* the decoded data, at most the input's size */
    size_t out_len;
    bool trailers;
};

/* Decodes in[0, len), cut before each i where the selector byte says so
 * (cuts == NULL: one piece); each piece is an exact-size heap copy. */
static void decode(const uint8_t *in, size_t len, const uint8_t *cuts, struct run *r)
{
    struct http_chunked c;
    http_chunked_init(&c);
    r->rc = HTTP_CHUNKED_OK;
    r->consumed = r->out_len = 0;
    size_t from = 0;
    while (from < len && r->rc == HTTP_CHUNKED_OK) {
        size_t to = from + 1;
        while (cuts && to < len && cuts[to] % 5 != 0)
            to++;
        if (!cuts)
            to = len;
        size_t n = to - from, off = 0;
        char *piece = malloc(n);
        assert(piece);
        memcpy(piece, in + from, n);
        while (off < n && r->rc == HTTP_CHUNKED_OK) {
            size_t used, dn;
            const char *d;
            r->rc = http_chunked_feed(&c, piece + off, n - off, &used, &d, &dn);
            assert(used <= n - off);
            assert(r->rc != HTTP_CHUNKED_OK || used > 0);
            assert(dn == 0 || (d >= piece + off && d + dn <= piece + off + used));
            assert(dn == 0 || r->rc == HTTP_CHUNKED_OK);
            memcpy(r->out + r->out_len, d ? d : "", dn);
            r->out_len += dn;
            off += used;
            r->consumed += used;
        }
        free(piece);
        from = to;
    }
    r->trailers = c.trailers;
    /* The end is sticky. */
    size_t used, dn;
    const char *d;
    if (r->rc != HTTP_CHUNKED_OK)
        assert(http_chunked_feed(&c, "0\r\n\r\n", 5, &used, &d, &dn) == r->rc && used == 0);
}

/* What was decoded, encoded again as one chunk, decodes to the same. */
static void reencode(const struct run *one)
{
    size_t cap = HTTP_CHUNK_HEADER_MAX + one->out_len + 7, n = 0;
    uint8_t *enc = malloc(cap);
    assert(enc);
    n = http_chunk_header((char *)enc, one->out_len);
    assert(n == 0 ? one->out_len == 0 : n <= HTTP_CHUNK_HEADER_MAX);
    memcpy(enc + n, one->out, one->out_len);
    n += one->out_len;
    if (one->out_len) {
        memcpy(enc + n, HTTP_CHUNK_END, 2);
        n += 2;
    }
    memcpy(enc + n, HTTP_CHUNK_LAST, 5);
    n += 5;
    struct run again = {.out = malloc(n)};
    assert(again.out);
    decode(enc, n, NULL, &again);
    assert(again.rc == HTTP_CHUNKED_DONE && again.consumed == n && !again.trailers);
    assert(again.out_len == one->out_len && memcmp(again.out, one->out, one->out_len) == 0);
    free(again.out);
    free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct http_response r, p;
    int rc = http_response_parse((const char *)data, size, &r);
    assert(rc == 1 || rc == 0 || rc == -1 || rc == -2);
    if (rc == 1)
        check_head(data, size, &r);
    else
        assert(r.head_len == 0 && r.status == 0);

    size_t cut = rc == 1 ? r.head_len - 1 - (size ? data[0] % r.head_len : 0) : size / 2;
    int prc = parse_prefix(data, cut, &p);
    assert(prc == 0 || (rc < 0 && prc == rc));
    if (rc == 1) {
        assert(parse_prefix(data, r.head_len, &p) == 1);
        assert(memcmp(&p, &r, sizeof(p)) == 0);
    }

    const uint8_t *body = rc == 1 ? data + r.head_len : data;
    size_t len = rc == 1 ? size - r.head_len : size;
    struct run one, split;
    one.out = malloc(len + 1);
    split.out = malloc(len + 1);
    assert(one.out && split.out);
    decode(body, len, NULL, &one);
    decode(body, len, body, &split);
    assert(one.rc == split.rc && one.consumed == split.consumed && one.trailers == split.trailers);
    assert(one.out_len == split.out_len && memcmp(one.out, split.out, one.out_len) == 0);
    assert(one.out_len <= one.consumed);
    if (one.rc == HTTP_CHUNKED_DONE) {
        assert(one.consumed >= 5 && memcmp(body + one.consumed - 2, "\r\n", 2) == 0);
        reencode(&one);
    }
    free(one.out);
    free(split.out);
    return 0;
}
