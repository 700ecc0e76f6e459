/* guest/smp_unlock/: the kernel's one-CPU lock patch made in the file, on
 * an ELF the real assembler and linker made (smp_locks_fixture.S), and on
 * that file damaged: truncated, renamed symbols, entries pointing away. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/smp_unlock/smp_unlock.h"
#include "tests/unit/helpers.h"

#ifndef SMP_LOCKS_FIXTURE
#error "unit.mk passes the fixture's path"
#endif

static uint8_t *load(size_t *size)
{
    FILE *f = fopen(SMP_LOCKS_FIXTURE, "rb");
    ck_assert_msg(f, "cannot open %s", SMP_LOCKS_FIXTURE);
    static uint8_t tmp[1 << 16];
    *size = fread(tmp, 1, sizeof(tmp), f);
    fclose(f);
    ck_assert(*size > 0 && *size < sizeof(tmp));
    uint8_t *buf = malloc(*size);
    memcpy(buf, tmp, *size);
    return buf;
}

/* Offsets where a and b differ, at most cap of them; returns the count. */
static size_t diff(const uint8_t *a, const uint8_t *b, size_t size, size_t *at, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < size; i++)
        if (a[i] != b[i] && n++ < cap)
            at[n - 1] = i;
    return n;
}

START_TEST(patches_what_the_kernel_would)
{
    size_t size, at[4];
    uint8_t *buf = load(&size), *orig = malloc(size);
    memcpy(orig, buf, size);
    struct smp_unlock_stats st;
    char err[256] = "";
    ck_assert_int_eq(smp_unlock(buf, size, &st, err, sizeof(err)), 0);
    ck_assert_uint_eq(st.entries, 5);
    ck_assert_uint_eq(st.patched, 2);
    ck_assert_uint_eq(st.pages, 2);
    ck_assert_uint_eq(st.outside, 2);  /* the init-text lock and the 0 slot */
    ck_assert_uint_eq(st.not_lock, 1); /* the nop */
    /* Exactly two bytes changed, each a lock prefix become a DS prefix;
     * the init-text lock prefix (outside _text.._etext) stays. */
    ck_assert_uint_eq(diff(orig, buf, size, at, 4), 2);
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(orig[at[i]], 0xf0);
        ck_assert_uint_eq(buf[at[i]], 0x3e);
    }
    ck_assert_uint_eq(at[1] - at[0], 4096 + 3); /* lock incl (%rax) is 3 bytes */
    /* Again: nothing left to do, as the kernel finds at boot. */
    memcpy(orig, buf, size);
    ck_assert_int_eq(smp_unlock(buf, size, &st, err, sizeof(err)), 0);
    ck_assert_uint_eq(st.patched, 0);
    ck_assert_uint_eq(st.not_lock, 3);
    ck_assert_uint_eq(diff(orig, buf, size, at, 4), 0);
    free(orig);
    free(buf);
}
END_TEST

/* Every truncation either fails with a reason and leaves the bytes alone
 * or (when all the tool reads is still there) patches as before; under
 * ASan, none reads past the end. */
START_TEST(truncated)
{
    size_t size;
    uint8_t *full = load(&size);
    for (size_t n = 0; n < size; n += n < 128 ? 1 : 7) {
        uint8_t *buf = malloc(n ? n : 1);
        memcpy(buf, full, n);
        struct smp_unlock_stats st;
        char err[256] = "";
        if (smp_unlock(buf, n, &st, err, sizeof(err))) {
            ck_assert_msg(err[0], "no reason at %zu bytes", n);
            ck_assert_msg(!memcmp(buf, full, n), "changed bytes at %zu and failed", n);
        } else {
            ck_assert_uint_eq(st.patched, 2);
        }
        free(buf);
    }
    free(full);
}
END_TEST

