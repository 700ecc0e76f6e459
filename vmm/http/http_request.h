/* The head of an HTTP proxy request, as a guest's proxy client sends it
 * (http_proxy / https_proxy inside the VM; the agent forwards the raw bytes
 * of each proxy connection over vsock).  Every byte is hostile: the parser
 * is pure (no I/O), never reads past `len`, never needs a NUL terminator,
 * and accepts one strict form so that what airlock decides on is exactly
 * what the origin server will see.
 *
 * Two forms (RFC 9112 3.2):
 *   CONNECT host:port HTTP/1.x          authority-form; after a 2xx answer
 *                                       the bytes that follow are tunnelled
 *   METHOD http://host[:port]/p?q HTTP/1.x   absolute-form; rewritten to
 *                                       origin-form for the origin server
 *
 * Decisions (each stricter than RFC 9112 allows, never looser):
 *   - Lines end in CRLF only.  A bare LF or bare CR anywhere in the head is
 *     malformed: parsers that disagree on line ends are how requests get
 *     smuggled, and every real client sends CRLF.
 *   - One SP between the request line's three parts; no leading empty line.
 *   - Host names are letters, digits, '-', '_' and '.' with no empty label
 *     (no percent-encoding, no trailing dot), lower-cased, so the policy
 *     compares one spelling of each name; IPv6 literals are stored
 *     canonical (inet_ntop) and without brackets.
 *   - Forwarded requests are one per connection: the rewritten head carries
 *     "Connection: close" and drops the client's Connection,
 *     Proxy-Connection and Proxy-Authorization, so the origin closes after
 *     one response and airlock's per-request policy decision covers
 *     everything that connection carries.  The client's Host header is
 *     replaced by the URI's authority (RFC 9112 3.2.2: a proxy MUST), so a
 *     guest cannot ask an allowed origin's address for another virtual host.
 *     Every other header line, and the body, pass through unchanged and
 *     in order.  The body is what Content-Length says (none: no body,
 *     RFC 9112 6.3); bytes after it (a pipelined second request, maybe
 *     for another host) are never relayed, since no policy decision
 *     covers them: the client sees the connection close after the first
 *     response and asks again on a new one.  A forwarded request with
 *     Transfer-Encoding gets 411: a chunked body's end cannot be found
 *     without decoding it, and clients send Content-Length when asked.
 *
 * Results of http_request_parse:
 *    1    a complete head was parsed into *req
 *    0    more bytes are needed (no CRLFCRLF yet and len < HTTP_HEAD_MAX)
 *   -400  malformed: bad line ends, NUL, control characters, bad token,
 *         obs-fold, header without ':' or with whitespace before it, bad or
 *         duplicate Host, userinfo, empty/overlong host, bad port,
 *         Content-Length with Transfer-Encoding, differing Content-Lengths,
 *         CONNECT target not authority-form
 *   -405  not a request a forward proxy serves: origin-form ("/path"),
 *         asterisk-form, https:// or any scheme other than http
 *   -411  a forwarded (not CONNECT) request with Transfer-Encoding
 *   -414  request-target longer than HTTP_TARGET_MAX
 *   -431  no end of head within HTTP_HEAD_MAX bytes
 *   -505  a well-formed HTTP version other than 1.0 or 1.1
 *   -500  out of memory (the guest did nothing wrong)
 * The result depends only on the head: feeding more bytes of the same
 * stream never changes a non-zero result. */
#ifndef AIRLOCK_EGRESS_HTTP_REQUEST_H
#define AIRLOCK_EGRESS_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX   8192 /* request line + headers + final CRLFCRLF */
#define HTTP_TARGET_MAX 4096 /* request-target, in bytes */
#define HTTP_HOST_MAX   253  /* a DNS name's longest text form */

enum http_req_kind { HTTP_REQ_CONNECT, HTTP_REQ_FORWARD };

