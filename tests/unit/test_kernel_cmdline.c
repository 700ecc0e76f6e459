/* boot/kernel_cmdline.c and vdevs_cmdline: airlock's parameters go where
 * the guest kernel parses them, before init's "--" arguments, whatever
 * the user's line holds (quotes, a "--" inside them or at the end, none,
 * a line too long).  Each result is also checked the way the kernel
 * reads it: kparse() below splits a line as Linux's parse_args() and
 * next_arg() do (kernel/params.c), written from their documented rules,
 * and the user's own parameters and init's arguments must come out
 * exactly as from the user's line alone. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/memory/layout.h"
#include "tests/unit/helpers.h"
#include "boot/kernel_cmdline.h"
#include "vmm/kvm/virtio_devices.h"

#define MAXP 64

struct kparsed {
    char copy[4096];
    const char *param[MAXP], *val[MAXP];
    unsigned n;
    const char *init_args; /* after "--", or NULL */
};

static int kspace(int c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

/* next_arg(): cuts one token out of *s (NUL-terminating its parts). */
static void next_arg(char **s, const char **param, const char **val)
{
    char *a = *s;
    size_t i, equals = 0;
    int in_quote = 0, quoted = 0;
    if (*a == '"') {
        a++;
        in_quote = quoted = 1;
    }
    for (i = 0; a[i]; i++) {
        if (kspace((unsigned char)a[i]) && !in_quote)
            break;
        if (equals == 0 && a[i] == '=')
            equals = i;
        if (a[i] == '"')
            in_quote = !in_quote;
    }
    *param = a;
    *val = NULL;
    if (equals) {
        a[equals] = 0;
        *val = a + equals + 1;
        if (**val == '"') {
            (*val)++;
            if (a[i - 1] == '"')
                a[i - 1] = 0;
        }
    }
    if (quoted && i > 0 && a[i - 1] == '"')
        a[i - 1] = 0;
    if (a[i]) {
        a[i] = 0;
        a += i + 1;
    } else {
        a += i;
    }
    while (*a && kspace((unsigned char)*a))
        a++;
    *s = a;
}

static void kparse(const char *line, struct kparsed *k)
{
    ck_assert_uint_lt(strlen(line), sizeof(k->copy));
    strcpy(k->copy, line);
    k->n = 0;
    k->init_args = NULL;
    char *s = k->copy;
    while (*s && kspace((unsigned char)*s))
        s++;
    while (*s) {
        const char *p, *v;
        next_arg(&s, &p, &v);
        if (!v && !strcmp(p, "--")) {
            k->init_args = s;
            return;
        }
        ck_assert_uint_lt(k->n, MAXP);
        k->param[k->n] = p;
        k->val[k->n++] = v;
    }
}

static const char ann1[] = "virtio_mmio.device=512@0xd0000000:5";

/* out, read by the kernel, is user's line plus exactly the `nann`
 * parameters named by `names` (value `vals`), init's part untouched. */
static void check_kernel_view(const char *user, const char *out, unsigned nann)
{
    static struct kparsed ku, ko;
    kparse(user, &ku);
    kparse(out, &ko);
    ck_assert_uint_eq(ko.n, ku.n + nann);
    unsigned j = 0, seen = 0;
    for (unsigned i = 0; i < ko.n; i++) {
        if (!strcmp(ko.param[i], "virtio_mmio.device") && seen < nann &&
            (j >= ku.n || strcmp(ku.param[j], "virtio_mmio.device"))) {
            ck_assert_ptr_nonnull(ko.val[i]);
            seen++;
            continue;
        }
        ck_assert_uint_lt(j, ku.n);
        ck_assert_str_eq(ko.param[i], ku.param[j]);
        ck_assert((ko.val[i] == NULL) == (ku.val[j] == NULL));
        if (ku.val[j])
            ck_assert_str_eq(ko.val[i], ku.val[j]);
        j++;
    }
    ck_assert_uint_eq(seen, nann);
    ck_assert((ko.init_args == NULL) == (ku.init_args == NULL));
    if (ku.init_args)
        ck_assert_str_eq(ko.init_args, ku.init_args);
}

static const char *insert(const char *user)
{
    static char out[4096];
    ck_assert_int_eq(kcmdline_insert(out, sizeof(out), user, ann1), 0);
    check_kernel_view(user, out, 1);
    return out;
}

START_TEST(no_dashes_appends)
{
    ck_assert_str_eq(insert("console=ttyS0 root=/dev/vda"),
                     "console=ttyS0 root=/dev/vda virtio_mmio.device=512@0xd0000000:5");
    ck_assert_str_eq(insert(""), ann1);
    ck_assert_str_eq(insert("a---"), "a--- virtio_mmio.device=512@0xd0000000:5");
    /* "--" with a value, or as part of a word, is an ordinary parameter */
    ck_assert_str_eq(insert("--=x ---"), "--=x --- virtio_mmio.device=512@0xd0000000:5");
    ck_assert_str_eq(insert("x--"), "x-- virtio_mmio.device=512@0xd0000000:5");
}
END_TEST

START_TEST(dashes_insert_before)
{
    ck_assert_str_eq(insert("root=/dev/vda init=/bin/sh -- -c \"echo hi; poweroff -f\""),
                     "root=/dev/vda init=/bin/sh virtio_mmio.device=512@0xd0000000:5 "
                     "-- -c \"echo hi; poweroff -f\"");
    /* the first "--" only; the second is init's */
    ck_assert_str_eq(insert("a -- b -- c"), "a virtio_mmio.device=512@0xd0000000:5 -- b -- c");
    /* at the very end, at the very start, after tabs */
    ck_assert_str_eq(insert("init=/bin/sh --"),
                     "init=/bin/sh virtio_mmio.device=512@0xd0000000:5 --");
    ck_assert_str_eq(insert("-- x"), "virtio_mmio.device=512@0xd0000000:5 -- x");
    ck_assert_str_eq(insert("  \t--"), "  \tvirtio_mmio.device=512@0xd0000000:5 --");
    ck_assert_str_eq(insert("a\t--\tb"), "a\tvirtio_mmio.device=512@0xd0000000:5 --\tb");
    /* a quoted "--" is one too: next_arg() drops the quotes */
    ck_assert_str_eq(insert("a \"--\" b"), "a virtio_mmio.device=512@0xd0000000:5 \"--\" b");
    /* the kernel's isspace() counts 0xa0 */
    ck_assert_str_eq(insert("a\xa0-- b"), "a\xa0virtio_mmio.device=512@0xd0000000:5 -- b");
}
END_TEST

START_TEST(dashes_inside_quotes)
{
    /* inside a quoted value: not a separator */
    ck_assert_str_eq(insert("x=\"a -- b\" y"), "x=\"a -- b\" y virtio_mmio.device=512@0xd0000000:5");
    ck_assert_str_eq(insert("\"a -- b\""), "\"a -- b\" virtio_mmio.device=512@0xd0000000:5");
    /* a quote in mid-word opens too; "--" after it closes is real */
    ck_assert_str_eq(insert("a\"b -- c\"d -- e"),
                     "a\"b -- c\"d virtio_mmio.device=512@0xd0000000:5 -- e");
    /* a quote that never closes swallows the rest of the line: ours go
     * in front of that token, not into it */
    ck_assert_str_eq(insert("root=/dev/vda x=\"open -- y"),
                     "root=/dev/vda virtio_mmio.device=512@0xd0000000:5 x=\"open -- y");
    ck_assert_str_eq(insert("a --\" b"), "a virtio_mmio.device=512@0xd0000000:5 --\" b");
    ck_assert_str_eq(insert("\"--"), "virtio_mmio.device=512@0xd0000000:5 \"--");
}
END_TEST

START_TEST(length_limit)
{
    char out[64];
    /* exactly fitting, and one byte short */
    const char *user = "0123456789";
    size_t need = strlen(user) + 1 + strlen(ann1) + 1;
    ck_assert_uint_lt(need, sizeof(out));
    ck_assert_int_eq(kcmdline_insert(out, need, user, ann1), 0);
    ck_assert_uint_eq(strlen(out), need - 1);
    memset(out, 'X', sizeof(out));
    ck_assert_int_eq(kcmdline_insert(out, need - 1, user, ann1), -E2BIG);
    ck_assert_str_eq(out, ""); /* never a half line */
    ck_assert_int_eq(kcmdline_insert(out, need - 1, "0123 -- 56", ann1), -E2BIG);
    ck_assert_int_eq(kcmdline_insert(out, 0, "", ""), -E2BIG);
    /* a line longer than the kernel takes is refused by size, whatever
     * its content */
    char *big = malloc(LAYOUT_CMDLINE_MAX * 2);
    ck_assert_ptr_nonnull(big);
    memset(big, '-', LAYOUT_CMDLINE_MAX * 2 - 1);
    big[LAYOUT_CMDLINE_MAX * 2 - 1] = 0;
    char *o = malloc(LAYOUT_CMDLINE_MAX);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(kcmdline_insert(o, LAYOUT_CMDLINE_MAX, big, ann1), -E2BIG);
    free(big);
    free(o);
}
END_TEST

/* user with n slots announced, and back. */
static void undo(const char *user, unsigned n)
{
    char full[1024], back[1024];
    ck_assert_int_eq(vdevs_cmdline(full, sizeof(full), user, n), 0);
    ck_assert_int_eq(vdevs_cmdline_undo(back, sizeof(back), full, n), 0);
    ck_assert_msg(!strcmp(back, user), "\"%s\" with %u slots came back as \"%s\"", user, n, back);
}

/* vdevs_cmdline: one announcement per slot, all before the "--". */
START_TEST(vdevs_announce_before_dashes)
{
    char out[1024];
    const char *user = "root=/dev/vda init=/bin/sh -- -c 'echo x'";
    ck_assert_int_eq(vdevs_cmdline(out, sizeof(out), user, 3), 0);
    check_kernel_view(user, out, 3);
    ck_assert_ptr_nonnull(strstr(out, ":7 -- -c 'echo x'")); /* the third slot's, last */
    ck_assert_int_eq(vdevs_cmdline(out, sizeof(out), "a b", 0), 0);
    ck_assert_str_eq(out, "a b");
    ck_assert_int_eq(vdevs_cmdline(out, sizeof(out), "a", LAYOUT_VIRTIO_SLOTS + 1), -E2BIG);
    ck_assert_int_eq(vdevs_cmdline(out, 20, "a -- b", 1), -E2BIG);
}
END_TEST

/* Random lines of the characters that matter: the kernel's reading of
 * the result is always the user's plus ours. */
START_TEST(random_lines_keep_the_kernel_view)
{
    static const char alpha[] = {'a', '-', '-', '=', '"', ' ', ' ', '\t'};
    unsigned seed = 12345;
    char user[48];
    for (int t = 0; t < 20000; t++) {
        size_t len = (seed = seed * 1103515245u + 12345u) >> 16 & 31;
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            user[i] = alpha[(seed >> 16) % sizeof(alpha)];
        }
        user[len] = 0;
        insert(user);
        undo(user, 1 + (unsigned)t % LAYOUT_VIRTIO_SLOTS);
    }
}
END_TEST