static void rename_symbol(uint8_t *buf, size_t size, const char *name)
{
    size_t len = strlen(name) + 1;
    for (size_t i = 0; i + len <= size; i++)
        if (buf[i ? i - 1 : 0] == 0 && !memcmp(buf + i, name, len)) {
            buf[i] = 'X';
            return;
        }
    ck_abort_msg("no string %s in the fixture", name);
}

START_TEST(missing_symbols)
{
    static const char *const names[] = {"_text", "_etext", "__smp_locks", "__smp_locks_end"};
    for (unsigned k = 0; k < 4; k++) {
        size_t size;
        uint8_t *buf = load(&size);
        rename_symbol(buf, size, names[k]);
        struct smp_unlock_stats st;
        char err[256] = "", want[64];
        ck_assert_int_eq(smp_unlock(buf, size, &st, err, sizeof(err)), -1);
        snprintf(want, sizeof(want), "no symbol %s ", names[k]);
        ck_assert_msg(strstr(err, want), "error \"%s\" lacks \"%s\"", err, want);
        free(buf);
    }
}
END_TEST

START_TEST(not_elf)
{
    uint8_t junk[256];
    memset(junk, 0x41, sizeof(junk));
    struct smp_unlock_stats st;
    char err[256] = "";
    ck_assert_int_eq(smp_unlock(junk, sizeof(junk), &st, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "not an ELF file");
    size_t size;
    uint8_t *buf = load(&size);
    buf[EI_CLASS] = ELFCLASS32;
    ck_assert_int_eq(smp_unlock(buf, size, &st, err, sizeof(err)), -1);
    free(buf);
}
END_TEST

/* Entries that point anywhere at all (the most negative and positive
 * offsets, just before _text, at _etext) are outside the text: counted,
 * never followed. */
START_TEST(entries_pointing_away)
{
    size_t size;
    uint8_t *buf = load(&size), *orig = malloc(size);
    struct smp_unlock_stats st;
    char err[256] = "";
    memcpy(orig, buf, size);
    ck_assert_int_eq(smp_unlock(orig, size, &st, err, sizeof(err)), 0);
    size_t at[4];
    ck_assert_uint_eq(diff(orig, buf, size, at, 4), 2);
    size_t lock1 = at[0]; /* file offset of the lock prefix at _text */
    memcpy(orig, buf, size);
    /* Its entry: the linker keeps .text and .smp_locks the same distance
     * apart in the file as in memory, so the entry is the int32 whose file
     * offset plus its value is lock1. */
    int found = 0;
    for (size_t off = 0; off + 20 <= size; off += 4) {
        int32_t v;
        memcpy(&v, buf + off, 4);
        if ((int64_t)off + v == (int64_t)lock1) {
            /* The extremes, its own slot less one, the byte before _text. */
            const int32_t away[] = {INT32_MIN, INT32_MAX, -1,
                                    (int32_t)((int64_t)lock1 - 1 - (int64_t)off)};
            for (size_t i = 0; i < 4; i++) {
                int32_t w = away[i];
                memcpy(buf + off, &w, 4);
                ck_assert_int_eq(smp_unlock(buf, size, &st, err, sizeof(err)), 0);
                ck_assert_uint_eq(st.patched, 1);
                ck_assert_uint_eq(st.outside, 3);
                ck_assert_uint_eq(buf[lock1], 0xf0);
                memcpy(buf, orig, size);
            }
            found = 1;
            break;
        }
    }
    ck_assert(found);
    free(orig);
    free(buf);
}
END_TEST

Suite *smp_unlock_suite(void)
{
    Suite *s = suite_create("smp_unlock");
    TCase *tc = tcase_create("smp_unlock");
    tcase_add_test(tc, patches_what_the_kernel_would);
    tcase_add_test(tc, truncated);
    tcase_add_test(tc, missing_symbols);
    tcase_add_test(tc, not_elf);
    tcase_add_test(tc, entries_pointing_away);
    suite_add_tcase(s, tc);
    return s;
}
