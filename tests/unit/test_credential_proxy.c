/* The credential path through the real broker process (its seccomp filter
 * on), with no VM: a TLS upstream on loopback whose certificate comes from
 * a CA of the test's own (--ca-file), the broker started with one secret
 * for it, and the guest's side played by a TLS client on the socket the
 * broker hands back, trusting only the VM's CA the broker sent.  The
 * upstream must get the value, the client must never see it (echoed in
 * body and headers, chunked), and refusals must not reach the upstream. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "vmm/egress/credential_ca.h"
#include "vmm/egress/egress_broker.h"
#include "tests/unit/helpers.h"

#define VALUE "sk-test-RealValue0123456789abcdefghijklmnopq"

static int lsn = -1;
static uint16_t up_port;
static SSL_CTX *up_ctx;
static char got[8192]; /* what the upstream received last (heads and bodies) */
static size_t got_len;
static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;

/* The upstream: per connection, requests one after another; /echo answers
 * with the head it got, /chunked the same in 5-byte chunks, /hdr reflects
 * Authorization in a response header. */
static void *upstream(void *arg)
{
    (void)arg;
    for (;;) {
        int c = accept(lsn, NULL, NULL);
        if (c < 0)
            return NULL;
        SSL *s = SSL_new(up_ctx);
        SSL_set_fd(s, c);
        if (SSL_accept(s) == 1) {
            char buf[8192];
            size_t have = 0;
            for (;;) {
                int n = SSL_read(s, buf + have, (int)(sizeof(buf) - 1 - have));
                if (n <= 0)
                    break;
                have += (size_t)n;
                buf[have] = 0;
                char *end = strstr(buf, "\r\n\r\n");
                if (!end)
                    continue;
                size_t hl = (size_t)(end + 4 - buf);
                char *cl = strcasestr(buf, "Content-Length: ");
                size_t body = cl && cl < end ? (size_t)atoi(cl + 16) : 0;
                if (have < hl + body)
                    continue;
                pthread_mutex_lock(&got_lock);
                memcpy(got, buf, hl + body);
                got_len = hl + body;
                pthread_mutex_unlock(&got_lock);
                char out[16384];
                int on;
                if (!strncmp(buf, "GET /chunked", 12)) {
                    on = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
                    for (size_t i = 0; i < hl; i += 5) {
                        size_t k = hl - i < 5 ? hl - i : 5;
                        on += snprintf(out + on, sizeof(out) - (size_t)on, "%zx\r\n%.*s\r\n", k, (int)k, buf + i);
                    }
                    on += snprintf(out + on, sizeof(out) - (size_t)on, "0\r\n\r\n");
                } else if (!strncmp(buf, "GET /hdr", 8)) {
                    char *a = strcasestr(buf, "Authorization: ");
                    int al = a ? (int)strcspn(a + 15, "\r") : 0;
                    on = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nX-Echo: %.*s\r\nContent-Length: 2\r\n\r\nok",
                                  al, a ? a + 15 : "");
                } else {
                    on = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%.*s",
                                  hl, (int)hl, buf);
                }
                SSL_write(s, out, on);
                memmove(buf, buf + hl + body, have - hl - body);
                have -= hl + body;
            }
        }
        SSL_free(s);
        close(c);
    }
}

static struct egress_policy pol;
static struct secret_set set;
static struct egress_broker_creds creds;
static int ctl = -1;
static char ca_path[] = "/tmp/airlock-upca-XXXXXX";
static struct cred_ca up_ca;
static pthread_t up_thread;

