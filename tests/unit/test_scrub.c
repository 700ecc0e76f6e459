/* vmm/util/scrub.c: replacement across every split of the stream (compared
 * with the one-shot reference in scrub_ref.c), leftmost-longest choice,
 * counting patterns, how much is held back, the output-room contract, and
 * inputs chosen to make a naive matcher quadratic. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "tests/unit/scrub_ref.h"
#include "vmm/util/scrub.h"

#define P(find, repl) {(const unsigned char *)(find), (const unsigned char *)(repl), sizeof(find) - 1}

/* The stream cut at cuts[0..ncuts) (ascending), then flushed; returns the
 * output length, hits in hits[]. */
static size_t stream(const struct scrub_pattern *p, unsigned n, const unsigned char *in,
                     size_t len, const size_t *cuts, unsigned ncuts, unsigned char *out,
                     uint64_t hits[])
{
    struct scrub s;
    ck_assert_int_eq(scrub_init(&s, p, n), 0);
    size_t from = 0, o = 0;
    for (unsigned c = 0; c <= ncuts; c++) {
        size_t to = c < ncuts ? cuts[c] : len;
        /* An exact-size heap copy: ASan sees any read past the piece. */
        char *piece = malloc(to - from + 1);
        memcpy(piece, in + from, to - from);
        size_t w = scrub_feed(&s, piece, to - from, (char *)out + o, to - from + SCRUB_LEN_MAX);
        free(piece);
        ck_assert_uint_ne(w, SCRUB_NO_ROOM);
        o += w;
        ck_assert_uint_le(o, to); /* never ahead of the input */
        from = to;
    }
    size_t w = scrub_flush(&s, (char *)out + o, SCRUB_LEN_MAX);
    ck_assert_uint_ne(w, SCRUB_NO_ROOM);
    o += w;
    memcpy(hits, s.hits, n * sizeof(hits[0]));
    scrub_free(&s);
    return o;
}

/* Streams with the given cuts and checks against the reference. */
static void check_cuts(const struct scrub_pattern *p, unsigned n, const unsigned char *in,
                       size_t len, const size_t *cuts, unsigned ncuts)
{
    unsigned char *want = malloc(len + 1), *got = malloc(len + SCRUB_LEN_MAX);
    uint64_t want_hits[SCRUB_PATTERNS_MAX] = {0}, got_hits[SCRUB_PATTERNS_MAX] = {0};
    scrub_ref(p, n, in, len, want, want_hits);
    size_t o = stream(p, n, in, len, cuts, ncuts, got, got_hits);
    ck_assert_uint_eq(o, len);
    ck_assert_msg(memcmp(got, want, len) == 0, "output differs for \"%.*s\" (%u cuts, first %zu)",
                  (int)len, (const char *)in, ncuts, ncuts ? cuts[0] : 0);
    for (unsigned i = 0; i < n; i++)
        ck_assert_uint_eq(got_hits[i], want_hits[i]);
    free(want);
    free(got);
}

/* Every split into two and three pieces, and one byte at a time. */
static void check_all_splits(const struct scrub_pattern *p, unsigned n, const unsigned char *in,
                             size_t len)
{
    size_t cuts[64];
    check_cuts(p, n, in, len, NULL, 0);
    for (size_t a = 0; a <= len; a++) {
        cuts[0] = a;
        check_cuts(p, n, in, len, cuts, 1);
        for (size_t b = a; b <= len && len <= 24; b++) {
            cuts[1] = b;
            check_cuts(p, n, in, len, cuts, 2);
        }
    }
    if (len <= 64) {
        for (size_t i = 0; i < len; i++)
            cuts[i] = i;
        check_cuts(p, n, in, len, cuts, (unsigned)len);
    }
}

