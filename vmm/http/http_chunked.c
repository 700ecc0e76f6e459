/* The chunked body decoder (see http_chunked.h).  A byte-at-a-time state
 * machine for the framing, and whole spans for the data: the size line is
 * gathered (bounded) and judged in one piece once its CRLF is in; trailer
 * lines are judged byte by byte, since they are dropped anyway. */
#include "vmm/http/http_chunked.h"

#include <string.h>

#include "vmm/http/http_head.h"

enum {
    S_SIZE_LINE, /* gathering a chunk-size line into c->line */
    S_SIZE_LF,   /* its CR seen */
    S_DATA,      /* c->remaining data bytes to go */
    S_DATA_CR,   /* the CRLF after the data */
    S_DATA_LF,
    S_TR_START,  /* a trailer line, or the CR of the final CRLF */
    S_TR_NAME,
    S_TR_VALUE,
    S_TR_LF,
    S_END_LF,    /* the LF of the final CRLF */
    S_DONE,
    S_BAD,
};

static bool is_hex(char ch, unsigned *v)
{
    if (ch >= '0' && ch <= '9')
        *v = (unsigned)(ch - '0');
    else if (ch >= 'a' && ch <= 'f')
        *v = (unsigned)(ch - 'a' + 10);
    else if (ch >= 'A' && ch <= 'F')
        *v = (unsigned)(ch - 'A' + 10);
    else
        return false;
    return true;
}

static size_t skip_bws(struct span s, size_t i)
{
    while (i < s.n && (s.p[i] == ' ' || s.p[i] == '\t'))
        i++;
    return i;
}

static size_t skip_token(struct span s, size_t i)
{
    while (i < s.n && http_is_tchar((unsigned char)s.p[i]))
        i++;
    return i;
}

/* A quoted-string (RFC 9110 5.6.4) starting at s.p[i] == '"': the index
 * after its closing quote, or 0 when it is not one. */
static size_t skip_quoted(struct span s, size_t i)
{
    for (i++; i < s.n; i++) {
        unsigned char ch = (unsigned char)s.p[i];
        if (ch == '"')
            return i + 1;
        if (ch == '\\' && ++i == s.n)
            return 0;
        if (!http_is_value_byte((unsigned char)s.p[i]))
            return 0;
    }
    return 0;
}

/* chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] )
 * from s.p[i] to the end; whitespace is allowed only where BWS stands. */
static bool chunk_ext_ok(struct span s, size_t i)
{
    while (i < s.n) {
        i = skip_bws(s, i);
        if (i == s.n || s.p[i] != ';')
            return false;
        size_t name = skip_bws(s, i + 1);
        i = skip_token(s, name);
        if (i == name)
            return false;
        size_t eq = skip_bws(s, i);
        if (eq == s.n || s.p[eq] != '=')
            continue; /* no value: the BWS must lead to the next ';' */
        size_t val = skip_bws(s, eq + 1);
        i = val < s.n && s.p[val] == '"' ? skip_quoted(s, val) : skip_token(s, val);
        if (i <= val)
            return false;
    }
    return true;
}

/* chunk-size [ chunk-ext ]: 1 to 16 hex digits, so no overflow. */
static bool parse_size_line(struct span s, uint64_t *size)
{
    uint64_t v = 0;
    size_t i = 0;
    unsigned d;
    for (; i < s.n && is_hex(s.p[i], &d); i++) {
        if (i == 16)
            return false;
        v = v << 4 | d;
    }
    if (i == 0 || !chunk_ext_ok(s, i))
        return false;
    *size = v;
    return true;
}

void http_chunked_init(struct http_chunked *c)
{
    memset(c, 0, sizeof(*c));
    c->state = S_SIZE_LINE;
}

/* One framing byte (any state but S_DATA, S_DONE, S_BAD): the next state. */
static int step(struct http_chunked *c, char ch)
{
    unsigned char u = (unsigned char)ch;
    if (c->state >= S_TR_START && ++c->trailer_len > HTTP_CHUNKED_TRAILER_MAX)
        return S_BAD;
    switch (c->state) {
    case S_SIZE_LINE:
        if (ch == '\r')
            return S_SIZE_LF;
        if (c->line_len == HTTP_CHUNKED_LINE_MAX)
            return S_BAD;
        c->line[c->line_len++] = ch;
        return S_SIZE_LINE;
    case S_SIZE_LF:
        if (ch != '\n' || !parse_size_line((struct span){c->line, c->line_len}, &c->remaining))
            return S_BAD;
        c->line_len = 0;
        return c->remaining ? S_DATA : S_TR_START;
    case S_DATA_CR:
        return ch == '\r' ? S_DATA_LF : S_BAD;
    case S_DATA_LF:
        return ch == '\n' ? S_SIZE_LINE : S_BAD;
    case S_TR_START:
        if (ch == '\r')
            return S_END_LF;
        c->trailers = true;
        return http_is_tchar(u) ? S_TR_NAME : S_BAD; /* SP here would be obs-fold */
    case S_TR_NAME:
        return ch == ':' ? S_TR_VALUE : http_is_tchar(u) ? S_TR_NAME : S_BAD;
    case S_TR_VALUE:
        return ch == '\r' ? S_TR_LF : http_is_value_byte(u) ? S_TR_VALUE : S_BAD;
    case S_TR_LF:
        return ch == '\n' ? S_TR_START : S_BAD;
    case S_END_LF:
        return ch == '\n' ? S_DONE : S_BAD;
    }
    return S_BAD;
}

int http_chunked_feed(struct http_chunked *c, const char *in, size_t len, size_t *consumed,
                      const char **data, size_t *data_len)
{
    size_t i = 0;
    *data = NULL;
    *data_len = 0;
    while (i < len && c->state != S_DONE && c->state != S_BAD) {
        if (c->state == S_DATA) {
            size_t take = len - i < c->remaining ? len - i : (size_t)c->remaining;
            *data = in + i;
            *data_len = take;
            i += take;
            c->remaining -= take;
            if (!c->remaining)
                c->state = S_DATA_CR;
            break; /* one span per call */
        }
        c->state = step(c, in[i]);
        if (c->state != S_BAD)
            i++;
    }
    *consumed = i;
    return c->state == S_DONE ? HTTP_CHUNKED_DONE
         : c->state == S_BAD  ? HTTP_CHUNKED_BAD
                              : HTTP_CHUNKED_OK;
}

size_t http_chunk_header(char out[HTTP_CHUNK_HEADER_MAX], size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t digits = 0;
    if (n == 0)
        return 0;
    for (size_t v = n; v; v >>= 4)
        digits++;
    for (size_t i = 0; i < digits; i++)
        out[digits - 1 - i] = hex[(n >> (4 * i)) & 0xf];
    out[digits] = '\r';
    out[digits + 1] = '\n';
    return digits + 2;
}
