/* Streaming search-and-replace of a few fixed byte patterns, for the
 * credential broker: a secret (and its base64 forms) must not reach the
 * guest in a response, and a placeholder in a request body is worth
 * knowing about.  The bytes arrive in whatever pieces the network made,
 * so a pattern may straddle any number of calls; the result never depends
 * on how the stream was split.
 *
 * Semantics, as a one-shot pass over the whole stream would have them:
 *   - replacing patterns (repl != NULL): at each position the leftmost
 *     occurrence wins, then the longest (equal lengths: the lower index);
 *     it is replaced and matching goes on after it, so replacements never
 *     overlap.  A replacement has its pattern's length (the caller
 *     guarantees it), so the output is exactly as long as the input and
 *     byte offsets (Content-Length, chunk sizes) stay true.
 *   - counting patterns (repl == NULL) pass bytes unchanged and count
 *     every occurrence in the input, overlapping ones too; they take no
 *     part in choosing replacements, so watching for a placeholder can
 *     never let a secret through unreplaced.
 *
 * Held back: only bytes that could still begin a replacement: at most the
 * longest replacing pattern's length - 1.  Nothing is held for counting
 * patterns, and a stream that shows no prefix of any pattern flows
 * through without delay (a server-sent event is not kept waiting).
 *
 * Cost: each pattern runs its own Knuth-Morris-Pratt matcher over the
 * input, so a byte costs at most O(number of patterns) amortised, whatever
 * the bytes are: no input, however chosen, makes it quadratic.  Matchers
 * that are not part-way through a match sleep until their first byte
 * comes, so on ordinary data a byte costs about one table look-up; a run
 * of bytes that begin no pattern, with nothing held, is copied whole
 * (natively, 7 patterns of 36-44 bytes: 3.0 GB/s over bytes that begin
 * none, 0.31 GB/s over random letters and digits, where most do). */
#ifndef AIRLOCK_UTIL_SCRUB_H
#define AIRLOCK_UTIL_SCRUB_H

#include <stddef.h>
#include <stdint.h>

/* Room for 8 secrets in 7 forms each (the value, and its base64 at the
 * three alignments in both alphabets); a byte costs a step per pattern. */
#define SCRUB_PATTERNS_MAX 64
#define SCRUB_LEN_MAX      8192 /* bytes in one pattern */

/* Returned by scrub_feed and scrub_flush for an output buffer too small. */
#define SCRUB_NO_ROOM ((size_t)-1)

struct scrub_pattern {
    const unsigned char *find;
    const unsigned char *repl; /* len bytes, or NULL to count only */
    size_t len;                /* 1..SCRUB_LEN_MAX */
};

struct scrub {
    /* per pattern: replacements written out so far, or for a counting
     * pattern occurrences seen so far (counted as soon as their last byte
     * is fed, since nothing waits on them) */
    uint64_t hits[SCRUB_PATTERNS_MAX];
    /* private */
    struct scrub_pattern pat[SCRUB_PATTERNS_MAX]; /* their bytes stay the caller's */
    uint32_t matched[SCRUB_PATTERNS_MAX]; /* each matcher's state: a prefix's length */
    uint64_t active;      /* bit i: matched[i] > 0 */
    uint64_t first[256];  /* by byte: bit i when pattern i begins with it */
    uint16_t *fail;       /* the matchers' failure tables, one after another */
    size_t fail_at[SCRUB_PATTERNS_MAX];
    unsigned char *ring;  /* the input from `pos` to `end`, by position & mask */
    int8_t *best;         /* per ring slot: the replacement starting there, or -1 */
    size_t mask;
    uint64_t pos, end;    /* first byte not yet written out; bytes taken in */
};

/* Checks the patterns (n <= SCRUB_PATTERNS_MAX, each len in 1..SCRUB_LEN_MAX
 * with find set) and prepares *s; keeps pointers to the caller's pattern
 * bytes, which must outlive it.  0, -EINVAL, or -ENOMEM; scrub_free is
 * safe after any result. */
int scrub_init(struct scrub *s, const struct scrub_pattern *p, unsigned n);

/* Takes in[0, len) and writes to out every byte that can no longer be
 * part of a replacement; returns how many.  out must have room for
 * len + the bytes held back (len + SCRUB_LEN_MAX is always enough);
 * with less, nothing is taken and the result is SCRUB_NO_ROOM. */
size_t scrub_feed(struct scrub *s, const char *in, size_t len, char *out, size_t cap);

/* The stream ended: writes out what was held back (at most SCRUB_LEN_MAX -
 * 1 bytes; SCRUB_NO_ROOM, nothing written, when cap is smaller than what
 * is held), after which *s starts a new stream (hits keep counting). */
size_t scrub_flush(struct scrub *s, char *out, size_t cap);

void scrub_free(struct scrub *s);

#endif