struct http_request {
    enum http_req_kind kind;
    char method[16];                  /* an RFC 9110 token, NUL-terminated */
    char host[HTTP_HOST_MAX + 1];     /* lower-cased; IPv6 WITHOUT brackets */
    uint16_t port;                    /* never 0 */
    int http_minor;                   /* 0 or 1: HTTP/1.0 or HTTP/1.1 */
    size_t head_len;  /* bytes of the head in the input, incl. CRLFCRLF */
    /* HTTP_REQ_FORWARD only: the head rewritten for the origin server
     * (malloc'd, also NUL-terminated; NULL for CONNECT). */
    char *origin_head;
    size_t origin_head_len;
    uint64_t body_len; /* HTTP_REQ_FORWARD: body bytes after the head (Content-Length) */
};

/* Parses the first `len` bytes received so far on a proxy connection; see
 * the results above.  *req is zeroed first, so http_request_free is safe
 * after any result. */
int http_request_parse(const char *buf, size_t len, struct http_request *req);

/* ---- the sandbox API's requests (a server's view: origin-form) ----
 * The same rules as above (line ends, tokens, values, framing), with
 * these differences:
 *   - the request-target is origin-form only ("/v1/x?y", RFC 9112 3.2.1):
 *     anything else is -400; it is kept as sent, NUL-terminated;
 *   - Host may be anything a field value may be (clients on a Unix socket
 *     send "localhost" or an encoded socket path), but only once;
 *   - Transfer-Encoding is -411 (a relay that counts bodies by their
 *     Content-Length, the credential proxy's), unless the caller decodes
 *     chunked bodies (http_request_parse_server_ex, below: the API does);
 *   - Authorization is kept (for the TCP listener's bearer token), up to
 *     HTTP_AUTH_MAX bytes (longer: -431);
 *   - keep_alive: HTTP/1.1 without "Connection: close", or HTTP/1.0 with
 *     "Connection: keep-alive". */
#define HTTP_AUTH_MAX 4096 /* a credential broker value in its "Bearer " form: JWTs run to kilobytes */

struct http_server_request {
    char method[16];
    char target[HTTP_TARGET_MAX + 1];
    char authorization[HTTP_AUTH_MAX + 1]; /* "" when absent */
    int http_minor;
    bool keep_alive;
    size_t head_len;
    uint64_t body_len; /* Content-Length, 0 when absent */
    bool chunked;      /* HTTP_SERVER_CHUNKED: the body is chunked (body_len 0) */
};

/* As http_request_parse, for a request to the API: 1, 0 or -status. */
int http_request_parse_server(const char *buf, size_t len, struct http_server_request *req);
/* The same; with HTTP_SERVER_CHUNKED a body in chunked transfer coding
 * ("Transfer-Encoding: chunked" alone, on HTTP/1.1, without
 * Content-Length: anything else is still -400) is accepted and marked
 * `chunked`, for a caller that decodes it (http_chunked.h) and refuses it
 * where it does not. */
#define HTTP_SERVER_CHUNKED 0x1u
int http_request_parse_server_ex(const char *buf, size_t len, struct http_server_request *req,
                                 unsigned flags);

/* The value of header `name` (case-insensitive) in a head that
 * http_request_parse_server accepted, OWS trimmed, into out (cap bytes,
 * NUL-terminated).  1: found once; 0: absent; -1: sent more than once, or
 * longer than cap - 1 bytes (a caller that needs one value refuses both). */
int http_header_value(const char *head, size_t head_len, const char *name, char *out, size_t cap);

/* Releases origin_head; safe on a zeroed request and twice. */
void http_request_free(struct http_request *req);

/* Formats the proxy's own short answer into out (NUL-terminated) and
 * returns its length, or 0 when cap cannot hold even an empty body:
 *   2xx:  "HTTP/1.1 200 Connection established\r\n\r\n" (the CONNECT
 *         answer; RFC 9110 9.3.6 forbids Content-Length on it)
 *   else: "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n
 *          Content-Length: N\r\nConnection: close\r\n\r\n<reason>\n"
 * `reason` (NULL = the status phrase) may name guest-chosen hosts: its
 * control and non-ASCII bytes become '?' and it is cut to fit cap.
 * Statuses outside 100..599 become 500; callers may pass -parse_result. */
size_t http_response_format(char *out, size_t cap, int status, const char *reason);

#endif
