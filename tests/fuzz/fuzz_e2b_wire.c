/* libFuzzer target: what an E2B client and a guest control in vmm/e2b/.
 *
 *   byte 0 % 5 selects:
 *     0  a streaming request's body: connect_request_envelope; a message
 *        it takes lies inside the body and its length is the head's
 *     1  Connect-Timeout-Ms text: connect_timeout_parse; taken only for
 *        1 to 10 digits, read back exactly
 *     2  a request message: the JSON parsed as connect_call_open does,
 *        then every proto_json reader on every member (uint32, string,
 *        bool, bytes, enum, map), each either refusing or giving a value
 *        of its type; bytes decoded must re-encode to the same bytes
 *     3  RFC 3339 text: pj_timestamp_parse; a time it takes, written back
 *        by pj_timestamp_new, parses to the same milliseconds
 *     4  the guest's /etc/passwd and an Authorization value (split at the
 *        first NUL): e2b_basic_name, e2b_passwd_find by that name and by
 *        uid, e2b_user_path; a user found has an absolute home that fits */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "vmm/e2b/connect_wire.h"
#include "vmm/e2b/e2b_user.h"
#include "vmm/e2b/proto_json.h"

static char *text_of(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static void values(json_t *v)
{
    uint32_t u;
    bool bad = false;
    if (pj_uint32(v, 7, &u) == 0 && json_is_integer(v))
        assert((json_int_t)u == json_integer_value(v));
    (void)pj_string(v, &bad);
    bad = false;
    (void)pj_bool(v, false, &bad);
    bad = false;
    size_t n;
    unsigned char *b = pj_bytes(v, &n, &bad);
    if (b && !bad) {
        json_t *again = pj_bytes_new(b, n);
        size_t m;
        bool bad2 = false;
        unsigned char *c = pj_bytes(again, &m, &bad2);
        assert(c && !bad2 && m == n && (!n || !memcmp(b, c, n)));
        free(c);
        json_decref(again);
    }
    free(b);
    static const char *const names[] = {"A", "B"};
    static const int vals[] = {0, 5};
    int e;
    if (pj_enum(v, names, vals, 2, &e) == 0)
        assert(e == 0 || e == 5);
    bad = false;
    (void)pj_string_map(v, &bad);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    switch (data[0] % 5) {
    case 0: {
        const uint8_t *msg;
        size_t len;
        const char *why;
        if (connect_request_envelope(p, n, &msg, &len, &why) == 0) {
            assert(n >= CONNECT_HEAD_LEN && msg == p + CONNECT_HEAD_LEN);
            assert(len == n - CONNECT_HEAD_LEN);
            assert(((uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4]) == len);
        } else {
            assert(why && *why);
        }
        break;
    }
    case 1: {
        char *s = text_of(p, n);
        uint64_t ms;
        if (connect_timeout_parse(s, &ms) == 0) {
            assert(strlen(s) >= 1 && strlen(s) <= 10 && strspn(s, "0123456789") == strlen(s));
            assert(ms == strtoull(s, NULL, 10));
        }
        free(s);
        break;
    }
    case 2: {
        json_t *o = json_loadb((const char *)p, n, JSON_REJECT_DUPLICATES, NULL);
        if (json_is_object(o)) {
            const char *k;
            json_t *v;
            json_object_foreach(o, k, v) {
                values(v);
                json_t *f = pj_field(o, k, "x");
                assert(!f || f == v || json_is_null(v));
            }
        }
        json_decref(o);
        break;
    }
    case 3: {
        char *s = text_of(p, n);
        int64_t ms;
        if (pj_timestamp_parse(s, &ms) == 0 && ms >= 0 && ms < 253402300800000LL) {
            json_t *t = pj_timestamp_new(ms);
            int64_t back;
            assert(pj_timestamp_parse(json_string_value(t), &back) == 0 && back == ms);
            json_decref(t);
        }
        free(s);
        break;
    }
    case 4: {
        const uint8_t *nul = memchr(p, 0, n);
        size_t pw_len = nul ? (size_t)(nul - p) : n;
        char *auth = text_of(nul ? nul + 1 : p + n, nul ? n - pw_len - 1 : 0);
        char name[E2B_USER_NAME_MAX + 1];
        struct e2b_user u;
        int got = e2b_basic_name(auth, name);
        if (got == 1)
            assert(strlen(name) >= 1 && strlen(name) <= E2B_USER_NAME_MAX);
        if (e2b_passwd_find((const char *)p, pw_len, got == 1 ? name : NULL, 1000, &u) == 0) {
            assert(u.home[0] == '/' && strlen(u.home) < sizeof(u.home));
            assert(strlen(u.name) <= E2B_USER_NAME_MAX);
            char out[300];
            if (e2b_user_path(&u, auth, out, sizeof(out)) == 0)
                assert(out[0] == '/');
        }
        free(auth);
        break;
    }
    }
    return 0;
}
