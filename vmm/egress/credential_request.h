/* The judgement of one decrypted request head on a credential connection
 * (a guest's HTTPS connection to a host that has a secret, terminated by
 * the broker).  Pure: no I/O, the same head always gets the same answer,
 * fuzzed (tests/fuzz/fuzz_credential_request.c).
 *
 * The head must pass the strict origin-form parser the sandbox API uses
 * (vmm/http/http_request.h, http_request_parse_server: CRLF only, tokens,
 * one Host, Content-Length framing only).  Then, in this order:
 *   - "PRI * HTTP/2.0" (an HTTP/2 client with prior knowledge): 505;
 *   - Host must name the host (and port) the connection was opened for:
 *     another one is 403 (a server at the same address could route it to
 *     another virtual host);
 *   - Upgrade (WebSocket, h2c) is 403: after it the bytes are no longer
 *     requests the broker can judge;
 *   - a placeholder anywhere it is not replaced (the URL, another header,
 *     the secret's header in another form, a host without that secret) is
 *     403: nothing a well-behaved client sends, and the signal worth
 *     alerting on;
 *   - the secret's header holding exactly its format with the placeholder
 *     is replaced by the real value when method and path are in the
 *     secret's scope, else 403.
 * A request without any placeholder passes unchanged except for one
 * header: Accept-Encoding becomes "identity" on every request of a
 * credential connection, so responses arrive uncompressed and the
 * scrubber can see a reflected secret in them.  The body is not looked at
 * here (the caller streams it through a placeholder detector). */
#ifndef AIRLOCK_EGRESS_CREDENTIAL_REQUEST_H
#define AIRLOCK_EGRESS_CREDENTIAL_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/egress/secret.h"
#include "vmm/http/http_request.h"

struct cred_request {
    int status;               /* 0: forward out_head; else answer this status */
    char reason[256];         /* why not (status != 0), for the guest and the audit */
    uint32_t injected;        /* bit i: set->s[i]'s value went into out_head */
    int secret;               /* the secret a refusal is about, or the first injected; -1 */
    char method[16];
    char target[HTTP_TARGET_MAX + 1];
    bool keep_alive;
    size_t head_len;          /* bytes of the guest's head */
    uint64_t body_len;        /* Content-Length */
    char *out_head;           /* malloc'd head for the upstream (status 0) */
    size_t out_len;
};

/* Judges the first len bytes of a request on a connection to host:port:
 * 0 when more bytes are needed, 1 with *r filled (r->status says what to
 * do).  set holds the VM's secrets; values are needed only for injection
 * (a secret whose value is NULL is never injected: status 500). */
int cred_request_judge(const char *buf, size_t len, const struct secret_set *set,
                       const char *host, uint16_t port, struct cred_request *r);

/* Frees out_head; safe twice. */
void cred_request_free(struct cred_request *r);

#endif
