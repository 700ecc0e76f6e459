/* The upstream response head parser (see http_response.h for the accepted
 * form).  http_head_end finds the end of the head and rejects NUL and bare
 * CR/LF; then the status line and each field line are checked in order,
 * and the framing lines are judged together once all are seen. */
#include "vmm/http/http_response.h"

#include <string.h>

#include "vmm/http/http_head.h"

#define E_BAD       (-1)
#define E_TOO_LARGE (-2)

/* What the field lines said, judged by framing_check. */
struct seen {
    struct span content_length; /* n == 0: none */
    unsigned te_lines, te_codings;
    bool te_other;              /* a coding other than "chunked" */
    bool close, keep_alive, encoded, upgrade;
};

/* "HTTP/1.x SP 3DIGIT SP reason" (RFC 9112 4).  The reason is free text
 * nobody acts on, but its bytes still follow the field-value rules. */
static int parse_status_line(struct span line, struct http_response *r)
{
    struct span version, rest;
    if (!http_span_split(line, ' ', &version, &rest) || http_version(version, &r->http_minor))
        return E_BAD;
    if (rest.n < 4 || rest.p[3] != ' ' || !http_value_ok(rest))
        return E_BAD;
    int status = 0;
    for (int i = 0; i < 3; i++) {
        if (rest.p[i] < '0' || rest.p[i] > '9')
            return E_BAD;
        status = status * 10 + (rest.p[i] - '0');
    }
    if (status < 100 || status > 599)
        return E_BAD;
    r->status = status;
    return 0;
}

static void note_codings(struct span value, struct seen *s)
{
    struct span coding;
    s->te_lines++;
    while (http_list_next(&value, &coding)) {
        s->te_codings++;
        if (!http_span_is(coding, "chunked"))
            s->te_other = true;
    }
}

/* Only "identity" (RFC 9110 8.4.1) leaves the bytes as they are. */
static bool names_a_coding(struct span value)
{
    struct span coding;
    while (http_list_next(&value, &coding))
        if (!http_span_is(coding, "identity"))
            return true;
    return false;
}

static int on_field(void *arg, struct span line, struct span name, struct span value)
{
    struct seen *s = arg;
    (void)line;
    if (http_span_is(name, "Content-Length"))
        return http_content_length(value, &s->content_length) ? E_BAD : 0;
    if (http_span_is(name, "Transfer-Encoding")) {
        note_codings(value, s);
    } else if (http_span_is(name, "Connection")) {
        /* Every Connection line counts: one saying close is enough. */
        s->close |= http_list_has(value, "close");
        s->keep_alive |= http_list_has(value, "keep-alive");
    } else if (http_span_is(name, "Content-Encoding")) {
        s->encoded |= names_a_coding(value);
    } else if (http_span_is(name, "Upgrade")) {
        s->upgrade = true;
    }
    return 0;
}

/* RFC 9112 6.1 and 6.3: Transfer-Encoding with Content-Length is how
 * responses get smuggled (the RFC lets a recipient drop Content-Length;
 * we refuse the message), HTTP/1.0 has no Transfer-Encoding, and the only
 * coding we read is a single "chunked". */
static int framing_check(const struct seen *s, struct http_response *r)
{
    if (s->te_lines) {
        if (s->content_length.n || r->http_minor == 0 || s->te_other || s->te_codings != 1)
            return E_BAD;
        r->chunked = true;
    }
    if (s->content_length.n) {
        r->has_content_length = true;
        r->content_length = http_digits_value(s->content_length);
    }
    r->connection_close = s->close || (r->http_minor == 0 && !s->keep_alive);
    r->content_encoding_identity = !s->encoded;
    r->upgrade = s->upgrade;
    return 0;
}

int http_response_parse(const char *buf, size_t len, struct http_response *r)
{
    size_t head_len = 0;
    struct seen s = {0};

    memset(r, 0, sizeof(*r));
    int rc = http_head_end(buf, len, HTTP_RESPONSE_HEAD_MAX, &head_len);
    if (rc != 1)
        return rc == HTTP_HEAD_TOO_LARGE ? E_TOO_LARGE : rc == 0 ? 0 : E_BAD;
    struct span line = http_first_line(buf, head_len);
    rc = parse_status_line(line, r);
    /* The status line's CRLF is at most the first half of the final
     * CRLFCRLF, so the field lines (maybe none) lie between the two. */
    if (!rc)
        rc = http_fields(buf, line.n + 2, head_len - 2, on_field, &s) ? E_BAD : 0;
    if (!rc)
        rc = framing_check(&s, r);
    if (rc) {
        memset(r, 0, sizeof(*r));
        return rc;
    }
    r->head_len = head_len;
    return 1;
}

enum http_body_kind http_response_body(const struct http_response *r, bool head_request)
{
    if (head_request || r->status < 200 || r->status == 204 || r->status == 304)
        return HTTP_BODY_NONE;
    if (r->chunked)
        return HTTP_BODY_CHUNKED;
    if (r->has_content_length)
        return HTTP_BODY_LENGTH;
    return HTTP_BODY_UNTIL_CLOSE;
}
