/* multipart/form-data bodies (RFC 7578 over RFC 2046 5.1), as HTML forms
 * and fetch's FormData send them: the E2B SDK uploads several files in
 * one request this way.  Pure (no I/O, no allocation) over a whole body
 * already in memory; every byte is hostile, and the parser is strict:
 *   - the boundary is 1..70 of RFC 2046's bchars, quoted or not, and the
 *     Content-Type is multipart/form-data;
 *   - the body starts with "--" boundary CRLF (no preamble), each part's
 *     head is header lines ending in CRLF (at most MULTIPART_HEAD_MAX
 *     bytes, no obs-fold, token names), then an empty line; its data runs
 *     to the next CRLF "--" boundary, followed by CRLF (another part) or
 *     "--" (the end: whatever follows, the epilogue, is ignored);
 *   - every part has one Content-Disposition: form-data with a name, and
 *     perhaps a filename (a quoted string of bytes other than '"', CR, LF
 *     and NUL, or a token), each parameter once; a filename* (RFC 5987)
 *     is refused rather than guessed at;
 *   - at most MULTIPART_PARTS_MAX parts.
 * Use: multipart_boundary on the Content-Type, multipart_init, then
 * multipart_next until it returns 0 (the end) or -1 (malformed). */
#ifndef AIRLOCK_HTTP_MULTIPART_H
#define AIRLOCK_HTTP_MULTIPART_H

#include <stdbool.h>
#include <stddef.h>

#define MULTIPART_BOUNDARY_MAX 70
#define MULTIPART_HEAD_MAX     8192
#define MULTIPART_NAME_MAX     4096 /* a name or filename, without its NUL */
#define MULTIPART_PARTS_MAX    1024

/* The boundary of a "multipart/form-data; boundary=..." Content-Type into
 * out.  0, or -1 when the type is another or the boundary is missing or
 * bad. */
int multipart_boundary(const char *content_type, char out[MULTIPART_BOUNDARY_MAX + 1]);

struct multipart {
    const char *p;
    size_t n, pos;
    char delim[MULTIPART_BOUNDARY_MAX + 5]; /* CRLF "--" boundary */
    size_t dl;
    unsigned parts;
    int state; /* 0 before the first part, 1 between parts, 2 ended, -1 broken */
};

struct multipart_part {
    char name[MULTIPART_NAME_MAX + 1];
    char filename[MULTIPART_NAME_MAX + 1];
    bool has_filename;
    const char *data; /* into the body */
    size_t len;
    const char *why;  /* multipart_next's -1: what was wrong */
};

void multipart_init(struct multipart *m, const char *boundary, const void *body, size_t n);
/* 1 with the next part in *part, 0 at the end, -1 when malformed
 * (part->why says how; every later call is -1 too). */
int multipart_next(struct multipart *m, struct multipart_part *part);

#endif
