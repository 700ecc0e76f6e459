/* The certificate authority the credential broker makes for one VM: a
 * fresh P-256 key and a self-signed CA certificate whose name constraints
 * admit only the secrets' hosts, so even a guest that trusts it trusts it
 * for nothing else.  The key lives in the broker's memory only (never on
 * disk, never in the guest); the certificate (PEM) goes to the guest's
 * trust store.  For each host a leaf certificate signed by it serves the
 * guest's TLS (OpenSSL 3). */
#ifndef AIRLOCK_EGRESS_CREDENTIAL_CA_H
#define AIRLOCK_EGRESS_CREDENTIAL_CA_H

#include <stddef.h>

#include <openssl/ssl.h>

#define CRED_CA_PEM_MAX 16384
#define CRED_CA_DAYS    30 /* validity; a VM that lives longer gets no new leaves */

struct cred_ca {
    EVP_PKEY *key;      /* the CA's */
    X509 *cert;
    EVP_PKEY *leaf_key; /* one key for every leaf of this VM */
    char pem[CRED_CA_PEM_MAX];
    size_t pem_len;
};

/* Makes the CA for `hosts` (names or address literals, as struct secret
 * keeps them; duplicates are fine).  0, or -1 with OpenSSL's reason in err. */
int cred_ca_make(struct cred_ca *ca, const char *const *hosts, unsigned n, const char *vm_id,
                 char *err, size_t errcap);

/* A server context presenting a fresh leaf for `host` (TLS 1.2 and 1.3,
 * ALPN http/1.1 only).  NULL with err on failure. */
SSL_CTX *cred_ca_server_ctx(struct cred_ca *ca, const char *host, char *err, size_t errcap);

void cred_ca_free(struct cred_ca *ca);

#endif
