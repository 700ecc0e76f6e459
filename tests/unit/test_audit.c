/* vmm/audit/audit.c: the JSON-lines audit log.  Records are written to a temp
 * file and parsed back with a strict hand-written JSON reader (and, when
 * python3 is present, json.loads too): fields and order, the time format,
 * the run id, escaping of every byte a guest could send, records cut at
 * AUDIT_RECORD_MAX, the no-log mode and concurrent writers. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/audit/audit.h"

static char path[64];
static struct audit au;
static struct audit_rec rec;

static void setup(void)
{
    snprintf(path, sizeof(path), "/tmp/airlock-audit-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(audit_open(&au, path), 0);
}

static void teardown(void)
{
    audit_close(&au);
    unlink(path);
}

/* ---- a strict JSON reader ---------------------------------------------- */

#define MAX_FIELDS 64

/* One line's top-level object: keys in order and each value's raw text. */
struct line {
    int n;
    char key[MAX_FIELDS][32];
    const char *val[MAX_FIELDS];
    size_t vlen[MAX_FIELDS];
};

static bool j_value(const char **s, const char *end, int depth, struct line *top);

static bool j_lit(const char **s, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(end - *s) < n || memcmp(*s, lit, n))
        return false;
    *s += n;
    return true;
}

static bool j_string(const char **s, const char *end)
{
    const char *p = *s;
    if (p == end || *p++ != '"')
        return false;
    while (p < end && *p != '"') {
        unsigned char c = (unsigned char)*p++;
        if (c < 0x20)
            return false;
        if (c != '\\')
            continue;
        if (p == end)
            return false;
        c = (unsigned char)*p++;
        if (c == 'u') {
            for (int i = 0; i < 4; i++, p++)
                if (p == end || !strchr("0123456789abcdefABCDEF", *p) || !*p)
                    return false;
        } else if (!strchr("\"\\/bfnrt", c) || !c) {
            return false;
        }
    }
    if (p == end)
        return false;
    *s = p + 1;
    return true;
}

static bool j_digits(const char **s, const char *end)
{
    const char *p = *s;
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    bool any = p != *s;
    *s = p;
    return any;
}

static bool j_number(const char **s, const char *end)
{
    if (*s < end && **s == '-')
        (*s)++;
    if (*s < end && **s == '0')
        (*s)++;
    else if (!j_digits(s, end))
        return false;
    if (*s < end && **s == '.' && (++*s, !j_digits(s, end)))
        return false;
    if (*s < end && (**s == 'e' || **s == 'E')) {
        (*s)++;
        if (*s < end && (**s == '+' || **s == '-'))
            (*s)++;
        return j_digits(s, end);
    }
    return true;
}

/* An object or an array (close is '}' or ']'); top collects the keys and
 * values when not NULL. */
static bool j_container(const char **s, const char *end, int depth, char close,
                        struct line *top)
{
    (*s)++;
    if (*s < end && **s == close)
        return ++*s, true;
    for (;;) {
        const char *v;
        if (close == '}') {
            const char *k = *s;
            if (!j_string(s, end) || *s == end || *(*s)++ != ':')
                return false;
            if (top) {
                size_t kl = (size_t)(*s - k) - 3;
                if (top->n == MAX_FIELDS || kl >= sizeof(top->key[0]))
                    return false;
                memcpy(top->key[top->n], k + 1, kl);
                top->key[top->n][kl] = 0;
            }
        }
        v = *s;
        if (!j_value(s, end, depth + 1, NULL))
            return false;
        if (top) {
            top->val[top->n] = v;
            top->vlen[top->n++] = (size_t)(*s - v);
        }
        if (*s == end)
            return false;
        char c = *(*s)++;
        if (c == close)
            return true;
        if (c != ',')
            return false;
    }
}

static bool j_value(const char **s, const char *end, int depth, struct line *top)
{
    if (*s == end || depth > 16)
        return false;
    switch (**s) {
    case '{': return j_container(s, end, depth, '}', top);
    case '[': return j_container(s, end, depth, ']', NULL);
    case '"': return j_string(s, end);
    case 't': return j_lit(s, end, "true");
    case 'f': return j_lit(s, end, "false");
    case 'n': return j_lit(s, end, "null");
    default: return j_number(s, end);
    }
}