static void one_shot(const struct scrub_pattern *p, unsigned n, const char *in, const char *want,
                     const uint64_t *want_hits)
{
    size_t len = strlen(in);
    unsigned char out[256];
    uint64_t hits[SCRUB_PATTERNS_MAX] = {0};
    ck_assert_uint_eq(stream(p, n, (const unsigned char *)in, len, NULL, 0, out, hits), len);
    ck_assert_msg(memcmp(out, want, len) == 0, "\"%s\" gave \"%.*s\", want \"%s\"", in, (int)len,
                  (const char *)out, want);
    for (unsigned i = 0; i < n; i++)
        ck_assert_uint_eq(hits[i], want_hits[i]);
    check_all_splits(p, n, (const unsigned char *)in, len);
}

START_TEST(replaces_a_secret)
{
    const struct scrub_pattern p[] = {P("sk-SECRET", "sk-XXXXXX")};
    one_shot(p, 1, "key=sk-SECRET;again sk-SECRETsk-SECRET sk-SECRE",
             "key=sk-XXXXXX;again sk-XXXXXXsk-XXXXXX sk-SECRE", (uint64_t[]){3});
}
END_TEST

START_TEST(leftmost_then_longest)
{
    /* At one start the longest wins; an earlier start beats a longer one;
     * equal patterns: the lower index. */
    const struct scrub_pattern p[] = {P("ab", "12"), P("abcd", "WXYZ"), P("bcdef", "vwxyz"),
                                      P("ab", "34")};
    one_shot(p, 4, "abcdef", "WXYZef", (uint64_t[]){0, 1, 0, 0});
    one_shot(p, 4, "abcxbcdef", "12cxvwxyz", (uint64_t[]){1, 0, 1, 0});
    one_shot(p, 4, "ababc", "1212c", (uint64_t[]){2, 0, 0, 0});
    /* A shorter match waits for a longer one that might still come, and
     * is taken when the longer one fails or the stream ends. */
    one_shot(p, 4, "abc", "12c", (uint64_t[]){1, 0, 0, 0});
    one_shot(p, 4, "abcX", "12cX", (uint64_t[]){1, 0, 0, 0});
}
END_TEST

START_TEST(matching_goes_on_after_a_replacement)
{
    const struct scrub_pattern p[] = {P("aba", "XYZ")};
    one_shot(p, 1, "ababa", "XYZba", (uint64_t[]){1});
    one_shot(p, 1, "abababa", "XYZbXYZ", (uint64_t[]){2});
    const struct scrub_pattern q[] = {P("aa", "XY")};
    one_shot(q, 1, "aaaaa", "XYXYa", (uint64_t[]){2});
}
END_TEST

START_TEST(counting_patterns)
{
    /* Counted wherever they occur, overlapping too, bytes unchanged; they
     * never keep a replacement from happening. */
    const struct scrub_pattern p[] = {P("PLACEHOLDER", NULL), P("aa", NULL)};
    one_shot(p, 2, "x PLACEHOLDER aaaa PLACEHOLDE", "x PLACEHOLDER aaaa PLACEHOLDE",
             (uint64_t[]){1, 3});
    const struct scrub_pattern q[] = {P("xS", NULL), P("SECRET", "******")};
    one_shot(q, 2, "axSECRETb", "ax******b", (uint64_t[]){1, 1});
}
END_TEST

