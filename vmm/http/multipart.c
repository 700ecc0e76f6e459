#include "vmm/http/multipart.h"

#include <string.h>
#include <strings.h>

/* RFC 2046's bchars without the space (which may not end a boundary and
 * nobody sends). */
static bool bchar(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch && strchr("'()+_,-./:=?", ch));
}

/* RFC 9110's tchar. */
static bool tchar(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static const char *skip_ows(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    return s;
}

/* One parameter "; name=value" of a header value from *s (before end):
 * name and value (unquoted, a quoted one without escapes) into the
 * buffers.  1 found, 0 none left, -1 malformed. */
static int next_param(const char **s, const char *end, char *name, size_t ncap, char *val,
                      size_t vcap)
{
    const char *p = skip_ows(*s, end);
    if (p == end)
        return 0;
    if (*p++ != ';')
        return -1;
    p = skip_ows(p, end);
    size_t n = 0;
    while (p < end && tchar(*p)) {
        if (n + 1 >= ncap)
            return -1;
        name[n++] = *p++;
    }
    name[n] = '\0';
    p = skip_ows(p, end);
    if (!n || p == end || *p++ != '=')
        return -1;
    p = skip_ows(p, end);
    size_t v = 0;
    if (p < end && *p == '"') {
        for (p++; p < end && *p != '"'; p++) {
            if (*p == '\r' || *p == '\n' || *p == '\0' || v + 1 >= vcap)
                return -1;
            val[v++] = *p;
        }
        if (p == end)
            return -1;
        p++;
    } else {
        while (p < end && tchar(*p)) {
            if (v + 1 >= vcap)
                return -1;
            val[v++] = *p++;
        }
        if (!v)
            return -1;
    }
    val[v] = '\0';
    *s = p;
    return 1;
}

int multipart_boundary(const char *ct, char out[MULTIPART_BOUNDARY_MAX + 1])
{
    static const char type[] = "multipart/form-data";
    const char *end = ct + strlen(ct);
    if (strncasecmp(ct, type, sizeof(type) - 1))
        return -1;
    const char *s = ct + sizeof(type) - 1;
    char name[32], val[MULTIPART_BOUNDARY_MAX + 2];
    int found = 0, rc;
    while ((rc = next_param(&s, end, name, sizeof(name), val, sizeof(val))) == 1) {
        if (strcasecmp(name, "boundary"))
            continue;
        size_t n = strlen(val);
        if (found++ || n < 1 || n > MULTIPART_BOUNDARY_MAX)
            return -1;
        for (size_t i = 0; i < n; i++)
            if (!bchar(val[i]))
                return -1;
        memcpy(out, val, n + 1);
    }
    return rc == 0 && found == 1 ? 0 : -1;
}

void multipart_init(struct multipart *m, const char *boundary, const void *body, size_t n)
{
    memset(m, 0, sizeof(*m));
    m->p = body;
    m->n = n;
    size_t bl = strnlen(boundary, MULTIPART_BOUNDARY_MAX + 1);
    if (bl < 1 || bl > MULTIPART_BOUNDARY_MAX) {
        m->state = -1;
        return;
    }
    memcpy(m->delim, "\r\n--", 4);
    memcpy(m->delim + 4, boundary, bl);
    m->dl = 4 + bl;
}

static int fail(struct multipart *m, struct multipart_part *part, const char *why)
{
    m->state = -1;
    part->why = why;
    return -1;
}

/* The Content-Disposition value [v, end) into part: 0 or -1. */
static int disposition(const char *v, const char *end, struct multipart_part *part)
{
    static const char fd[] = "form-data";
    v = skip_ows(v, end);
    if ((size_t)(end - v) < sizeof(fd) - 1 || strncasecmp(v, fd, sizeof(fd) - 1))
        return -1;
    const char *s = v + sizeof(fd) - 1;
    if (s < end && tchar(*s))
        return -1;
    char name[32];
    static __thread char val[MULTIPART_NAME_MAX + 1];
    bool has_name = false;
    int rc;
    while ((rc = next_param(&s, end, name, sizeof(name), val, sizeof(val))) == 1) {
        if (!strcasecmp(name, "name")) {
            if (has_name)
                return -1;
            has_name = true;
            memcpy(part->name, val, strlen(val) + 1);
        } else if (!strcasecmp(name, "filename")) {
            if (part->has_filename)
                return -1;
            part->has_filename = true;
            memcpy(part->filename, val, strlen(val) + 1);
        } else if (!strcasecmp(name, "filename*")) {
            return -1;
        }
    }
    return rc == 0 && has_name ? 0 : -1;
}

/* The part's head from m->pos to its empty line: 0 or -1 (why set). */
static int part_head(struct multipart *m, struct multipart_part *part)
{
    size_t limit = m->n - m->pos < MULTIPART_HEAD_MAX ? m->n - m->pos : MULTIPART_HEAD_MAX;
    const char *h = m->p + m->pos, *hend = h + limit;
    int dispositions = 0;
    for (;;) {
        const char *eol = memchr(h, '\r', (size_t)(hend - h));
        if (!eol || eol + 1 >= hend || eol[1] != '\n')
            return fail(m, part, "a part's head does not end (CRLF CRLF) within 8 KiB");
        if (eol == h) { /* the empty line */
            m->pos = (size_t)(eol + 2 - m->p);
            break;
        }
        const char *colon = h;
        while (colon < eol && tchar(*colon))
            colon++;
        if (colon == h || colon == eol || *colon != ':')
            return fail(m, part, "a part's header line is not NAME: VALUE");
        for (const char *q = colon + 1; q < eol; q++)
            if ((unsigned char)*q < 0x20 && *q != '\t')
                return fail(m, part, "a part's header value holds a control byte");
        if ((size_t)(colon - h) == 19 && !strncasecmp(h, "Content-Disposition", 19)) {
            if (dispositions++ || disposition(colon + 1, eol, part))
                return fail(m, part, "a part's Content-Disposition is not form-data with a name "
                                     "(and perhaps a filename), once");
        }
        h = eol + 2;
    }
    if (!dispositions)
        return fail(m, part, "a part has no Content-Disposition");
    return 0;
}

int multipart_next(struct multipart *m, struct multipart_part *part)
{
    memset(part, 0, sizeof(*part));
    if (m->state == -1)
        return fail(m, part, "the body broke before");
    if (m->state == 2)
        return 0;
    if (m->state == 0) { /* "--" boundary CRLF at the very start */
        if (m->n < m->dl || memcmp(m->p, m->delim + 2, m->dl - 2))
            return fail(m, part, "the body does not start with --BOUNDARY");
        m->pos = m->dl - 2;
        if (m->n - m->pos >= 2 && !memcmp(m->p + m->pos, "--", 2)) {
            m->state = 2; /* no parts at all */
            return 0;
        }
        if (m->n - m->pos < 2 || memcmp(m->p + m->pos, "\r\n", 2))
            return fail(m, part, "the boundary line does not end in CRLF");
        m->pos += 2;
        m->state = 1;
    }
    if (++m->parts > MULTIPART_PARTS_MAX)
        return fail(m, part, "more than 1024 parts");
    if (part_head(m, part))
        return -1;
    const char *start = m->p + m->pos;
    const char *d = memmem(start, m->n - m->pos, m->delim, m->dl);
    if (!d)
        return fail(m, part, "a part does not end with CRLF --BOUNDARY");
    part->data = start;
    part->len = (size_t)(d - start);
    m->pos = (size_t)(d - m->p) + m->dl;
    if (m->n - m->pos >= 2 && !memcmp(m->p + m->pos, "--", 2)) {
        m->state = 2; /* the close delimiter: the epilogue is ignored */
        m->pos = m->n;
    } else if (m->n - m->pos >= 2 && !memcmp(m->p + m->pos, "\r\n", 2)) {
        m->pos += 2;
    } else {
        return fail(m, part, "a boundary line does not end in CRLF or --");
    }
    return 1;
}
