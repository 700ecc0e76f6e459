#include "vmm/sandbox/api_fields.h"

#include <stdio.h>
#include <string.h>

void field_error(struct fields *f, const char *name, const char *fmt, const char *what)
{
    if (!f->failed)
        api_error(f->c, 400, name, fmt, what);
    f->failed = true;
}

/* A string with no NUL, at most max bytes; NULL when absent. */
const char *get_string(struct fields *f, const char *name, size_t max)
{
    json_t *v = json_object_get(f->obj, name);
    if (!v || f->failed)
        return NULL;
    if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v) ||
        json_string_length(v) > max) {
        char why[160];
        snprintf(why, sizeof(why), "%s: want a string (no NUL, at most %zu bytes)", name, max);
        field_error(f, name, "%s", why);
        return NULL;
    }
    return json_string_value(v);
}

const char *get_text(struct fields *f, const char *name)
{
    return get_string(f, name, FIELD_MAX_TEXT);
}

/* A whole number in [min, max]; dflt when absent. */
long long get_uint(struct fields *f, const char *name, long long min, long long max,
                          long long dflt)
{
    json_t *v = json_object_get(f->obj, name);
    if (!v || f->failed)
        return dflt;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        char why[160];
        snprintf(why, sizeof(why), "%s: want a whole number from %lld to %lld", name, min, max);
        field_error(f, name, "%s", why);
        return dflt;
    }
    return json_integer_value(v);
}

bool get_bool(struct fields *f, const char *name, bool dflt)
{
    json_t *v = json_object_get(f->obj, name);
    if (!v || f->failed)
        return dflt;
    if (!json_is_boolean(v)) {
        field_error(f, name, "%s: want true or false", name);
        return dflt;
    }
    return json_is_true(v);
}

/* An array of strings (no NUL, none empty, each at most max bytes); NULL
 * when absent. */
json_t *get_list(struct fields *f, const char *name, size_t max)
{
    json_t *v = json_object_get(f->obj, name), *e;
    size_t i;
    if (!v || f->failed)
        return NULL;
    bool ok = json_is_array(v) && json_array_size(v) <= FIELD_MAX_LIST;
    json_array_foreach(v, i, e) ok = ok && json_is_string(e) && json_string_length(e) &&
                                     json_string_length(e) <= max &&
                                     strlen(json_string_value(e)) == json_string_length(e);
    if (!ok) {
        char why[200];
        snprintf(why, sizeof(why), "%s: want an array of at most %d non-empty strings (no NUL, "
                 "each at most %zu bytes)", name, FIELD_MAX_LIST, max);
        field_error(f, name, "%s", why);
        return NULL;
    }
    return v;
}

/* An object of strings (names: no '=', none empty); NULL when absent. */
json_t *get_vars(struct fields *f, const char *name)
{
    json_t *v = json_object_get(f->obj, name), *e;
    const char *k;
    if (!v || f->failed)
        return NULL;
    bool ok = json_is_object(v) && json_object_size(v) <= FIELD_MAX_VARS;
    json_object_foreach(v, k, e) ok = ok && *k && !strchr(k, '=') && json_is_string(e) &&
                                      strlen(json_string_value(e)) == json_string_length(e) &&
                                      json_string_length(e) <= FIELD_MAX_TEXT;
    if (!ok) {
        field_error(f, name, "%s: want an object of at most 256 string values (names without '=')",
                    name);
        return NULL;
    }
    return v;
}

/* Refuses names not in `known` (a typo must not pass as a default). */
void only_known(struct fields *f, const char *const *known)
{
    const char *k;
    json_t *v;
    json_object_foreach(f->obj, k, v) {
        bool found = false;
        for (const char *const *p = known; *p && !found; p++)
            found = !strcmp(*p, k);
        if (!found) {
            field_error(f, k, "unknown field '%.100s'", k);
            return;
        }
    }
}

/* The body as a JSON object (an empty body is {}); NULL after a 4xx. */
json_t *body_object(struct api_conn *c)
{
    if (api_read_body(c))
        return NULL;
    if (!c->req.body_len)
        return json_object();
    json_error_t e;
    json_t *o = json_loadb(c->body, c->req.body_len, JSON_REJECT_DUPLICATES, &e);
    if (!o) {
        api_error(c, 400, NULL, "the body is not JSON: %s (line %d, column %d)", e.text, e.line,
                  e.column);
        return NULL;
    }
    if (!json_is_object(o)) {
        json_decref(o);
        api_error(c, 400, NULL, "the body must be a JSON object");
        return NULL;
    }
    return o;
}