/* Parses one line (without its '\n'): a JSON object in printable ASCII. */
static void parse_line(const char *s, size_t len, struct line *l)
{
    memset(l, 0, sizeof(*l));
    /* No ck_assert per byte in these helpers: each passing one costs check
     * a write() (its mark point), and concurrent_writers reads 3 MB. */
    for (size_t i = 0; i < len; i++)
        if (s[i] < 0x20 || s[i] >= 0x7f)
            ck_abort_msg("byte 0x%02x at %zu of a line", (unsigned char)s[i], i);
    const char *p = s;
    ck_assert_msg(len && *s == '{' && j_value(&p, s + len, 0, l) && p == s + len,
                  "not a JSON object: %.200s", s);
}

/* The field named k, or -1. */
static int field(const struct line *l, const char *k)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->key[i], k))
            return i;
    return -1;
}

static bool raw_is(const struct line *l, const char *k, const char *raw)
{
    int i = field(l, k);
    return i >= 0 && l->vlen[i] == strlen(raw) && !memcmp(l->val[i], raw, l->vlen[i]);
}

/* Decodes string field k (as audit writes it: \uXXXX only below 0x100)
 * into out (cap bytes); returns its length. */
static size_t str_field(const struct line *l, const char *k, char *out, size_t cap)
{
    int i = field(l, k);
    ck_assert_msg(i >= 0, "no field %s", k);
    const char *p = l->val[i] + 1, *end = l->val[i] + l->vlen[i] - 1;
    ck_assert_int_eq(p[-1], '"');
    size_t n = 0;
    while (p < end) {
        if (n >= cap)
            ck_abort_msg("field %s longer than %zu bytes", k, cap);
        if (*p != '\\') {
            out[n++] = *p++;
        } else if (p[1] == 'u') {
            unsigned v;
            ck_assert_int_eq(sscanf(p + 2, "%4x", &v), 1);
            ck_assert_uint_lt(v, 0x100);
            out[n++] = (char)v;
            p += 6;
        } else {
            ck_assert_msg(p[1] == '"' || p[1] == '\\', "escape \\%c", p[1]);
            out[n++] = p[1];
            p += 2;
        }
    }
    return n;
}

/* The whole log; every line ends in '\n'.  *nlines counts them. */
static char *slurp(size_t *len, int *nlines)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    rewind(f);
    char *b = malloc((size_t)sz + 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(fread(b, 1, (size_t)sz, f), (size_t)sz);
    fclose(f);
    b[sz] = 0;
    *len = (size_t)sz;
    *nlines = 0;
    for (long i = 0; i < sz; i++)
        *nlines += b[i] == '\n';
    ck_assert_msg(sz == 0 || b[sz - 1] == '\n', "log does not end in a newline");
    return b;
}

/* Line i of a slurped log; *len without the '\n'. */
static const char *nth_line(const char *b, int i, size_t *len)
{
    while (i--)
        b = strchr(b, '\n') + 1;
    *len = (size_t)(strchr(b, '\n') - b);
    return b;
}

/* Parses line i of a slurped log. */
static void parse_nth(const char *b, int i, struct line *l)
{
    size_t ll;
    const char *s = nth_line(b, i, &ll);
    parse_line(s, ll, l);
}

/* Every line of the log through Python's json module, when there is one
 * (without it this part of the test is skipped: the built-in reader alone
 * is not an independent check). */
static void python_validates(void)
{
    if (system("command -v python3 >/dev/null 2>&1") != 0) {
        unit_skip("no python3: the log not checked by json.loads, only by the built-in reader");
        return;
    }
    char cmd[256];
    snprintf(cmd, sizeof(cmd),
             "python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1], "
             "encoding=\"ascii\")]' %s",
             path);
    ck_assert_msg(system(cmd) == 0, "python3 json.loads rejected %s", path);
}

