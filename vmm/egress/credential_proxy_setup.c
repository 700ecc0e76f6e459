/* The credential path's set-up, before the broker's filter: the CA, a
 * server context per host, the upstream context with its CA bundle, the
 * scrub forms; see credential_proxy.h.  The connections
 * (credential_proxy.c) call cred_proxy_host here; nothing here calls
 * them. */
#include "vmm/egress/credential_proxy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include "vmm/util/base64.h"

/* The base64 forms of `v` and, in the same positions, of `ph` (equal
 * lengths): for each alignment of the value inside a longer encoded
 * stream, the characters that depend on the value's bytes alone. */
static int add_forms(struct cred_proxy *p, const struct secret *s)
{
    for (unsigned shift = 0; shift < 3; shift++) {
        size_t n = shift + s->len + 2;
        unsigned char *a = calloc(1, n), *b = calloc(1, n);
        if (!a || !b) {
            free(a);
            free(b);
            return -1;
        }
        memcpy(a + shift, s->value, s->len);
        memcpy(b + shift, s->placeholder, s->len);
        char *ea = base64_encode(a, n), *eb = base64_encode(b, n);
        explicit_bzero(a, n);
        free(a);
        free(b);
        if (!ea || !eb) {
            free(ea);
            free(eb);
            return -1;
        }
        /* Character j covers bits [6j, 6j + 6): inside the value when
         * 6j >= 8 shift and 6j + 6 <= 8 (shift + len). */
        size_t from = (8 * shift + 5) / 6, to = (8 * (shift + s->len)) / 6;
        size_t len = to - from;
        for (unsigned url = 0; url < 2; url++) {
            char *fa = p->forms + p->forms_len, *fb = fa + len;
            memcpy(fa, ea + from, len);
            memcpy(fb, eb + from, len);
            if (url) { /* the URL-safe alphabet (RFC 4648 5), when it differs */
                bool differs = false;
                for (size_t i = 0; i < 2 * len; i++) {
                    char *c = i < len ? &fa[i] : &fb[i - len];
                    if (*c == '+' || *c == '/') {
                        *c = *c == '+' ? '-' : '_';
                        differs = true;
                    }
                }
                if (!differs)
                    continue;
            }
            p->scrub[p->nscrub++] = (struct scrub_pattern){
                .find = (const unsigned char *)fa, .repl = (const unsigned char *)fb, .len = len};
            p->forms_len += 2 * len;
        }
        explicit_bzero(ea, strlen(ea));
        free(ea);
        free(eb);
    }
    return 0;
}

/* The guest asked for a name in SNI: it must be the one this context's
 * leaf is for (a guest that names another host is not talking to it). */
static int sni_check(SSL *ssl, int *alert, void *arg)
{
    const char *want = arg, *got = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    if (!got || !strcasecmp(got, want))
        return SSL_TLSEXT_ERR_OK;
    *alert = SSL_AD_UNRECOGNIZED_NAME;
    return SSL_TLSEXT_ERR_ALERT_FATAL;
}

static int client_ctx(struct cred_proxy *p, const char *ca_file, char *err, size_t errcap)
{
    const char *bundle = ca_file ? ca_file : X509_get_default_cert_file();
    p->client = SSL_CTX_new(TLS_client_method());
    if (!p->client || !SSL_CTX_set_min_proto_version(p->client, TLS1_2_VERSION)) {
        snprintf(err, errcap, "cannot make the upstream TLS context");
        return -1;
    }
    /* The whole bundle now: a hashed-directory lookup would open files
     * during verification, which the broker's filter forbids. */
    if (SSL_CTX_load_verify_file(p->client, bundle) != 1) {
        snprintf(err, errcap, "%s %s: cannot read it as PEM certificates",
                 ca_file ? "--ca-file" : "the host's CA bundle", bundle);
        ERR_clear_error();
        return -1;
    }
    SSL_CTX_set_verify(p->client, SSL_VERIFY_PEER, NULL);
    static const unsigned char h11[] = "\x08http/1.1";
    SSL_CTX_set_alpn_protos(p->client, h11, sizeof(h11) - 1);
    SSL_CTX_set_session_cache_mode(p->client, SSL_SESS_CACHE_OFF);
    return 0;
}

int cred_proxy_init(struct cred_proxy *p, struct secret_set *set, const char *ca_file,
                    const struct audit *audit, char *err, size_t errcap)
{
    memset(p, 0, sizeof(*p));
    p->set = set;
    p->audit = audit;
    const char *hosts[SECRET_MAX];
    for (unsigned i = 0; i < set->n; i++)
        hosts[i] = set->s[i].host;
    if (cred_ca_make(&p->ca, hosts, set->n, audit->vm_id, err, errcap))
        return -1;
    for (unsigned i = 0; i < set->n; i++) {
        int first = cred_proxy_host(p, set->s[i].host, set->s[i].port);
        if (first >= 0 && (unsigned)first < i) {
            p->server[i] = p->server[first];
            continue;
        }
        if (!(p->server[i] = cred_ca_server_ctx(&p->ca, set->s[i].host, err, errcap)))
            return -1;
        SSL_CTX_set_tlsext_servername_callback(p->server[i], sni_check);
        SSL_CTX_set_tlsext_servername_arg(p->server[i], set->s[i].host);
    }
    if (client_ctx(p, ca_file, err, errcap))
        return -1;
    size_t room = 0;
    for (unsigned i = 0; i < set->n; i++)
        room += 12 * (set->s[i].len + 4);
    p->forms = malloc(room + 1);
    if (!p->forms)
        return snprintf(err, errcap, "out of memory"), -1;
    for (unsigned i = 0; i < set->n; i++) {
        struct secret *s = &set->s[i];
        p->scrub[p->nscrub++] = (struct scrub_pattern){
            .find = (const unsigned char *)s->value, .repl = (const unsigned char *)s->placeholder,
            .len = s->len};
        p->detect[i] = (struct scrub_pattern){.find = (const unsigned char *)s->placeholder,
                                              .repl = NULL, .len = s->len};
        if (add_forms(p, s))
            return snprintf(err, errcap, "out of memory"), -1;
    }
    return 0;
}

int cred_proxy_host(const struct cred_proxy *p, const char *host, uint16_t port)
{
    for (unsigned i = 0; i < p->set->n; i++)
        if (p->set->s[i].port == port && !strcmp(p->set->s[i].host, host))
            return (int)i;
    return -1;
}