START_TEST(holds_back_only_what_could_match)
{
    const struct scrub_pattern p[] = {P("secret", "XXXXXX"), P("tok", NULL)};
    struct scrub s;
    char out[64 + SCRUB_LEN_MAX];
    ck_assert_int_eq(scrub_init(&s, p, 2), 0);
    /* No prefix of a replacing pattern at the end: all of it goes out. */
    ck_assert_uint_eq(scrub_feed(&s, "data: {}\n\n", 10, out, sizeof(out)), 10);
    /* "tok" is only counted: nothing held for it. */
    ck_assert_uint_eq(scrub_feed(&s, "to", 2, out, sizeof(out)), 2);
    /* "se" could begin the secret: held. */
    ck_assert_uint_eq(scrub_feed(&s, "k sec", 5, out, sizeof(out)), 2);
    ck_assert_uint_eq(s.hits[1], 1);
    ck_assert_uint_eq(scrub_feed(&s, "re", 2, out, sizeof(out)), 0);
    ck_assert_uint_eq(scrub_feed(&s, "x", 1, out, sizeof(out)), 6);
    ck_assert(memcmp(out, "secrex", 6) == 0);
    ck_assert_uint_eq(scrub_feed(&s, "secre", 5, out, sizeof(out)), 0);
    ck_assert_uint_eq(scrub_flush(&s, out, sizeof(out)), 5); /* the end: held bytes go */
    ck_assert(memcmp(out, "secre", 5) == 0);
    /* A flush ends the stream: no match spans it. */
    ck_assert_uint_eq(scrub_feed(&s, "t", 1, out, sizeof(out)), 1);
    ck_assert_uint_eq(s.hits[0], 0);
    ck_assert_uint_eq(scrub_flush(&s, out, sizeof(out)), 0);
    scrub_free(&s);
}
END_TEST

START_TEST(output_room)
{
    const struct scrub_pattern p[] = {P("abcdef", "ABCDEF")};
    struct scrub s;
    char out[32];
    ck_assert_int_eq(scrub_init(&s, p, 1), 0);
    ck_assert_uint_eq(scrub_feed(&s, "xxabcd", 6, out, 6), 2); /* 4 held */
    /* 2 more bytes may release 4 + 2: room for 5 is refused, nothing taken. */
    ck_assert_uint_eq(scrub_feed(&s, "ef", 2, out, 5), SCRUB_NO_ROOM);
    ck_assert_uint_eq(scrub_feed(&s, "ef", 2, out, 1), SCRUB_NO_ROOM);
    ck_assert_uint_eq(scrub_flush(&s, out, 3), SCRUB_NO_ROOM);
    ck_assert_uint_eq(scrub_feed(&s, "ef", 2, out, 6), 6);
    ck_assert(memcmp(out, "ABCDEF", 6) == 0);
    ck_assert_uint_eq(s.hits[0], 1);
    scrub_free(&s);
    scrub_free(&s); /* twice is safe */
}
END_TEST

START_TEST(bad_patterns)
{
    static unsigned char big[SCRUB_LEN_MAX + 1];
    struct scrub s;
    struct scrub_pattern p = {big, big, 0};
    ck_assert_int_eq(scrub_init(&s, &p, 1), -EINVAL); /* empty */
    scrub_free(&s);
    p.len = SCRUB_LEN_MAX + 1;
    ck_assert_int_eq(scrub_init(&s, &p, 1), -EINVAL);
    p = (struct scrub_pattern){NULL, big, 4};
    ck_assert_int_eq(scrub_init(&s, &p, 1), -EINVAL);
    struct scrub_pattern many[SCRUB_PATTERNS_MAX + 1];
    for (unsigned i = 0; i <= SCRUB_PATTERNS_MAX; i++)
        many[i] = (struct scrub_pattern){big, big, 1};
    ck_assert_int_eq(scrub_init(&s, many, SCRUB_PATTERNS_MAX + 1), -EINVAL);
    ck_assert_int_eq(scrub_init(&s, many, SCRUB_PATTERNS_MAX), 0);
    scrub_free(&s);
    /* No patterns: a copy. */
    char out[8 + SCRUB_LEN_MAX];
    ck_assert_int_eq(scrub_init(&s, NULL, 0), 0);
    ck_assert_uint_eq(scrub_feed(&s, "abc", 3, out, sizeof(out)), 3);
    ck_assert_uint_eq(scrub_flush(&s, out, 0), 0);
    scrub_free(&s);
}
END_TEST

/* Every string over {a, b} up to 10 bytes, every split into two pieces
 * and one byte at a time, against patterns that overlap each other and
 * themselves. */