static void check_time(const struct line *l, time_t lo, time_t hi)
{
    char t[64];
    size_t n = str_field(l, "time", t, sizeof(t) - 1);
    t[n] = 0;
    static const char pat[] = "dddd-dd-ddTdd:dd:dd.dddZ";
    ck_assert_msg(n == strlen(pat), "time \"%s\"", t);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(pat[i] == 'd' ? (t[i] >= '0' && t[i] <= '9') : t[i] == pat[i],
                      "time \"%s\"", t);
    struct tm tm = {0};
    ck_assert_ptr_nonnull(strptime(t, "%Y-%m-%dT%H:%M:%S", &tm));
    time_t when = timegm(&tm);
    ck_assert_msg(when >= lo - 1 && when <= hi + 1, "time \"%s\" is not now", t);
}

static void check_vm(const struct line *l, const char *want)
{
    char v[32];
    size_t n = str_field(l, "vm", v, sizeof(v) - 1);
    v[n] = 0;
    ck_assert_uint_eq(n, 16);
    ck_assert_uint_eq(strspn(v, "0123456789abcdef"), 16);
    ck_assert_str_eq(v, want);
}

/* ---- tests ------------------------------------------------------------- */

START_TEST(fields_in_order)
{
    time_t lo = time(NULL);
    static const char *const argv[] = {"sh", "-c", "echo hi"};
    audit_begin(&au, &rec, "exec");
    audit_str(&rec, "cmd", "ls");
    audit_u64(&rec, "big", UINT64_MAX);
    audit_i64(&rec, "neg", INT64_MIN);
    audit_bool(&rec, "yes", true);
    audit_bool(&rec, "no", false);
    audit_strv(&rec, "argv", argv, 3);
    audit_strv(&rec, "none", argv, 0);
    static const uint64_t ids[] = {3, 0, UINT64_MAX};
    audit_u64v(&rec, "ids", ids, 3);
    audit_u64v(&rec, "noids", ids, 0);
    audit_str(&rec, "null", NULL);
    audit_strn(&rec, "nulln", NULL, 5);
    ck_assert_int_eq(audit_end(&au, &rec), 0);
    audit_begin(&au, &rec, "exit");
    audit_i64(&rec, "code", 0);
    ck_assert_int_eq(audit_end(&au, &rec), 0);
    time_t hi = time(NULL);

    size_t len;
    int nl;
    char *b = slurp(&len, &nl);
    ck_assert_int_eq(nl, 2);
    struct line l;
    parse_nth(b, 0, &l);
    static const char *const keys[] = {"time", "vm",  "event", "cmd",  "big",   "neg",  "yes",
                                       "no",   "argv", "none", "ids", "noids", "null", "nulln"};
    ck_assert_int_eq(l.n, 14);
    for (int i = 0; i < 14; i++)
        ck_assert_str_eq(l.key[i], keys[i]);
    check_time(&l, lo, hi);
    check_vm(&l, au.vm_id);
    ck_assert(raw_is(&l, "event", "\"exec\""));
    ck_assert(raw_is(&l, "cmd", "\"ls\""));
    ck_assert(raw_is(&l, "big", "18446744073709551615"));
    ck_assert(raw_is(&l, "neg", "-9223372036854775808"));
    ck_assert(raw_is(&l, "yes", "true"));
    ck_assert(raw_is(&l, "no", "false"));
    ck_assert(raw_is(&l, "argv", "[\"sh\",\"-c\",\"echo hi\"]"));
    ck_assert(raw_is(&l, "none", "[]"));
    ck_assert(raw_is(&l, "ids", "[3,0,18446744073709551615]"));
    ck_assert(raw_is(&l, "noids", "[]"));
    ck_assert(raw_is(&l, "null", "\"\""));
    ck_assert(raw_is(&l, "nulln", "\"\""));
    ck_assert_int_eq(field(&l, "truncated"), -1);

    parse_nth(b, 1, &l);
    ck_assert_int_eq(l.n, 4);
    ck_assert(raw_is(&l, "event", "\"exit\""));
    ck_assert(raw_is(&l, "code", "0"));
    check_time(&l, lo, hi);
    check_vm(&l, au.vm_id); /* the same run id on every record */
    free(b);
    python_validates();
}
END_TEST