/* vdevs_cmdline_undo and kcmdline_remove: the user's line back, and a
 * line without the announcements refused. */
START_TEST(undo_gives_the_users_line)
{
    static const char *const lines[] = {
        "", "a", "root=/dev/vda rw init=/sbin/airlock-agent", "a -- b", "-- x", "a \"-- b",
        "x  ", "init=/bin/sh -- -c 'echo x'",
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        for (unsigned n = 0; n <= LAYOUT_VIRTIO_SLOTS; n++)
            undo(lines[i], n);
    char out[256];
    ck_assert_int_eq(vdevs_cmdline_undo(out, sizeof(out), "root=/dev/vda rw", 2), -ENOENT);
    ck_assert_int_eq(kcmdline_remove(out, sizeof(out), "a bc", "b"), -ENOENT); /* no space after */
    ck_assert_int_eq(kcmdline_remove(out, sizeof(out), "a xb c", "b"), -ENOENT);
    ck_assert_int_eq(kcmdline_remove(out, sizeof(out), "a b c", ""), -ENOENT);
    ck_assert_int_eq(kcmdline_remove(out, sizeof(out), "b a b", "b"), 0);
    ck_assert_str_eq(out, "b a"); /* the appended one, at the end */
    ck_assert_int_eq(kcmdline_remove(out, sizeof(out), "x b -- b y", "b"), 0);
    ck_assert_str_eq(out, "x -- b y");
    ck_assert_int_eq(kcmdline_remove(out, 3, "abc d", "d"), -E2BIG);
}
END_TEST

Suite *kernel_cmdline_suite(void)
{
    Suite *s = suite_create("kernel_cmdline");
    TCase *tc = tcase_create("insert");
    tcase_add_test(tc, no_dashes_appends);
    tcase_add_test(tc, dashes_insert_before);
    tcase_add_test(tc, dashes_inside_quotes);
    tcase_add_test(tc, length_limit);
    tcase_add_test(tc, vdevs_announce_before_dashes);
    tcase_add_test(tc, random_lines_keep_the_kernel_view);
    tcase_add_test(tc, undo_gives_the_users_line);
    tcase_set_timeout(tc, 30); /* 20,000 lines under ASan: seconds on a busy host */
    suite_add_tcase(s, tc);
    return s;
}
