#include "vmm/sandbox/api_pty.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* `name.member`, or `member` alone for a body that is the size itself.
 * A member name is the client's: cut to at most 64 bytes, and not inside
 * a UTF-8 sequence (the answer's JSON takes only whole characters). */
static void blame(char *field, size_t len, const char *name, const char *member)
{
    size_t n = strnlen(member, 65);
    if (n > 64)
        for (n = 64; n && (member[n] & 0xc0) == 0x80; n--)
            ;
    snprintf(field, len, "%s%s%.*s", name, *name ? "." : "", (int)n, member);
}

static int dim(const json_t *v, const char *name, const char *member, uint16_t *out,
               char *field, size_t fieldlen, char *why, size_t whylen)
{
    const json_t *d = json_object_get(v, member);
    /* json_is_integer: 80.0, "80", true and null are not a size, and
     * jansson refuses a number past its json_int_t while parsing. */
    if (!json_is_integer(d) || json_integer_value(d) < 1 ||
        json_integer_value(d) > PTY_DIM_MAX) {
        blame(field, fieldlen, name, member);
        snprintf(why, whylen, "%s: want a whole number from 1 to %d", field, PTY_DIM_MAX);
        return -EINVAL;
    }
    *out = (uint16_t)json_integer_value(d);
    return 0;
}

int pty_size_parse(const json_t *v, const char *name, struct pty_size *out, char *field,
                   size_t fieldlen, char *why, size_t whylen)
{
    if (!json_is_object(v)) {
        snprintf(field, fieldlen, "%s", name);
        snprintf(why, whylen, "%s: want an object {\"cols\": C, \"rows\": R}", name);
        return -EINVAL;
    }
    /* Unknown members are refused, as unknown fields are: "colums" must
     * not pass as a default. */
    const char *k;
    const json_t *e;
    json_object_foreach((json_t *)v, k, e) {
        if (strcmp(k, "cols") && strcmp(k, "rows")) {
            blame(field, fieldlen, name, k);
            snprintf(why, whylen, "unknown field '%s' (a size is {\"cols\": C, \"rows\": R})",
                     field);
            return -EINVAL;
        }
    }
    if (dim(v, name, "cols", &out->cols, field, fieldlen, why, whylen) ||
        dim(v, name, "rows", &out->rows, field, fieldlen, why, whylen))
        return -EINVAL;
    return 0;
}

int get_pty(struct fields *f, const char *name, struct pty_size *out)
{
    const json_t *v = json_object_get(f->obj, name);
    if (!v || f->failed)
        return 0;
    char field[96], why[192];
    if (pty_size_parse(v, name, out, field, sizeof(field), why, sizeof(why))) {
        field_error(f, field, "%s", why);
        return 0;
    }
    return 1;
}

void api_pty_resize(struct api_conn *c, struct bg_cmd *bc, const char *id)
{
    json_t *o = body_object(c);
    if (!o)
        return;
    struct pty_size sz;
    char field[96], why[192];
    int rc = pty_size_parse(o, "", &sz, field, sizeof(field), why, sizeof(why));
    json_decref(o);
    if (rc)
        return api_error(c, 400, field, "%s", why);
    rc = bg_resize(bc, sz.rows, sz.cols);
    if (rc == -ENOTTY)
        api_error(c, 409, NULL, "command %s has no terminal (start it with \"pty\": "
                  "{\"cols\": C, \"rows\": R})", id);
    else if (rc == -ESRCH)
        api_error(c, 409, NULL, "command %s has ended", id);
    else if (rc)
        api_error(c, 503, NULL, "cannot resize command %s's terminal: %s", id, strerror(-rc));
    else
        api_reply(c, 200, json_pack("{s:i,s:i}", "cols", sz.cols, "rows", sz.rows));
}