/* Two runs appending to one log: each keeps its own id, ids differ. */
START_TEST(run_ids)
{
    struct audit other;
    ck_assert_int_eq(audit_open(&other, path), 0);
    ck_assert_str_ne(other.vm_id, au.vm_id);
    for (int i = 0; i < 4; i++) {
        const struct audit *a = i & 1 ? &other : &au;
        audit_begin(a, &rec, "x");
        audit_u64(&rec, "i", (uint64_t)i);
        ck_assert_int_eq(audit_end(a, &rec), 0);
    }
    audit_close(&other);
    ck_assert_int_eq(other.fd, -1);
    size_t len;
    int nl;
    char *b = slurp(&len, &nl);
    ck_assert_int_eq(nl, 4);
    for (int i = 0; i < 4; i++) {
        struct line l;
        parse_nth(b, i, &l);
        check_vm(&l, i & 1 ? other.vm_id : au.vm_id);
    }
    free(b);
}
END_TEST

/* Every byte value, NUL included, in a value and in an argv string. */
START_TEST(escaping)
{
    char all[256], got[2048];
    for (int i = 0; i < 256; i++)
        all[i] = (char)i;
    audit_begin(&au, &rec, "e\"v\\\n");
    audit_strn(&rec, "all", all, sizeof(all));
    audit_strn(&rec, "nul", "a\0b", 3);
    audit_str(&rec, "quote", "\"},\"x\":\"");
    const char *const argv[] = {"\\", "\"", "\x01\x7f\x80\xff", "]", ""};
    audit_strv(&rec, "argv", argv, 5);
    ck_assert_int_eq(audit_end(&au, &rec), 0);

    size_t len, ll;
    int nl;
    char *b = slurp(&len, &nl);
    ck_assert_int_eq(nl, 1);
    struct line l;
    const char *s = nth_line(b, 0, &ll);
    parse_line(s, ll, &l);
    ck_assert_int_eq(l.n, 7);
    ck_assert(raw_is(&l, "event", "\"e\\\"v\\\\\\u000a\""));
    ck_assert_uint_eq(str_field(&l, "all", got, sizeof(got)), 256);
    ck_assert(!memcmp(got, all, 256));
    ck_assert(raw_is(&l, "nul", "\"a\\u0000b\""));
    ck_assert_uint_eq(str_field(&l, "quote", got, sizeof(got)), 8);
    ck_assert(!memcmp(got, "\"},\"x\":\"", 8));
    ck_assert_int_eq(field(&l, "x"), -1); /* no injected field */
    ck_assert(raw_is(&l, "argv", "[\"\\\\\",\"\\\"\",\"\\u0001\\u007f\\u0080\\u00ff\",\"]\",\"\"]"));
    ck_assert_ptr_nonnull(strstr(s, "\\u001f !"));
    ck_assert_ptr_nonnull(strstr(s, "\\u0000\\u0001"));
    free(b);
    python_validates();
}
END_TEST

/* The record is cut before the field that does not fit; what follows is
 * dropped too; the line says "truncated":true and stays valid. */
static void check_cut(const char *s, size_t ll, const char *kept, const char *dropped)
{
    struct line l;
    ck_assert_uint_le(ll + 1, AUDIT_RECORD_MAX);
    parse_line(s, ll, &l);
    ck_assert_int_ge(field(&l, kept), 0);
    ck_assert_int_eq(field(&l, dropped), -1);
    ck_assert_int_eq(field(&l, "after"), -1);
    ck_assert_str_eq(l.key[l.n - 1], "truncated");
    ck_assert(raw_is(&l, "truncated", "true"));
}

