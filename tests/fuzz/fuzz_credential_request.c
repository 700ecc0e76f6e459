/* libFuzzer target: a decrypted request head as a guest sends it on a
 * credential connection (vmm/egress/credential_request.c), judged against two
 * secrets with fixed values and placeholders.  Invariants: a forwarded
 * head ends in CRLFCRLF, carries "Accept-Encoding: identity", holds no
 * placeholder at all (each was either replaced or the request refused),
 * and holds a secret's value exactly when that secret was injected; a
 * refusal names a status the proxy answers with; and a prefix of the
 * input gives 0 or the same verdict (how the guest splits its writes
 * changes nothing). */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "vmm/egress/credential_request.h"

#define PH1 "sk-test-PLACEHOLDERaaaaaaaaaaaaaaaaaaaaaaaaa"
#define V1  "sk-test-REALVALUEbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define PH2 "PLACEHOLDER2cccccccccccccccccccc"
#define V2  "REALVALUE2dddddddddddddddddddddd"

static struct secret_set set;
static char v1[] = V1, v2[] = V2;

static void init(void)
{
    char err[256];
    if (set.n)
        return;
    assert(!secret_parse(&set, "API_KEY=env:X,host=api.test,methods=GET,POST,paths=/v1,/v2/chat",
                         err, sizeof(err)));
    assert(!secret_parse(&set, "OTHER=env:Y,host=other.test:8443,header=x-api-key", err, sizeof(err)));
    set.s[0].value = v1;
    set.s[0].len = strlen(V1);
    memcpy(set.s[0].placeholder, PH1, sizeof(PH1));
    set.s[1].value = v2;
    set.s[1].len = strlen(V2);
    memcpy(set.s[1].placeholder, PH2, sizeof(PH2));
}

static int judge(const char *buf, size_t len, const char *host, uint16_t port, struct cred_request *r)
{
    return cred_request_judge(buf, len, &set, host, port, r);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    init();
    if (size < 1)
        return 0;
    /* The first byte picks the connection: api.test:443 or other.test:8443. */
    const char *host = data[0] & 1 ? "other.test" : "api.test";
    uint16_t port = data[0] & 1 ? 8443 : 443;
    const char *buf = (const char *)data + 1;
    size_t len = size - 1;
    struct cred_request r;
    int rc = judge(buf, len, host, port, &r);
    assert(rc == 0 || rc == 1);
    if (rc == 1 && r.status == 0) {
        const char *h = r.out_head;
        size_t n = r.out_len;
        assert(h && n >= 4 && !memcmp(h + n - 4, "\r\n\r\n", 4));
        assert(memmem(h, n, "\r\nAccept-Encoding: identity\r\n", 29));
        assert(!memmem(h, n, PH1, strlen(PH1)) && !memmem(h, n, PH2, strlen(PH2)));
        assert(!!memmem(h, n, V1, strlen(V1)) == !!(r.injected & 1) ||
               memmem(buf, len, V1, strlen(V1))); /* a guest may send a value it knows */
        assert(!!memmem(h, n, V2, strlen(V2)) == !!(r.injected & 2) ||
               memmem(buf, len, V2, strlen(V2)));
        assert(r.head_len <= len && r.head_len <= HTTP_HEAD_MAX);
        /* a secret goes only to its own host */
        assert(!(r.injected & 1) || port == 443);
        assert(!(r.injected & 2) || port == 8443);
    } else if (rc == 1) {
        int s = r.status;
        assert(s == 400 || s == 403 || s == 405 || s == 411 || s == 414 || s == 431 || s == 505 ||
               s == 500);
        assert(!r.out_head);
    }
    /* A prefix: 0 or the same verdict. */
    if (rc == 1 && len > 1) {
        struct cred_request p;
        int prc = judge(buf, len / 2, host, port, &p);
        assert(prc == 0 || (prc == 1 && p.status == r.status));
        cred_request_free(&p);
    }
    cred_request_free(&r);
    return 0;
}
