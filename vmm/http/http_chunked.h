/* A streaming decoder for a chunked body (RFC 9112 7.1), from an upstream
 * server or from the guest: the bytes arrive in whatever pieces the
 * network made, and every byte is hostile.  Pure (no I/O, no allocation),
 * never reads past `len`; the body's data is handed back as spans of the
 * caller's input, never copied.
 *
 *   chunked-body = *( chunk-size [ chunk-ext ] CRLF chunk-data CRLF )
 *                  1*"0" [ chunk-ext ] CRLF  *( field-line CRLF )  CRLF
 *
 * Stricter than the RFC, never looser:
 *   - a chunk size is 1 to 16 hex digits (no sign, no "0x", no
 *     whitespace before it), so it always fits in 64 bits; what a size
 *     may add up to is the caller's limit, not ours;
 *   - chunk extensions are checked against their grammar (BWS ";" BWS
 *     token [BWS "=" BWS (token / quoted-string)]) and dropped, the whole
 *     size line being at most HTTP_CHUNKED_LINE_MAX bytes;
 *   - CRLF only, and exactly CRLF right after each chunk's data;
 *   - trailer field lines follow the head's rules (token name, value bytes,
 *     no obs-fold) and are dropped: at most HTTP_CHUNKED_TRAILER_MAX bytes
 *     from the end of the last-chunk line to the end of the body.  A relay
 *     that re-encodes the body sends no trailers (a trailer the upstream
 *     chose could carry anything).
 *
 * Use: http_chunked_init, then http_chunked_feed on each piece until it
 * returns HTTP_CHUNKED_DONE (bytes after *consumed belong to the next
 * message) or HTTP_CHUNKED_BAD (then the connection is unusable). */
#ifndef AIRLOCK_HTTP_HTTP_CHUNKED_H
#define AIRLOCK_HTTP_HTTP_CHUNKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_CHUNKED_LINE_MAX    1024 /* a chunk-size line with its extensions, without CRLF */
#define HTTP_CHUNKED_TRAILER_MAX 8192 /* the trailer section incl. the final CRLF */

#define HTTP_CHUNKED_OK   0  /* go on: feed what is left, or more */
#define HTTP_CHUNKED_DONE 1  /* the body ended (once, and again on any later feed) */
#define HTTP_CHUNKED_BAD  (-1)

struct http_chunked {
    int state;                  /* private */
    uint64_t remaining;         /* data bytes left in the current chunk */
    size_t line_len;            /* bytes in line[] */
    size_t trailer_len;         /* trailer bytes so far */
    bool trailers;              /* the body had trailer fields (dropped) */
    char line[HTTP_CHUNKED_LINE_MAX];
};

void http_chunked_init(struct http_chunked *c);

/* Decodes from in[0, len): sets *consumed to the bytes used (all of them,
 * unless the body ended or a data span was found before the end) and
 * *data / *data_len to the body data found (a span inside in[0,
 * *consumed), or NULL / 0).  One call yields at most one span; call again
 * with the rest.  When len > 0 and the result is HTTP_CHUNKED_OK, at least
 * one byte is consumed.  Results: HTTP_CHUNKED_OK, HTTP_CHUNKED_DONE (the
 * final CRLF is at in[*consumed - 1]), HTTP_CHUNKED_BAD (nothing more will
 * be accepted; *consumed counts the good bytes before the bad one). */
int http_chunked_feed(struct http_chunked *c, const char *in, size_t len, size_t *consumed,
                      const char **data, size_t *data_len);

/* ---- the encoder's two pieces ---- */

/* "%zx\r\n" (the longest is 16 hex digits + CRLF) */
#define HTTP_CHUNK_HEADER_MAX 18

/* Writes the size line of an n-byte chunk (n > 0) into out (not
 * NUL-terminated); returns its length, or 0 for n == 0 (which would be the
 * last chunk).  The chunk's data and then HTTP_CHUNK_END follow it. */
size_t http_chunk_header(char out[HTTP_CHUNK_HEADER_MAX], size_t n);

#define HTTP_CHUNK_END  "\r\n"        /* after each chunk's data */
#define HTTP_CHUNK_LAST "0\r\n\r\n"   /* the last chunk, no trailers */

#endif