static void setup(void)
{
    char err[512];
    /* The upstream's CA and certificate for 127.0.0.1, the file the broker trusts. */
    const char *hosts[] = {"127.0.0.1"};
    ck_assert_int_eq(cred_ca_make(&up_ca, hosts, 1, "0000000000000000", err, sizeof(err)), 0);
    up_ctx = cred_ca_server_ctx(&up_ca, "127.0.0.1", err, sizeof(err));
    ck_assert_ptr_nonnull(up_ctx);
    strcpy(ca_path, "/tmp/airlock-upca-XXXXXX");
    int fd = mkstemp(ca_path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, up_ca.pem, up_ca.pem_len), (ssize_t)up_ca.pem_len);
    close(fd);
    lsn = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    ck_assert_int_eq(bind(lsn, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(listen(lsn, 16), 0);
    getsockname(lsn, (struct sockaddr *)&sa, &sl);
    up_port = ntohs(sa.sin_port);

    char spec[200];
    memset(&set, 0, sizeof(set));
    memset(&pol, 0, sizeof(pol));
    setenv("AIRLOCK_TEST_CRED", VALUE, 1);
    snprintf(spec, sizeof(spec), "K=env:AIRLOCK_TEST_CRED,host=127.0.0.1:%u,paths=/echo,/chunked,/hdr", up_port);
    ck_assert_int_eq(secret_parse(&set, spec, err, sizeof(err)), 0);
    ck_assert_int_eq(secret_load_all(&set, err, sizeof(err)), 0);
    snprintf(spec, sizeof(spec), "127.0.0.1:%u", up_port);
    ck_assert_int_eq(egress_policy_add_cidr(&pol, spec, err, sizeof(err)), 0);
    static struct audit au = {.fd = -1};
    creds = (struct egress_broker_creds){.secrets = &set, .ca_file = ca_path, .audit = &au};
    /* The broker is forked while this test has no thread of its own (a
     * fork with a thread inside malloc would copy a held lock). */
    ck_assert_int_eq(egress_broker_start(&pol, &creds, -1, &ctl), 0);
    pthread_create(&up_thread, NULL, upstream, NULL);
    secret_wipe(&set);
    ck_assert_uint_gt(creds.ca_pem_len, 100);
}

static void teardown(void)
{
    close(ctl);
    while (waitpid(-1, NULL, 0) > 0)
        ;
    shutdown(lsn, SHUT_RDWR);
    close(lsn);
    pthread_join(up_thread, NULL);
    SSL_CTX_free(up_ctx);
    cred_ca_free(&up_ca);
    unlink(ca_path);
}

/* A TLS client on the broker's socket, trusting only the VM's CA. */
static SSL *guest_connect(SSL_CTX **ctxp)
{
    struct egress_verdict v;
    int fd;
    ck_assert_int_eq(egress_broker_connect(ctl, "127.0.0.1", up_port, true, 7, &v, &fd), 0);
    ck_assert_msg(v.status == 200, "broker: %d %s", v.status, v.reason);
    ck_assert(v.credential);
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    BIO *b = BIO_new_mem_buf(creds.ca_pem, (int)creds.ca_pem_len);
    X509 *ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
    BIO_free(b);
    ck_assert_ptr_nonnull(ca);
    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca);
    X509_free(ca);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL *s = SSL_new(ctx);
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), "127.0.0.1");
    SSL_set_fd(s, fd);
    ck_assert_msg(SSL_connect(s) == 1, "handshake: %s", ERR_reason_error_string(ERR_get_error()));
    *ctxp = ctx;
    return s;
}

static void guest_close(SSL *s, SSL_CTX *ctx)
{
    int fd = SSL_get_fd(s);
    SSL_free(s);
    SSL_CTX_free(ctx);
    close(fd);
}

/* Sends a request and reads one response (up to cap) until the
 * connection has nothing more within a short while. */
