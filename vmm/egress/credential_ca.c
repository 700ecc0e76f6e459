/* The per-VM CA and its leaves; see credential_ca.h. */
#include "vmm/egress/credential_ca.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "vmm/egress/egress_policy.h"

static int ssl_fail(char *err, size_t cap, const char *what)
{
    unsigned long e = ERR_get_error();
    char buf[200] = "";
    if (e)
        ERR_error_string_n(e, buf, sizeof(buf));
    snprintf(err, cap, "%s: %s", what, buf[0] ? buf : "failed");
    ERR_clear_error();
    return -1;
}

static EVP_PKEY *new_key(void)
{
    return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ext)
        return -1;
    int ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok ? 0 : -1;
}

/* A random 159-bit serial, as RFC 5280 asks of a CA that cannot count. */
static int set_serial(X509 *cert)
{
    BIGNUM *bn = BN_new();
    int ok = bn && BN_rand(bn, 159, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
             BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
    BN_free(bn);
    return ok ? 0 : -1;
}

static X509 *new_cert(EVP_PKEY *pub, const char *cn)
{
    X509 *cert = X509_new();
    X509_NAME *name = cert ? X509_get_subject_name(cert) : NULL;
    if (!cert || !X509_set_version(cert, 2) || set_serial(cert) ||
        /* An hour back: a guest clock a little behind the host's still accepts it. */
        !X509_gmtime_adj(X509_getm_notBefore(cert), -3600) ||
        !X509_gmtime_adj(X509_getm_notAfter(cert), (long)CRED_CA_DAYS * 86400) ||
        !X509_set_pubkey(cert, pub) ||
        !X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"airlock", -1, -1, 0) ||
        !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0)) {
        X509_free(cert);
        return NULL;
    }
    return cert;
}

/* "DNS:name" or "IP:addr" for a host as struct secret keeps it. */
static void host_general_name(const char *host, const char *prefix_dns, const char *prefix_ip,
                              char *out, size_t cap)
{
    if (egress_host_is_ip(host)) {
        /* Name constraints want an address and a mask. */
        bool v6 = strchr(host, ':') != NULL;
        if (prefix_ip[0] == 'p') /* permitted;IP:addr/mask */
            snprintf(out, cap, "%s%s/%s", prefix_ip, host,
                     v6 ? "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" : "255.255.255.255");
        else
            snprintf(out, cap, "%s%s", prefix_ip, host);
    } else {
        snprintf(out, cap, "%s%s", prefix_dns, host);
    }
}

int cred_ca_make(struct cred_ca *ca, const char *const *hosts, unsigned n, const char *vm_id,
                 char *err, size_t errcap)
{
    memset(ca, 0, sizeof(*ca));
    char cn[64], constraints[4096] = "critical", item[400];
    snprintf(cn, sizeof(cn), "airlock VM %s credential CA", vm_id);
    for (unsigned i = 0; i < n; i++) {
        host_general_name(hosts[i], "permitted;DNS:", "permitted;IP:", item, sizeof(item));
        if (strlen(constraints) + strlen(item) + 2 >= sizeof(constraints))
            return snprintf(err, errcap, "too many credential hosts"), -1;
        strcat(constraints, ",");
        strcat(constraints, item);
    }
    if (!(ca->key = new_key()) || !(ca->leaf_key = new_key()))
        return ssl_fail(err, errcap, "a key for the credential CA");
    if (!(ca->cert = new_cert(ca->key, cn)) ||
        !X509_set_issuer_name(ca->cert, X509_get_subject_name(ca->cert)) ||
        add_ext(ca->cert, ca->cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
        add_ext(ca->cert, ca->cert, NID_key_usage, "critical,keyCertSign,cRLSign") ||
        add_ext(ca->cert, ca->cert, NID_subject_key_identifier, "hash") ||
        add_ext(ca->cert, ca->cert, NID_name_constraints, constraints) ||
        !X509_sign(ca->cert, ca->key, EVP_sha256()))
        return ssl_fail(err, errcap, "the credential CA's certificate");
    BIO *b = BIO_new(BIO_s_mem());
    char *data;
    long len;
    if (!b || !PEM_write_bio_X509(b, ca->cert) || (len = BIO_get_mem_data(b, &data)) <= 0 ||
        (size_t)len >= sizeof(ca->pem)) {
        BIO_free(b);
        return ssl_fail(err, errcap, "the credential CA's PEM");
    }
    memcpy(ca->pem, data, (size_t)len);
    ca->pem_len = (size_t)len;
    ca->pem[len] = '\0';
    BIO_free(b);
    return 0;
}

static X509 *make_leaf(struct cred_ca *ca, const char *host)
{
    char san[400];
    host_general_name(host, "DNS:", "IP:", san, sizeof(san));
    X509 *leaf = new_cert(ca->leaf_key, host);
    if (!leaf || !X509_set_issuer_name(leaf, X509_get_subject_name(ca->cert)) ||
        add_ext(leaf, ca->cert, NID_basic_constraints, "critical,CA:FALSE") ||
        add_ext(leaf, ca->cert, NID_key_usage, "critical,digitalSignature") ||
        add_ext(leaf, ca->cert, NID_ext_key_usage, "serverAuth") ||
        add_ext(leaf, ca->cert, NID_subject_alt_name, san) ||
        add_ext(leaf, ca->cert, NID_authority_key_identifier, "keyid:always") ||
        !X509_sign(leaf, ca->key, EVP_sha256())) {
        X509_free(leaf);
        return NULL;
    }
    return leaf;
}

/* http/1.1 or nothing: an HTTP/2 client is refused in the handshake
 * (no_application_protocol), where it says so, instead of speaking h2 to
 * a parser that reads HTTP/1.1. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned inlen, void *arg)
{
    (void)ssl;
    (void)arg;
    static const unsigned char h11[] = "\x08http/1.1";
    unsigned char *sel = NULL;
    if (SSL_select_next_proto(&sel, outlen, h11, sizeof(h11) - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

SSL_CTX *cred_ca_server_ctx(struct cred_ca *ca, const char *host, char *err, size_t errcap)
{
    X509 *leaf = make_leaf(ca, host);
    SSL_CTX *ctx = leaf ? SSL_CTX_new(TLS_server_method()) : NULL;
    if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
        SSL_CTX_use_certificate(ctx, leaf) != 1 || SSL_CTX_add1_chain_cert(ctx, ca->cert) != 1 ||
        SSL_CTX_use_PrivateKey(ctx, ca->leaf_key) != 1) {
        X509_free(leaf);
        SSL_CTX_free(ctx);
        ssl_fail(err, errcap, "the credential proxy's certificate");
        return NULL;
    }
    X509_free(leaf);
    SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
    /* No session tickets or cache: each connection is short-lived and
     * resumption state is one more thing to keep in the broker. */
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    return ctx;
}

void cred_ca_free(struct cred_ca *ca)
{
    EVP_PKEY_free(ca->key);
    EVP_PKEY_free(ca->leaf_key);
    X509_free(ca->cert);
    memset(ca, 0, sizeof(*ca));
}
