/* Streaming search-and-replace (see scrub.h).
 *
 * Whether a pattern occurs at a position is a property of the input alone,
 * so each pattern's Knuth-Morris-Pratt matcher runs over every input byte
 * and never restarts, whatever was replaced.  When a replacing pattern's
 * occurrence completes, it is noted at its start (the longest one per
 * start).  A position is decided once no replacing matcher is part-way
 * through an occurrence that began there or earlier: the earliest such
 * start is `end - matched`, for the matcher with the longest matched
 * prefix.  Deciding goes left to right: a noted occurrence is written out
 * replaced and the occurrences that overlap it are skipped (matching goes
 * on after it), any other byte is written out as it came.  Only matchers
 * part-way through a match, or whose pattern begins with the byte, take a
 * step: for the others the step would leave them at 0. */
#include "vmm/util/scrub.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(SCRUB_PATTERNS_MAX <= 64, "one bit per pattern in a uint64_t");

/* fail[j]: the longest proper prefix of find[0..j] that is also its suffix. */
static void build_fail(const unsigned char *find, size_t len, uint16_t *fail)
{
    size_t k = 0;
    fail[0] = 0;
    for (size_t j = 1; j < len; j++) {
        while (k && find[j] != find[k])
            k = fail[k - 1];
        if (find[j] == find[k])
            k++;
        fail[j] = (uint16_t)k;
    }
}

static bool replaces(const struct scrub_pattern *p)
{
    return p->repl != NULL;
}

int scrub_init(struct scrub *s, const struct scrub_pattern *p, unsigned n)
{
    size_t total = 0, longest = 1, ring = 1;
    memset(s, 0, sizeof(*s));
    if (n > SCRUB_PATTERNS_MAX)
        return -EINVAL;
    for (unsigned i = 0; i < n; i++) {
        if (!p[i].find || p[i].len == 0 || p[i].len > SCRUB_LEN_MAX)
            return -EINVAL;
        s->pat[i] = p[i];
        s->first[p[i].find[0]] |= 1ull << i;
        s->fail_at[i] = total;
        total += p[i].len;
        if (replaces(&p[i]) && p[i].len > longest)
            longest = p[i].len;
    }
    while (ring < longest) /* a power of two: slots by mask */
        ring <<= 1;
    s->mask = ring - 1;
    s->fail = malloc(total * sizeof(*s->fail) + 1);
    s->ring = malloc(ring);
    s->best = malloc(ring);
    if (!s->fail || !s->ring || !s->best) {
        scrub_free(s);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < n; i++)
        build_fail(p[i].find, p[i].len, s->fail + s->fail_at[i]);
    return 0;
}

void scrub_free(struct scrub *s)
{
    free(s->fail);
    free(s->ring);
    free(s->best);
    s->fail = NULL;
    s->ring = NULL;
    s->best = NULL;
}

/* An occurrence of pattern i that ended at the last byte taken in. */
static void noted(struct scrub *s, unsigned i)
{
    const struct scrub_pattern *p = &s->pat[i];
    uint64_t start = s->end + 1 - p->len;
    if (!replaces(p)) {
        s->hits[i]++;
        return;
    }
    /* One that overlaps a replacement already written out is moot:
     * matching went on after that replacement. */
    if (start < s->pos)
        return;
    int8_t *b = &s->best[start & s->mask];
    if (*b < 0 || p->len > s->pat[*b].len)
        *b = (int8_t)i;
}

/* Runs every matcher over byte c (at position s->end); returns the longest
 * prefix a replacing matcher is part-way through. */
static size_t take_byte(struct scrub *s, unsigned char c)
{
    size_t held = 0;
    s->ring[s->end & s->mask] = c;
    s->best[s->end & s->mask] = -1;
    /* A matcher at 0 stays there unless c is its pattern's first byte. */
    uint64_t todo = s->active | s->first[c];
    s->active = 0;
    while (todo) {
        unsigned i = (unsigned)__builtin_ctzll(todo);
        todo &= todo - 1;
        const struct scrub_pattern *p = &s->pat[i];
        const uint16_t *fail = s->fail + s->fail_at[i];
        size_t k = s->matched[i];
        while (k && p->find[k] != c)
            k = fail[k - 1];
        if (p->find[k] == c && ++k == p->len) {
            noted(s, i);
            k = fail[k - 1];
        }
        s->matched[i] = (uint32_t)k;
        if (k)
            s->active |= 1ull << i;
        if (replaces(p) && k > held)
            held = k;
    }
    s->end++;
    return held;
}

/* Writes out every position before `upto` (see the top of the file). */
static size_t decide(struct scrub *s, uint64_t upto, char *out)
{
    size_t n = 0;
    while (s->pos < upto) {
        int8_t i = s->best[s->pos & s->mask];
        if (i < 0) {
            out[n++] = (char)s->ring[s->pos++ & s->mask];
            continue;
        }
        memcpy(out + n, s->pat[i].repl, s->pat[i].len);
        n += s->pat[i].len;
        s->pos += s->pat[i].len;
        s->hits[i]++;
    }
    return n;
}

size_t scrub_feed(struct scrub *s, const char *in, size_t len, char *out, size_t cap)
{
    size_t held = (size_t)(s->end - s->pos), n = 0;
    if (cap < len || cap - len < held)
        return SCRUB_NO_ROOM;
    for (size_t j = 0; j < len;) {
        if (!s->active && s->pos == s->end) {
            /* Nothing part-way, nothing held: a run of bytes that begin no
             * pattern goes out as it came (what take_byte and decide would
             * do one byte at a time; a body of ordinary text is mostly
             * such runs). */
            size_t k = j;
            while (k < len && !s->first[(unsigned char)in[k]])
                k++;
            if (k > j) {
                memcpy(out + n, in + j, k - j);
                n += k - j;
                s->pos += k - j;
                s->end += k - j;
                j = k;
                continue;
            }
        }
        size_t pending = take_byte(s, (unsigned char)in[j++]);
        n += decide(s, s->end - pending, out + n);
    }
    return n;
}

size_t scrub_flush(struct scrub *s, char *out, size_t cap)
{
    if (cap < s->end - s->pos)
        return SCRUB_NO_ROOM;
    size_t n = decide(s, s->end, out);
    memset(s->matched, 0, sizeof(s->matched));
    s->active = 0;
    return n;
}
