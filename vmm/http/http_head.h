/* Internal to http/: what every HTTP/1.1 message head and field line is
 * made of (RFC 9110 5, RFC 9112 2-5), shared by the request parser
 * (http_request.c), the response parser (http_response.c) and the chunked
 * decoder's trailers (http_chunked.c), so that all of them judge line
 * ends, tokens and field values by the one set of rules.  Everything here
 * is pure: spans point into the caller's buffer and nothing reads past
 * their length. */
#ifndef AIRLOCK_HTTP_HTTP_HEAD_H
#define AIRLOCK_HTTP_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The shared helpers' own verdicts; each parser maps them to its results. */
#define HTTP_HEAD_BAD       (-1) /* malformed */
#define HTTP_HEAD_TOO_LARGE (-2) /* no end of head within the cap */
#define HTTP_HEAD_VERSION   (-3) /* well-formed, but not HTTP/1.0 or 1.1 */

struct span {
    const char *p;
    size_t n;
};

/* tchar (RFC 9110 5.6.2), and a non-empty run of them. */
bool http_is_tchar(unsigned char c);
bool http_is_token(struct span s);

/* A byte a field value may hold: VCHAR, obs-text, SP and HTAB (RFC 9110
 * 5.5); every other control byte is refused rather than passed on. */
bool http_is_value_byte(unsigned char c);
bool http_value_ok(struct span v);

/* Case-insensitive equality with a NUL-terminated literal. */
bool http_span_is(struct span s, const char *lit);

/* Splits s at the first c (dropped); false when there is none. */
bool http_span_split(struct span s, char c, struct span *before, struct span *after);

struct span http_trim_ows(struct span s);

/* The next element of a comma-separated list (RFC 9110 5.6.1), OWS
 * trimmed, taken off the front of *list; false once the list is used up.
 * A list with p == NULL is absent and has no elements; "" has one, empty.
 * Empty elements are returned, not skipped, so that a caller that wants
 * exactly "chunked" refuses "chunked," and "identity" refuses "". */
bool http_list_next(struct span *list, struct span *item);

/* Whether the list names `item` (case-insensitive), e.g. Connection: close. */
bool http_list_has(struct span list, const char *item);

/* Finds the CRLFCRLF that ends a head within the first `max` bytes,
 * refusing NUL and bare CR or LF on the way.  1 with *head_len (including
 * the CRLFCRLF), 0 for more bytes needed, HTTP_HEAD_BAD or
 * HTTP_HEAD_TOO_LARGE.  Feeding a longer prefix of the same stream never
 * turns 0 or a verdict into another verdict. */
int http_head_end(const char *buf, size_t len, size_t max, size_t *head_len);

/* The request line of a complete head (as http_head_end found it), without
 * its CRLF. */
struct span http_first_line(const char *head, size_t head_len);

/* "HTTP/" DIGIT "." DIGIT (RFC 9112 2.3): 0 with *minor for 1.0 and 1.1,
 * HTTP_HEAD_VERSION for another well-formed version, else HTTP_HEAD_BAD. */
int http_version(struct span v, int *minor);

/* A Content-Length value: plain digits, at most 18 of them (no "5, 5"
 * lists, no sign, and the value always fits in 64 bits); a repeat must be
 * byte-identical to the one in *seen (n == 0: none yet), which it
 * replaces.  0 or HTTP_HEAD_BAD. */
int http_content_length(struct span value, struct span *seen);

/* The value of a span http_content_length accepted. */
uint64_t http_digits_value(struct span digits);

/* Walks the field lines of head[start, end), where `end` is the start of
 * the final empty line: each must be "name:value" with a token name, no
 * whitespace before the colon, no obs-fold (RFC 9112 5.2) and a value
 * http_value_ok accepts.  fn gets the whole line, the name and the value
 * with OWS trimmed; its non-zero result stops the walk and is returned.
 * HTTP_HEAD_BAD for a line that breaks the rules. */
typedef int (*http_field_fn)(void *arg, struct span line, struct span name, struct span value);
int http_fields(const char *head, size_t start, size_t end, http_field_fn fn, void *arg);

/* The same walk one line at a time: the line at *pos (without its CRLF),
 * its name and its trimmed value, *pos moved past the CRLF.  1, 0 at
 * `end`, or HTTP_HEAD_BAD. */
int http_field_next(const char *head, size_t end, size_t *pos, struct span *line,
                    struct span *name, struct span *value);

#endif