START_TEST(cut_big_value)
{
    char *big = malloc(20000);
    ck_assert_ptr_nonnull(big);
    memset(big, '"', 20000); /* 40000 bytes escaped */
    audit_begin(&au, &rec, "egress");
    audit_str(&rec, "before", "kept");
    audit_strn(&rec, "big", big, 20000);
    audit_u64(&rec, "after", 1);
    ck_assert_int_eq(audit_end(&au, &rec), 0);

    /* 2000 argv strings: the whole array goes, not half of it. */
    const char **argv = calloc(2000, sizeof(*argv));
    ck_assert_ptr_nonnull(argv);
    for (int i = 0; i < 2000; i++)
        argv[i] = "argument-\x01\x02";
    audit_begin(&au, &rec, "exec");
    audit_str(&rec, "before", "kept");
    audit_strv(&rec, "argv", argv, 2000);
    audit_bool(&rec, "after", false);
    ck_assert_int_eq(audit_end(&au, &rec), 0);

    /* A value of exactly 20000 bytes with a NUL and high bytes in it. */
    for (int i = 0; i < 20000; i++)
        big[i] = (char)(i * 131);
    audit_begin(&au, &rec, "x");
    audit_str(&rec, "before", "kept");
    audit_strn(&rec, "big", big, 20000);
    ck_assert_int_eq(audit_end(&au, &rec), 0);
    free(argv);
    free(big);

    size_t len, ll;
    int nl;
    char *b = slurp(&len, &nl);
    ck_assert_int_eq(nl, 3);
    const char *s = nth_line(b, 0, &ll);
    check_cut(s, ll, "before", "big");
    s = nth_line(b, 1, &ll);
    check_cut(s, ll, "before", "argv");
    s = nth_line(b, 2, &ll);
    check_cut(s, ll, "before", "big");
    free(b);
    python_validates();
}
END_TEST

/* Records ending at every offset near the limit: a field that just fits
 * is kept whole, one that does not is dropped and the cut is flagged,
 * whatever room was left for the flag itself. */
START_TEST(cut_at_every_boundary)
{
    audit_begin(&au, &rec, "b");
    size_t hdr = rec.len;
    char *v = malloc(AUDIT_RECORD_MAX);
    ck_assert_ptr_nonnull(v);
    memset(v, 'v', AUDIT_RECORD_MAX);
    /* ,"a":"...": 7 + L bytes; ,"b":1: 6 bytes; "}\n" ends the record. */
    size_t top = AUDIT_RECORD_MAX - hdr - 7;
    int lines = 0;
    for (size_t L = top - 40; L <= top + 2; L++, lines++) {
        audit_begin(&au, &rec, "b");
        audit_strn(&rec, "a", v, L);
        audit_u64(&rec, "b", 1);
        ck_assert_int_eq(audit_end(&au, &rec), 0);
    }
    free(v);

    size_t len, ll;
    int nl;
    char *b = slurp(&len, &nl);
    ck_assert_int_eq(nl, lines);
    for (int i = 0; i < nl; i++) {
        struct line l;
        const char *s = nth_line(b, i, &ll);
        ck_assert_uint_le(ll + 1, AUDIT_RECORD_MAX);
        parse_line(s, ll, &l);
        bool whole = field(&l, "a") >= 0 && field(&l, "b") >= 0;
        ck_assert_msg(whole == (field(&l, "truncated") < 0),
                      "line %d (%zu bytes): whole %d but truncated flag %s", i, ll, whole,
                      whole ? "set" : "missing");
        if (!whole)
            ck_assert_str_eq(l.key[l.n - 1], "truncated");
    }
    free(b);
}
END_TEST

