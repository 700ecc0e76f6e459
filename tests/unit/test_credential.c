/* The credential broker's pure parts: --secret specs (vmm/egress/secret.c),
 * the placeholder's shape, scope, and the judgement of decrypted request
 * heads (vmm/egress/credential_request.c) with hostile heads. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/egress/credential_request.h"
#include "vmm/egress/secret.h"
#include "tests/unit/helpers.h"

static int parse(struct secret_set *set, const char *arg, char *err)
{
    return secret_parse(set, arg, err, 512);
}

START_TEST(spec_good)
{
    struct secret_set set = {0};
    char err[512] = "";
    ck_assert_int_eq(parse(&set, "API_KEY=env:OPENAI,host=API.example.com", err), 0);
    const struct secret *s = &set.s[0];
    ck_assert_str_eq(s->name, "API_KEY");
    ck_assert_str_eq(s->source, "env:OPENAI");
    ck_assert_str_eq(s->host, "api.example.com");
    ck_assert_uint_eq(s->port, 443);
    ck_assert_str_eq(s->header, "Authorization");
    ck_assert_str_eq(s->format, "Bearer {}");
    ck_assert_uint_eq(s->nmethods, 0);
    ck_assert_int_eq(parse(&set, "GH=file:/k,host=api.github.com:8443,header=X-Api-Key,"
                                 "methods=GET,POST,paths=/v1/,/v2/chat", err), 0);
    s = &set.s[1];
    ck_assert_uint_eq(s->port, 8443);
    ck_assert_str_eq(s->format, "{}"); /* another header: the value alone */
    ck_assert_uint_eq(s->nmethods, 2);
    ck_assert_str_eq(s->methods[1], "POST");
    ck_assert_uint_eq(s->npaths, 2);
    ck_assert_str_eq(s->paths[1], "/v2/chat");
    ck_assert_int_eq(parse(&set, "T=fd:5,host=[2001:db8::1]:443,format=token {} x", err), 0);
    ck_assert_str_eq(set.s[2].host, "2001:db8::1");
    ck_assert_str_eq(set.s[2].format, "token {} x");
}
END_TEST