static size_t exchange(SSL *s, const char *req, char *out, size_t cap)
{
    ck_assert_int_eq(SSL_write(s, req, (int)strlen(req)), (int)strlen(req));
    size_t have = 0;
    struct timeval tv = {.tv_sec = 2};
    setsockopt(SSL_get_fd(s), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    for (;;) {
        int n = SSL_read(s, out + have, (int)(cap - 1 - have));
        if (n <= 0)
            break;
        have += (size_t)n;
        out[have] = 0;
        char *end = strstr(out, "\r\n\r\n");
        if (end && (strstr(out, "\r\n0\r\n\r\n") ||
                    (strcasestr(out, "Content-Length: ") &&
                     have >= (size_t)(end + 4 - out) + (size_t)atoi(strcasestr(out, "Content-Length: ") + 16))))
            break;
    }
    out[have] = 0;
    return have;
}

START_TEST(injects_and_scrubs)
{
    setup();
    SSL_CTX *ctx;
    SSL *s = guest_connect(&ctx);
    const char *ph = set.s[0].placeholder;
    char req[8192], out[16384];
    /* echo: the upstream gets the value, the guest the placeholder */
    snprintf(req, sizeof(req), "GET /echo HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAuthorization: Bearer %s\r\n\r\n",
             up_port, ph);
    exchange(s, req, out, sizeof(out));
    ck_assert_msg(strstr(out, "200 OK"), "%s", out);
    pthread_mutex_lock(&got_lock);
    ck_assert_msg(memmem(got, got_len, "Authorization: Bearer " VALUE, 22 + strlen(VALUE)), "%.*s", (int)got_len, got);
    ck_assert(memmem(got, got_len, "Accept-Encoding: identity", 25));
    pthread_mutex_unlock(&got_lock);
    ck_assert(!strstr(out, VALUE));
    ck_assert(strstr(out, ph));
    /* the same connection: chunked echo, a header echo */
    snprintf(req, sizeof(req), "GET /chunked HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAuthorization: Bearer %s\r\n\r\n",
             up_port, ph);
    exchange(s, req, out, sizeof(out));
    ck_assert_msg(strstr(out, "Transfer-Encoding: chunked"), "%s", out);
    ck_assert(!strstr(out, VALUE));
    snprintf(req, sizeof(req), "GET /hdr HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAuthorization: Bearer %s\r\n\r\n",
             up_port, ph);
    exchange(s, req, out, sizeof(out));
    ck_assert_msg(strstr(out, "X-Echo: Bearer "), "%s", out);
    ck_assert(!strstr(out, VALUE));
    ck_assert(strstr(out, ph));
    guest_close(s, ctx);
    teardown();
}
END_TEST

START_TEST(refuses)
{
    setup();
    SSL_CTX *ctx;
    SSL *s = guest_connect(&ctx);
    const char *ph = set.s[0].placeholder;
    char req[8192], out[4096];
    pthread_mutex_lock(&got_lock);
    got_len = 0;
    pthread_mutex_unlock(&got_lock);
    snprintf(req, sizeof(req), "GET /admin HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAuthorization: Bearer %s\r\n\r\n",
             up_port, ph);
    exchange(s, req, out, sizeof(out));
    ck_assert_msg(strstr(out, "403"), "%s", out);
    ck_assert(strstr(out, "outside its methods or paths"));
    guest_close(s, ctx);
    s = guest_connect(&ctx);
    snprintf(req, sizeof(req), "POST /echo HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Length: %zu\r\n\r\nk=%s",
             up_port, strlen(ph) + 2, ph);
    exchange(s, req, out, sizeof(out));
    ck_assert_msg(strstr(out, "403") && strstr(out, "request body"), "%s", out);
    guest_close(s, ctx);
    usleep(100000);
    pthread_mutex_lock(&got_lock);
    ck_assert_msg(got_len == 0, "the upstream got: %.*s", (int)got_len, got);
    pthread_mutex_unlock(&got_lock);
    teardown();
}
END_TEST

Suite *credential_proxy_suite(void)
{
    Suite *s = suite_create("credential_proxy");
    TCase *t = tcase_create("credential_proxy");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, injects_and_scrubs);
    tcase_add_test(t, refuses);
    suite_add_tcase(s, t);
    return s;
}