START_TEST(no_log)
{
    struct audit none;
    audit_none(&none);
    ck_assert_int_eq(none.fd, -1);
    ck_assert_uint_eq(strlen(none.vm_id), 16);
    ck_assert_uint_eq(strspn(none.vm_id, "0123456789abcdef"), 16);
    const char *const argv[] = {"a"};
    audit_begin(&none, &rec, "exec");
    audit_str(&rec, "s", "x");
    audit_strn(&rec, "n", "\0", 1);
    audit_u64(&rec, "u", 1);
    audit_i64(&rec, "i", -1);
    audit_bool(&rec, "b", true);
    audit_strv(&rec, "v", argv, 1);
    ck_assert_int_eq(audit_end(&none, &rec), 0);
    audit_close(&none);
    audit_close(&none);
    ck_assert_int_eq(none.fd, -1);

    /* A log that cannot be opened says so and then behaves as none. */
    struct audit bad;
    ck_assert_int_eq(audit_open(&bad, "/nonexistent-dir/airlock/audit.log"), -ENOENT);
    ck_assert_int_eq(bad.fd, -1);
    audit_begin(&bad, &rec, "exec");
    ck_assert_int_eq(audit_end(&bad, &rec), 0);
    audit_close(&bad);

    size_t len;
    int nl;
    char *b = slurp(&len, &nl);
    ck_assert_uint_eq(len, 0); /* nothing reached the real log */
    free(b);
}
END_TEST

/* A failed write is reported, not swallowed. */
START_TEST(write_error)
{
    struct audit ro;
    ro.fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(ro.fd, 0);
    memcpy(ro.vm_id, au.vm_id, sizeof(ro.vm_id));
    audit_begin(&ro, &rec, "exec");
    ck_assert_int_eq(audit_end(&ro, &rec), -EBADF);
    audit_close(&ro);
}
END_TEST

#define WRITERS 4
#define PER_WRITER 500

static void *writer(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    struct audit_rec *r = malloc(sizeof(*r));
    char pad[3000];
    memset(pad, (int)('a' + t), sizeof(pad));
    for (unsigned i = 0; i < PER_WRITER; i++) {
        audit_begin(&au, r, "w");
        audit_u64(r, "t", t);
        audit_u64(r, "i", i);
        audit_strn(r, "pad", pad, (i * 37) % sizeof(pad));
        if (audit_end(&au, r))
            break;
    }
    free(r);
    return NULL;
}

START_TEST(concurrent_writers)
{
    pthread_t th[WRITERS];
    for (uintptr_t t = 0; t < WRITERS; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, writer, (void *)t), 0);
    for (int t = 0; t < WRITERS; t++)
        pthread_join(th[t], NULL);

    size_t len, ll;
    int nl;
    char *b = slurp(&len, &nl);
    ck_assert_int_eq(nl, WRITERS * PER_WRITER);
    static bool seen[WRITERS][PER_WRITER];
    memset(seen, 0, sizeof(seen));
    const char *s = b;
    char pad[3000];
    for (int k = 0; k < nl; k++, s += ll + 1) {
        struct line l;
        ll = (size_t)(strchr(s, '\n') - s);
        parse_line(s, ll, &l);
        check_vm(&l, au.vm_id);
        unsigned long t, i;
        ck_assert_int_eq(sscanf(l.val[field(&l, "t")], "%lu", &t), 1);
        ck_assert_int_eq(sscanf(l.val[field(&l, "i")], "%lu", &i), 1);
        ck_assert_uint_lt(t, WRITERS);
        ck_assert_uint_lt(i, PER_WRITER);
        ck_assert_msg(!seen[t][i], "record %lu/%lu twice", t, i);
        seen[t][i] = true;
        size_t n = str_field(&l, "pad", pad, sizeof(pad));
        ck_assert_uint_eq(n, (i * 37) % sizeof(pad));
        size_t j = 0; /* one assertion per record, not per byte (see parse_line) */
        while (j < n && pad[j] == (char)('a' + t))
            j++;
        ck_assert_msg(j == n, "record %lu/%lu: pad byte %zu is %#x", t, i, j,
                      (unsigned)(uint8_t)pad[j]);
    }
    free(b);
}
END_TEST

Suite *audit_suite(void)
{
    Suite *s = suite_create("audit");
    TCase *tc = tcase_create("records");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, fields_in_order);
    tcase_add_test(tc, run_ids);
    tcase_add_test(tc, escaping);
    tcase_add_test(tc, cut_big_value);
    tcase_add_test(tc, cut_at_every_boundary);
    tcase_add_test(tc, no_log);
    tcase_add_test(tc, write_error);
    tcase_add_test(tc, concurrent_writers);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