START_TEST(spec_bad)
{
    static const struct {
        const char *arg, *want;
    } cases[] = {
        {"K=env:X,hots=a.test", "unknown field 'hots'"},
        {"K=env:X", "host= is missing"},
        {"K=sk-123,host=a.test", "want env:VAR, file:PATH or fd:N"},
        {"=env:X,host=a.test", "want NAME=SOURCE"},
        {"1K=env:X,host=a.test", "want NAME=SOURCE"},
        {"K=env:X,host=*.a.test", "host '*.a.test'"},
        {"K=env:X,host=a.test:0", "host 'a.test:0'"},
        {"K=env:X,host=a.test,header=Bad Header", "header 'Bad Header'"},
        {"K=env:X,host=a.test,format=Bearer", "format 'Bearer'"},
        {"K=env:X,host=a.test,format={}{}", "format '{}{}'"},
        {"K=env:X,host=a.test,paths=/v1/../admin", "path '/v1/../admin'"},
        {"K=env:X,host=a.test,paths=v1", "path 'v1'"},
        {"K=env:X,host=a.test,paths=/a%2f", "path '/a%2f'"},
        {"K=env:X,host=a.test,methods=G T", "method 'G T'"},
        {"K=env:X,host=a.test,stray", "'stray' is not key=value"},
        {"K=fd:1,host=a.test", "want env:VAR"},
        {"K=env:X,host=a.test,methods=", "methods= is empty"},
        /* a second methods= adds to the first, and 17 is one too many */
        {"K=env:X,host=a.test,methods=A,B,C,D,E,F,G,H,I,J,K,L,M,N,O,P,methods=Q", "method 'Q'"},
        {"K=env:X,host=a.test,paths=/a,/b,/c,/d,/e,/f,/g,/h,/i,/j,/k,/l,/m,/n,/o,/p,paths=/q",
         "path '/q'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct secret_set set = {0};
        char err[512] = "";
        ck_assert_msg(parse(&set, cases[i].arg, err) == -EINVAL, "%s was accepted", cases[i].arg);
        ck_assert_msg(strstr(err, cases[i].want), "%s: '%s' lacks '%s'", cases[i].arg, err,
                      cases[i].want);
        ck_assert_msg(!strchr(err, '\n'), "one line");
        ck_assert_uint_eq(set.n, 0);
    }
    struct secret_set set = {0};
    char err[512];
    ck_assert_int_eq(parse(&set, "K=env:X,host=a.test", err), 0);
    ck_assert_int_eq(parse(&set, "K=env:Y,host=b.test", err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "named twice"));
    ck_assert_int_eq(parse(&set, "L=env:Y,host=a.test:443", err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "already fills this header"));
}
END_TEST

START_TEST(shape)
{
    const char *v = "sk-proj-AbC123xyzQWERTY789asdfghJKLz";
    unsigned char rnd[64];
    char out[64];
    for (size_t i = 0; i < sizeof(rnd); i++)
        rnd[i] = (unsigned char)(i * 37 + 11);
    ck_assert_int_eq(secret_shape(v, strlen(v), rnd, out), 0);
    ck_assert_uint_eq(strlen(out), strlen(v));
    ck_assert_int_eq(strncmp(out, "sk-proj-", 8), 0);
    for (size_t i = 8; i < strlen(v); i++) {
        ck_assert_int_eq(!!islower(v[i]), !!islower(out[i]));
        ck_assert_int_eq(!!isupper(v[i]), !!isupper(out[i]));
        ck_assert_int_eq(!!isdigit(v[i]), !!isdigit(out[i]));
    }
    ck_assert_str_ne(out, v);
    /* too few random positions: refused */
    ck_assert_int_eq(secret_shape("sk-abc", 6, rnd, out), -EINVAL);
    ck_assert_int_eq(secret_shape("ghp_1234567890123456", 20, rnd, out), 0);
    ck_assert_int_eq(secret_shape("ghp_123456789012345", 19, rnd, out), -EINVAL);
}
END_TEST

START_TEST(load_sources)
{
    char path[] = "/tmp/airlock-secret-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char *val = "sk-test-0123456789abcdefghijABCDEFGHIJ";
    ck_assert_int_eq(write(fd, val, strlen(val)), (ssize_t)strlen(val));
    ck_assert_int_eq(write(fd, "\n", 1), 1);
    close(fd);
    struct secret_set set = {0};
    char arg[600], err[512];
    snprintf(arg, sizeof(arg), "K=file:%s,host=a.test", path);
    ck_assert_int_eq(parse(&set, arg, err), 0);
    setenv("AIRLOCK_TEST_SECRET", "tok_ABCDEFGHIJKLMNOPQRSTUV", 1);
    ck_assert_int_eq(parse(&set, "E=env:AIRLOCK_TEST_SECRET,host=b.test", err), 0);
    ck_assert_int_eq(secret_load_all(&set, err, sizeof(err)), 0);
    ck_assert_str_eq(set.s[0].value, val); /* the newline dropped */
    ck_assert_uint_eq(set.s[0].len, strlen(val));
    ck_assert_uint_eq(strlen(set.s[0].placeholder), strlen(val));
    ck_assert_str_eq(set.s[1].value, "tok_ABCDEFGHIJKLMNOPQRSTUV");
    secret_wipe(&set);
    ck_assert_ptr_null(set.s[0].value);
    /* the environment's bytes are wiped in place */
    const char *e = getenv("AIRLOCK_TEST_SECRET");
    ck_assert(e == NULL || e[0] == '\0');
    ck_assert_uint_eq(strlen(set.s[1].placeholder), 26);
    unlink(path);

    struct secret_set bad = {0};
    ck_assert_int_eq(parse(&bad, "K=file:/nonexistent/x,host=a.test", err), 0);
    ck_assert_int_eq(secret_load_all(&bad, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "secret K: file:/nonexistent/x: No such file"));
}
END_TEST

START_TEST(scope)
{
    struct secret_set set = {0};
    char err[512];
    ck_assert_int_eq(parse(&set, "K=env:X,host=a.test,methods=GET,POST,paths=/v1,/v2/chat/", err), 0);
    const struct secret *s = &set.s[0];
#define IN(m, t) secret_in_scope(s, m, t, strlen(t))
    ck_assert(IN("GET", "/v1"));
    ck_assert(IN("GET", "/v1/models"));
    ck_assert(IN("POST", "/v1?x=1"));
    ck_assert(IN("GET", "/v2/chat/x"));
    ck_assert(!IN("GET", "/v1x"));
    ck_assert(!IN("GET", "/v2/chat")); /* the prefix ends in '/' */
    ck_assert(!IN("DELETE", "/v1"));
    ck_assert(!IN("get", "/v1"));
    ck_assert(!IN("GET", "/v1/../admin"));
    ck_assert(!IN("GET", "/v1/%2e%2e/admin"));
    ck_assert(!IN("GET", "/v1//x"));
    ck_assert(!IN("GET", "/admin?/v1"));
#undef IN
}
END_TEST

/* ---- the judge ---- */

#define PH "sk-test-PLACEHOLDERaaaaaaaaaaaaaaaaaaaaaaaaa"
#define VAL "sk-test-REALVALUEbbbbbbbbbbbbbbbbbbbbbbbbbbb"
static struct secret_set jset;
static char jval[] = VAL, jval2[] = "OTHERVALUEcccccccccccccccccccccc";

static void judge_setup(void)
{
    char err[512];
    memset(&jset, 0, sizeof(jset));
    ck_assert_int_eq(parse(&jset, "K=env:X,host=api.test,methods=GET,POST,paths=/v1", err), 0);
    ck_assert_int_eq(parse(&jset, "O=env:Y,host=other.test,header=x-api-key", err), 0);
    jset.s[0].value = jval;
    jset.s[0].len = strlen(VAL);
    strcpy(jset.s[0].placeholder, PH);
    jset.s[1].value = jval2;
    jset.s[1].len = strlen(jval2);
    strcpy(jset.s[1].placeholder, "OTHERPLACEHOLDERdddddddddddddddd");
}

static int judge(const char *head, struct cred_request *r)
{
    judge_setup();
    return cred_request_judge(head, strlen(head), &jset, "api.test", 443, r);
}

START_TEST(judge_inject)
{
    struct cred_request r;
    const char *h = "GET /v1/models HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer " PH
                    "\r\nAccept-Encoding: gzip, br\r\nX-Other: 1\r\n\r\nBODY";
    ck_assert_int_eq(judge(h, &r), 1);
    ck_assert_int_eq(r.status, 0);
    ck_assert_uint_eq(r.injected, 1);
    ck_assert_uint_eq(r.head_len, strlen(h) - 4);
    const char *want = "GET /v1/models HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer " VAL
                       "\r\nX-Other: 1\r\nAccept-Encoding: identity\r\n\r\n";
    ck_assert_uint_eq(r.out_len, strlen(want));
    ck_assert_mem_eq(r.out_head, want, r.out_len);
    cred_request_free(&r);
    /* no placeholder: unchanged but for Accept-Encoding */
    ck_assert_int_eq(judge("GET /x HTTP/1.1\r\nHost: api.test:443\r\n\r\n", &r), 1);
    ck_assert_int_eq(r.status, 0);
    ck_assert_uint_eq(r.injected, 0);
    ck_assert_mem_eq(r.out_head, "GET /x HTTP/1.1\r\nHost: api.test:443\r\nAccept-Encoding: identity\r\n\r\n",
                     r.out_len);
    cred_request_free(&r);
    /* one trailing dot after the name is the same host, as in CONNECT */
    static const char *const dotted[] = {"API.test.", "api.test.:443", "api.test:443"};
    for (size_t i = 0; i < sizeof(dotted) / sizeof(dotted[0]); i++) {
        char head[200];
        snprintf(head, sizeof(head), "GET /v1 HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer " PH
                 "\r\n\r\n", dotted[i]);
        ck_assert_int_eq(judge(head, &r), 1);
        ck_assert_msg(r.status == 0 && r.injected == 1, "Host %s: %d %s", dotted[i], r.status,
                      r.reason);
        cred_request_free(&r);
    }
    /* a partial head */
    ck_assert_int_eq(judge("GET /v1 HTTP/1.1\r\nHost: api.test\r\n", &r), 0);
}
END_TEST

START_TEST(judge_refusals)
{
    static const struct {
        const char *head, *why;
        int status;
    } cases[] = {
        {"GET /v1?k=" PH " HTTP/1.1\r\nHost: api.test\r\n\r\n", "in the URL", 403},
        {"GET /v1 HTTP/1.1\r\nHost: api.test\r\nX-Key: " PH "\r\n\r\n", "X-Key header", 403},
        {"GET /v1 HTTP/1.1\r\nHost: api.test\r\nAuthorization: Token " PH "\r\n\r\n", "not as 'Bearer {}'", 403},
        {"GET /v1 HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer " PH "\r\nAuthorization: Bearer " PH "\r\n\r\n",
         "malformed", 400}, /* the parser keeps one Authorization */
        {"DELETE /v1 HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer " PH "\r\n\r\n", "outside its methods", 403},
        {"GET /admin HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer " PH "\r\n\r\n", "outside its methods", 403},
        {"GET /v1 HTTP/1.1\r\nHost: api.test\r\nx-api-key: OTHERPLACEHOLDERdddddddddddddddd\r\n\r\n",
         "which does not get it", 403},
        {"GET /v1 HTTP/1.1\r\nHost: evil.test\r\nAuthorization: Bearer " PH "\r\n\r\n", "Host 'evil.test'", 403},
        {"GET /v1 HTTP/1.1\r\nHost: api.test:444\r\n\r\n", "Host 'api.test:444' is not api.test:443,", 403},
        {"GET /v1 HTTP/1.1\r\nHost: api.test.:444\r\n\r\n", "Host 'api.test.:444' is not api.test:443,", 403},
        {"GET /v1 HTTP/1.1\r\nHost: api.test..\r\n\r\n", "Host 'api.test..'", 403},
        {"GET /v1 HTTP/1.1\r\nHost: api.test:\r\n\r\n", "Host 'api.test:'", 403},
        {"GET /v1 HTTP/1.1\r\nHost: api.tes\r\n\r\n", "Host 'api.tes'", 403},
        {"GET /v1 HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n",
         "upgrades", 403},
        {"GET /v1 HTTP/1.1\r\n\r\n", "no Host", 400},
        {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "HTTP/2", 505},
        {"POST /v1 HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: chunked\r\n\r\n", "Content-Length", 411},
        {"GET /v1 HTTP/1.1\nHost: api.test\n\n", "malformed", 400},
        {"GET http://api.test/v1 HTTP/1.1\r\nHost: api.test\r\n\r\n", "malformed", 400},
        {"GET /v1 HTTP/1.1\r\nHost: api.test\r\nX" PH ": 1\r\n\r\n", "header name", 403},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cred_request r;
        ck_assert_int_eq(judge(cases[i].head, &r), 1);
        ck_assert_msg(r.status == cases[i].status, "case %zu: status %d, want %d (%s)", i, r.status,
                      cases[i].status, r.reason);
        ck_assert_msg(strstr(r.reason, cases[i].why), "case %zu: '%s' lacks '%s'", i, r.reason,
                      cases[i].why);
        ck_assert_ptr_null(r.out_head);
        ck_assert(!strstr(r.reason, VAL));
        cred_request_free(&r);
    }
}
END_TEST

/* The other host's secret is injected on its own connection, never on
 * this one; a value with no value loaded is a 500, not a placeholder sent. */
START_TEST(judge_other_host)
{
    struct cred_request r;
    judge_setup();
    const char *h = "GET / HTTP/1.1\r\nHost: other.test\r\nx-api-key: OTHERPLACEHOLDERdddddddddddddddd\r\n\r\n";
    ck_assert_int_eq(cred_request_judge(h, strlen(h), &jset, "other.test", 443, &r), 1);
    ck_assert_int_eq(r.status, 0);
    ck_assert_uint_eq(r.injected, 2);
    ck_assert_ptr_nonnull(memmem(r.out_head, r.out_len, "x-api-key: OTHERVALUE", 21));
    cred_request_free(&r);
    jset.s[1].value = NULL;
    ck_assert_int_eq(cred_request_judge(h, strlen(h), &jset, "other.test", 443, &r), 1);
    ck_assert_int_eq(r.status, 500);
    cred_request_free(&r);
}
END_TEST

/* A value of kilobytes (a JWT): its Bearer form passes the parser, and
 * the same-length placeholder is replaced whole. */
START_TEST(judge_long_value)
{
    static char val[3001], ph[3001], head[4000];
    memset(val, 'V', 3000);
    memset(ph, 'P', 3000);
    judge_setup();
    jset.s[0].value = val;
    jset.s[0].len = 3000;
    memcpy(jset.s[0].placeholder, ph, 3001);
    snprintf(head, sizeof(head), "GET /v1 HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer %s\r\n\r\n", ph);
    struct cred_request r;
    ck_assert_int_eq(cred_request_judge(head, strlen(head), &jset, "api.test", 443, &r), 1);
    ck_assert_msg(r.status == 0, "%d %s", r.status, r.reason);
    ck_assert_uint_eq(r.out_len, strlen(head) + strlen("Accept-Encoding: identity\r\n"));
    ck_assert_ptr_nonnull(memmem(r.out_head, r.out_len, val, 3000));
    cred_request_free(&r);
}
END_TEST

Suite *credential_suite(void)
{
    Suite *s = suite_create("credential");
    TCase *t = tcase_create("credential");
    tcase_add_test(t, spec_good);
    tcase_add_test(t, spec_bad);
    tcase_add_test(t, shape);
    tcase_add_test(t, load_sources);
    tcase_add_test(t, scope);
    tcase_add_test(t, judge_inject);
    tcase_add_test(t, judge_refusals);
    tcase_add_test(t, judge_other_host);
    tcase_add_test(t, judge_long_value);
    suite_add_tcase(s, t);
    return s;
}
