/* See scrub_ref.h. */
#include "tests/unit/scrub_ref.h"

#include <string.h>

static int occurs(const struct scrub_pattern *p, const unsigned char *in, size_t len, size_t at)
{
    return p->len <= len - at && memcmp(in + at, p->find, p->len) == 0;
}

void scrub_ref(const struct scrub_pattern *p, unsigned n, const unsigned char *in, size_t len,
               unsigned char *out, uint64_t hits[])
{
    /* Counting patterns: every occurrence, overlapping ones too. */
    for (unsigned i = 0; i < n; i++)
        for (size_t at = 0; !p[i].repl && at < len; at++)
            hits[i] += (uint64_t)occurs(&p[i], in, len, at);
    /* Replacing patterns: leftmost, then longest, then the lower index. */
    size_t at = 0;
    while (at < len) {
        int best = -1;
        for (unsigned i = 0; i < n; i++)
            if (p[i].repl && occurs(&p[i], in, len, at) && (best < 0 || p[i].len > p[best].len))
                best = (int)i;
        if (best < 0) {
            out[at] = in[at];
            at++;
            continue;
        }
        memcpy(out + at, p[best].repl, p[best].len);
        at += p[best].len;
        hits[best]++;
    }
}
