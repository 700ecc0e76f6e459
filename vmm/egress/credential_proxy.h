/* The credential path of the egress broker: for a CONNECT to a host that
 * has a secret, the broker does not hand the VM process the upstream
 * socket.  It hands it one end of a socketpair and serves the other on a
 * thread of its own: TLS towards the guest with a leaf of the VM's CA
 * (vmm/egress/credential_ca.h), real TLS towards the upstream (verified
 * against the host's CA bundle or --ca-file, SNI and name checked), and
 * between them HTTP/1.1 requests judged one at a time
 * (vmm/egress/credential_request.h), the secret's header filled in, bodies
 * searched for placeholders, and responses scrubbed of the value (and its
 * base64 forms) before they reach the guest.  The VM process relays only
 * ciphertext and never holds a value.
 *
 * Every use of a secret is a "credential" audit record (never the value);
 * so is every refusal, with its reason.  Redirects are the guest's to
 * follow: each request is judged on its own. */
#ifndef AIRLOCK_EGRESS_CREDENTIAL_PROXY_H
#define AIRLOCK_EGRESS_CREDENTIAL_PROXY_H

#include <stdint.h>

#include <openssl/ssl.h>

#include "vmm/audit/audit.h"
#include "vmm/egress/credential_ca.h"
#include "vmm/egress/secret.h"
#include "vmm/util/scrub.h"

#define CRED_IDLE_MS 300000 /* a connection with no bytes either way for this long ends */
/* Forms of a value scrubbed from responses: itself, and its base64 at the
 * three byte alignments, standard and URL-safe alphabets. */
#define CRED_FORMS 7

struct cred_proxy {
    struct secret_set *set;           /* values present: this is the broker */
    struct cred_ca ca;
    SSL_CTX *server[SECRET_MAX];      /* by secret; secrets of one host share one */
    SSL_CTX *client;                  /* upstream: verification store loaded up front */
    const struct audit *audit;
    struct scrub_pattern scrub[SECRET_MAX * CRED_FORMS];
    unsigned nscrub;
    struct scrub_pattern detect[SECRET_MAX]; /* placeholders, counted not replaced */
    char *forms;                      /* storage of the base64 forms (wiped at free) */
    size_t forms_len;
};

/* Everything before the broker's seccomp filter: the CA, a server context
 * per host, the upstream context with its CA bundle read now (ca_file, or
 * OpenSSL's default bundle file: no file is opened later), the scrub
 * forms.  0, or -1 with err. */
int cred_proxy_init(struct cred_proxy *p, struct secret_set *set, const char *ca_file,
                    const struct audit *audit, char *err, size_t errcap);

/* The index of a secret for host:port, or -1 (a plain tunnel). */
int cred_proxy_host(const struct cred_proxy *p, const char *host, uint16_t port);

/* Serves one connection on a detached thread; takes guest (the broker's
 * end of the pair the VM process relays to) and upstream (connected TCP).
 * conn is the VM side's connection id, for the audit.  0 or -errno (the
 * fds are closed then too). */
int cred_proxy_start(struct cred_proxy *p, const char *host, uint16_t port, uint64_t conn,
                     int guest, int upstream);

#endif