START_TEST(every_small_input_every_split)
{
    const struct scrub_pattern p[] = {P("ab", "XY"), P("aba", "123"), P("bb", "##"),
                                      P("abab", NULL), P("b", NULL), P("aaab", "4567")};
    unsigned char in[10];
    size_t cuts[10];
    for (size_t len = 0; len <= 10; len++) {
        for (unsigned bits = 0; bits < (1u << len); bits++) {
            for (size_t i = 0; i < len; i++)
                in[i] = bits >> i & 1 ? 'b' : 'a';
            check_cuts(p, 6, in, len, NULL, 0);
            for (size_t a = 0; a <= len; a++) {
                cuts[0] = a;
                check_cuts(p, 6, in, len, cuts, 1);
            }
            for (size_t i = 0; i < len; i++)
                cuts[i] = i;
            check_cuts(p, 6, in, len, cuts, (unsigned)len);
        }
    }
}
END_TEST

static uint32_t rng_state = 12345;
static uint32_t rng(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

/* Random pattern sets over a 3-letter alphabet, random inputs, every
 * split into two and three pieces. */
START_TEST(random_patterns_every_split)
{
    for (int round = 0; round < 60; round++) {
        unsigned n = 1 + rng() % 5;
        unsigned char finds[5][8], repls[5][8], in[24];
        struct scrub_pattern p[5];
        for (unsigned i = 0; i < n; i++) {
            size_t len = 1 + rng() % 6;
            for (size_t j = 0; j < len; j++) {
                finds[i][j] = (unsigned char)('a' + rng() % 3);
                repls[i][j] = (unsigned char)('A' + i);
            }
            p[i] = (struct scrub_pattern){finds[i], rng() % 4 ? repls[i] : NULL, len};
        }
        size_t len = rng() % sizeof(in);
        for (size_t j = 0; j < len; j++)
            in[j] = (unsigned char)('a' + rng() % 3);
        check_all_splits(p, n, in, len);
    }
}
END_TEST

/* Every pattern slot in use (the last ones too), against the reference. */
START_TEST(all_pattern_slots)
{
    static unsigned char finds[SCRUB_PATTERNS_MAX][4], repls[SCRUB_PATTERNS_MAX][4];
    struct scrub_pattern p[SCRUB_PATTERNS_MAX];
    unsigned char in[60];
    for (unsigned i = 0; i < SCRUB_PATTERNS_MAX; i++) {
        size_t len = 2 + rng() % 3;
        for (size_t j = 0; j < len; j++) {
            finds[i][j] = (unsigned char)('a' + rng() % 4);
            repls[i][j] = (unsigned char)('0' + i % 10);
        }
        p[i] = (struct scrub_pattern){finds[i], i % 3 ? repls[i] : NULL, len};
    }
    for (int round = 0; round < 4; round++) {
        for (size_t j = 0; j < sizeof(in); j++)
            in[j] = (unsigned char)('a' + rng() % 4);
        check_all_splits(p, SCRUB_PATTERNS_MAX, in, sizeof(in));
    }
}
END_TEST

/* A secret and its base64 forms, as the broker would scrub them, in a
 * response split at every point. */
START_TEST(secret_and_base64_forms)
{
    const struct scrub_pattern p[] = {
        P("sk-live-4f9a8b7c6d5e", "sk-live-ZZZZZZZZZZZZ"),
        P("c2stbGl2ZS00ZjlhOGI3YzZkNWU", "c2stbGl2ZS1aWlpaWlpaWlpaWlo"),
        P("PLACEHOLDER-7", NULL),
    };
    static const char in[] =
        "HTTP echo: {\"auth\":\"Bearer sk-live-4f9a8b7c6d5e\",\"b64\":\"c2stbGl2ZS00ZjlhOGI3YzZkNWU=\","
        "\"partial\":\"sk-live-4f9a8b7c6d5\",\"ph\":\"PLACEHOLDER-7\"}";
    size_t len = sizeof(in) - 1;
    unsigned char out[sizeof(in)];
    uint64_t hits[3] = {0};
    ck_assert_uint_eq(stream(p, 3, (const unsigned char *)in, len, NULL, 0, out, hits), len);
    ck_assert(!memmem(out, len, "4f9a8b7c6d5e", 12));
    ck_assert(memmem(out, len, "sk-live-4f9a8b7c6d5\"", 20)); /* one byte short: not the secret */
    ck_assert_uint_eq(hits[0], 1);
    ck_assert_uint_eq(hits[1], 1);
    ck_assert_uint_eq(hits[2], 1);
    check_all_splits(p, 3, (const unsigned char *)in, len);
}
END_TEST

/* Inputs a naive matcher pays pattern-length work for at each byte: a
 * long run of the pattern's first byte, and a near-periodic pattern.  Here
 * they cost a pass of the matchers (the test's time bound would catch a
 * quadratic one: 1 MiB x 8 KiB). */
START_TEST(long_patterns_adversarial_input)
{
    static unsigned char find1[SCRUB_LEN_MAX], repl1[SCRUB_LEN_MAX], find2[SCRUB_LEN_MAX];
    memset(find1, 'a', sizeof(find1));
    find1[sizeof(find1) - 1] = 'b';
    memset(repl1, 'R', sizeof(repl1));
    for (size_t i = 0; i < sizeof(find2); i++)
        find2[i] = i % 4 == 3 ? 'b' : 'a';
    find2[sizeof(find2) - 1] = 'c';
    const struct scrub_pattern p[] = {{find1, repl1, sizeof(find1)}, {find2, NULL, sizeof(find2)}};
    size_t len = 1 << 20;
    unsigned char *in = malloc(len), *out = malloc(len + SCRUB_LEN_MAX);
    memset(in, 'a', len);
    in[len / 2] = 'b'; /* one occurrence of find1 ends here */
    struct scrub s;
    ck_assert_int_eq(scrub_init(&s, p, 2), 0);
    size_t o = 0;
    for (size_t at = 0; at < len; at += 4096) {
        size_t w = scrub_feed(&s, (const char *)in + at, 4096, (char *)out + o, 4096 + SCRUB_LEN_MAX);
        ck_assert_uint_ne(w, SCRUB_NO_ROOM);
        o += w;
        ck_assert_uint_ge(o + SCRUB_LEN_MAX - 1, at + 4096); /* held: under the longest */
    }
    o += scrub_flush(&s, (char *)out + o, SCRUB_LEN_MAX);
    ck_assert_uint_eq(o, len);
    ck_assert_uint_eq(s.hits[0], 1);
    ck_assert_uint_eq(s.hits[1], 0);
    size_t start = len / 2 + 1 - SCRUB_LEN_MAX;
    ck_assert(memcmp(out + start, repl1, SCRUB_LEN_MAX) == 0);
    ck_assert(out[start - 1] == 'a' && out[len / 2 + 1] == 'a');
    scrub_free(&s);
    free(in);
    free(out);
}
END_TEST

Suite *scrub_suite(void)
{
    Suite *s = suite_create("scrub");
    TCase *tc = tcase_create("scrub");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, replaces_a_secret);
    tcase_add_test(tc, leftmost_then_longest);
    tcase_add_test(tc, matching_goes_on_after_a_replacement);
    tcase_add_test(tc, counting_patterns);
    tcase_add_test(tc, holds_back_only_what_could_match);
    tcase_add_test(tc, output_room);
    tcase_add_test(tc, bad_patterns);
    tcase_add_test(tc, every_small_input_every_split);
    tcase_add_test(tc, random_patterns_every_split);
    tcase_add_test(tc, all_pattern_slots);
    tcase_add_test(tc, secret_and_base64_forms);
    tcase_add_test(tc, long_patterns_adversarial_input);
    suite_add_tcase(s, tc);
    return s;
}
