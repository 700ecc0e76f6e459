/* libFuzzer target, differential: vmm/util/scrub fed in pieces against the
 * one-shot reference (tests/unit/scrub_ref.c).  The input chooses the
 * patterns (how many, their lengths, which only count), where the stream
 * is cut (empty pieces included) and the stream itself; a flag folds
 * every byte into a three-letter alphabet so that patterns overlap each
 * other and the stream often.  Output, hits and the hold-back bound must
 * match whatever the cuts were.
 *
 *   byte 0       n - 1 (low 3 bits, n <= 8); 0x80: three-letter alphabet
 *   per pattern  length byte (1..16, or 1..128 with 0x80), flags byte
 *                (bit 0: count only), then the pattern's bytes
 *   one byte     the cut generator's seed
 *   the rest     the stream */
#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/scrub_ref.h"
#include "vmm/util/scrub.h"

#define NPAT 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char finds[NPAT][128], repls[NPAT][128];
    struct scrub_pattern p[NPAT];
    size_t at = 0, longest = 0;
    if (size < 1)
        return 0;
    unsigned n = 1 + (data[at] & 7);
    bool fold = data[at++] & 0x80;
#define FOLD(b) (fold ? (unsigned char)('a' + (b) % 3) : (unsigned char)(b))
    for (unsigned i = 0; i < n; i++) {
        if (at + 2 > size)
            return 0;
        size_t len = 1 + (data[at] & 0x80 ? data[at] % 128 : data[at] % 16);
        bool count_only = data[at + 1] & 1;
        at += 2;
        if (at + len > size)
            return 0;
        for (size_t j = 0; j < len; j++) {
            finds[i][j] = FOLD(data[at + j]);
            repls[i][j] = (unsigned char)('A' + i);
        }
        at += len;
        p[i] = (struct scrub_pattern){finds[i], count_only ? NULL : repls[i], len};
        if (!count_only && len > longest)
            longest = len;
    }
    if (at >= size)
        return 0;
    uint32_t seed = data[at++];
    size_t len = size - at;
    unsigned char *in = malloc(len + 1), *want = malloc(len + 1), *got = malloc(len + SCRUB_LEN_MAX);
    assert(in && want && got);
    for (size_t j = 0; j < len; j++)
        in[j] = FOLD(data[at + j]);

    uint64_t want_hits[NPAT] = {0};
    scrub_ref(p, n, in, len, want, want_hits);

    struct scrub s;
    assert(scrub_init(&s, p, n) == 0);
    size_t from = 0, o = 0;
    while (from < len) {
        seed = seed * 1103515245u + 12345u;
        size_t piece = (seed >> 16) % 24; /* 0: an empty feed */
        if (piece > len - from)
            piece = len - from;
        char *copy = malloc(piece + 1);
        assert(copy);
        memcpy(copy, in + from, piece);
        size_t w = scrub_feed(&s, copy, piece, (char *)got + o, piece + SCRUB_LEN_MAX);
        free(copy);
        assert(w != SCRUB_NO_ROOM);
        from += piece;
        o += w;
        /* Never ahead of the input, never more held than a replacement's
         * length - 1, and what went out is final. */
        assert(o <= from && from - o <= (longest ? longest - 1 : 0));
        assert(memcmp(got, want, o) == 0);
    }
    size_t w = scrub_flush(&s, (char *)got + o, SCRUB_LEN_MAX);
    assert(w != SCRUB_NO_ROOM);
    o += w;
    assert(o == len && memcmp(got, want, len) == 0);
    for (unsigned i = 0; i < n; i++)
        assert(s.hits[i] == want_hits[i]);
    scrub_free(&s);
    free(in);
    free(want);
    free(got);
    return 0;
}
