/* --secret parsing, the values' sources and the placeholders; see secret.h. */
#include "vmm/egress/secret.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/parse.h"

static int bad(char *err, size_t cap, const char *arg, const char *fmt, const char *what)
{
    char why[256];
    snprintf(why, sizeof(why), fmt, what);
    snprintf(err, cap, "--secret '%.200s': %s", arg, why);
    return -EINVAL;
}

static bool is_env_name(const char *s, size_t n)
{
    if (n == 0 || n > SECRET_NAME_MAX || isdigit((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return false;
    return true;
}

static bool is_token(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
            return false;
    return true;
}

/* A path prefix: "/" then printable bytes, no query, fragment, space,
 * percent-encoding or dot segment (the request's path is compared as
 * sent, so a prefix must have one spelling). */
static bool path_clean(const char *p)
{
    if (p[0] != '/')
        return false;
    for (const char *c = p; *c; c++)
        if (*c <= 0x20 || *c >= 0x7f || strchr("?#%\\", *c))
            return false;
    return !strstr(p, "/./") && !strstr(p, "/../") && !strstr(p, "//") &&
           strcmp(p + strlen(p) - (strlen(p) >= 2 ? 2 : 0), "/.") &&
           strcmp(p + strlen(p) - (strlen(p) >= 3 ? 3 : 0), "/..");
}

static bool path_ok(const char *p)
{
    return strlen(p) <= SECRET_PATH_MAX && path_clean(p);
}

static bool format_ok(const char *f)
{
    const char *at = strstr(f, "{}");
    if (!at || strstr(at + 2, "{}") || strlen(f) > SECRET_FORMAT_MAX)
        return false;
    for (; *f; f++)
        if ((*f < 0x20 || *f >= 0x7f) && *f != '\t')
            return false;
    return true;
}

static int source_ok(const char *src)
{
    if (!strncmp(src, "env:", 4))
        return is_env_name(src + 4, strlen(src + 4));
    if (!strncmp(src, "file:", 5))
        return src[5] != '\0' && strlen(src) < PATH_MAX;
    if (!strncmp(src, "fd:", 3)) {
        uint64_t fd;
        return parse_uint(src + 3, 1024, &fd) == 0 && fd >= 3;
    }
    return false;
}

/* host=HOST[:PORT]: an exact name or an address literal, port 443 unless given. */
static int set_host(struct secret *s, const char *v)
{
    char t[EGRESS_HOST_MAX + 16];
    bool has_port = v[0] == '[' ? strstr(v, "]:") != NULL : strchr(v, ':') != NULL;
    if (strchr(v, '*') || strlen(v) > EGRESS_HOST_MAX + 8)
        return -EINVAL;
    /* A bare IPv6 literal has colons but no port: not accepted, as in a URL. */
    int n = snprintf(t, sizeof(t), has_port ? "%s" : "%s:443", v);
    return egress_parse_target(t, (size_t)n, s->host, sizeof(s->host), &s->port);
}

/* Which list field a bare item (no '=') belongs to. */
enum list_field { NONE, METHODS, PATHS };

/* One item of methods= or paths= (the first, after the '=', or a later
 * one after a comma), checked and counted the same way: a second
 * "methods=" adds to the first, never past SECRET_LIST_MAX. */
static int add_list_item(struct secret *s, enum list_field list, const char *tok, const char *arg,
                         char *err, size_t errcap)
{
    if (list == METHODS && s->nmethods < SECRET_LIST_MAX && is_token(tok) &&
        strlen(tok) <= SECRET_METHOD_MAX)
        snprintf(s->methods[s->nmethods++], SECRET_METHOD_MAX + 1, "%s", tok);
    else if (list == PATHS && s->npaths < SECRET_LIST_MAX && path_ok(tok))
        snprintf(s->paths[s->npaths++], SECRET_PATH_MAX + 1, "%s", tok);
    else
        return bad(err, errcap, arg, list == NONE ? "'%.60s' is not key=value"
                   : list == METHODS ? "method '%.60s': want a token such as GET (at most 16)"
                   : "path '%.60s': want /prefix without ?, #, %%, \\ or dot segments (at most 16)",
                   tok);
    return 0;
}

int secret_parse(struct secret_set *set, const char *arg, char *err, size_t errcap)
{
    if (set->n >= SECRET_MAX)
        return bad(err, errcap, arg, "more than %s secrets", "8");
    struct secret *s = &set->s[set->n];
    memset(s, 0, sizeof(*s));
    char *copy = strdup(arg);
    if (!copy)
        return bad(err, errcap, arg, "%s", "out of memory");
    int rc = 0;
    char *save = NULL, *tok = strtok_r(copy, ",", &save);
    char *eq = tok ? strchr(tok, '=') : NULL;
    enum list_field list = NONE;
    bool header_set = false, format_set = false, host_set = false;
    if (!eq || !is_env_name(tok, (size_t)(eq - tok))) {
        rc = bad(err, errcap, arg, "%s", "want NAME=SOURCE first (NAME: letters, digits, '_')");
        goto out;
    }
    *eq = '\0';
    snprintf(s->name, sizeof(s->name), "%s", tok);
    if (!source_ok(eq + 1)) {
        rc = bad(err, errcap, arg, "source '%.100s': want env:VAR, file:PATH or fd:N "
                 "(the value itself never goes on the command line)", eq + 1);
        goto out;
    }
    snprintf(s->source, sizeof(s->source), "%s", eq + 1);
    for (unsigned i = 0; i < set->n; i++)
        if (!strcmp(set->s[i].name, s->name)) {
            rc = bad(err, errcap, arg, "%s is named twice", s->name);
            goto out;
        }
    while ((tok = strtok_r(NULL, ",", &save))) {
        char *v = strchr(tok, '=');
        if (!v) { /* the next item of the list field before it */
            if ((rc = add_list_item(s, list, tok, arg, err, errcap)))
                goto out;
            continue;
        }
        *v++ = '\0';
        list = NONE;
        if (!strcmp(tok, "host")) {
            if (set_host(s, v)) {
                rc = bad(err, errcap, arg, "host '%.100s': want an exact name or address, "
                         "with :PORT if not 443", v);
                goto out;
            }
            host_set = true;
        } else if (!strcmp(tok, "header")) {
            if (!is_token(v) || strlen(v) > SECRET_HEADER_MAX) {
                rc = bad(err, errcap, arg, "header '%.70s': want a header name", v);
                goto out;
            }
            snprintf(s->header, sizeof(s->header), "%s", v);
            header_set = true;
        } else if (!strcmp(tok, "format")) {
            if (!format_ok(v)) {
                rc = bad(err, errcap, arg, "format '%.100s': want printable text with {} once", v);
                goto out;
            }
            snprintf(s->format, sizeof(s->format), "%s", v);
            format_set = true;
        } else if (!strcmp(tok, "methods") || !strcmp(tok, "paths")) {
            list = tok[0] == 'm' ? METHODS : PATHS;
            if (!*v) {
                rc = bad(err, errcap, arg, "%s= is empty", tok);
                goto out;
            }
            /* The first item is v itself: through the same checks. */
            if ((rc = add_list_item(s, list, v, arg, err, errcap)))
                goto out;
        } else {
            rc = bad(err, errcap, arg, "unknown field '%.40s' (host, header, format, methods, paths)",
                     tok);
            goto out;
        }
    }
    if (!host_set) {
        rc = bad(err, errcap, arg, "%s", "host= is missing: which host gets this secret");
        goto out;
    }
    if (!header_set)
        snprintf(s->header, sizeof(s->header), "Authorization");
    if (!format_set)
        snprintf(s->format, sizeof(s->format), "%s",
                 strcasecmp(s->header, "Authorization") ? "{}" : "Bearer {}");
    for (unsigned i = 0; i < set->n; i++)
        if (!strcmp(set->s[i].host, s->host) && set->s[i].port == s->port &&
            !strcasecmp(set->s[i].header, s->header)) {
            rc = bad(err, errcap, arg, "%s already fills this header for this host", set->s[i].name);
            goto out;
        }
    set->n++;
out:
    free(copy);
    return rc;
}

/* ---- values ------------------------------------------------------------- */

/* Reads fd to its end into a fresh buffer (at most SECRET_VALUE_MAX + 2
 * bytes: one more than allowed, and a newline).  Its length or -errno. */
static ssize_t read_value(int fd, char **out)
{
    char *buf = calloc(1, SECRET_VALUE_MAX + 3);
    size_t have = 0;
    if (!buf)
        return -ENOMEM;
    while (have < SECRET_VALUE_MAX + 2) {
        ssize_t n = read(fd, buf + have, SECRET_VALUE_MAX + 2 - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            explicit_bzero(buf, SECRET_VALUE_MAX + 3);
            free(buf);
            return -e;
        }
        if (n == 0)
            break;
        have += (size_t)n;
    }
    *out = buf;
    return (ssize_t)have;
}

static int load_one(struct secret *s, char *err, size_t cap)
{
    const char *src = s->source;
    ssize_t n = 0;
    char *buf = NULL;
    if (!strncmp(src, "env:", 4)) {
        char *v = getenv(src + 4);
        if (!v) {
            snprintf(err, cap, "secret %s: %s is not set", s->name, src);
            return -EINVAL;
        }
        size_t l = strlen(v);
        buf = calloc(1, SECRET_VALUE_MAX + 3);
        if (!buf)
            return snprintf(err, cap, "secret %s: out of memory", s->name), -ENOMEM;
        n = (ssize_t)(l > SECRET_VALUE_MAX + 2 ? SECRET_VALUE_MAX + 2 : l);
        memcpy(buf, v, (size_t)n);
        s->env_value = v;
    } else if (!strncmp(src, "file:", 5)) {
        int fd = open(src + 5, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
            int e = fd < 0 ? errno : EISDIR;
            if (fd >= 0)
                close(fd);
            snprintf(err, cap, "secret %s: %.300s: %s", s->name, src,
                     e == EISDIR ? "not a regular file" : strerror(e));
            return -EINVAL;
        }
        n = read_value(fd, &buf);
        close(fd);
    } else {
        int fd = atoi(src + 3);
        n = read_value(fd, &buf);
        close(fd);
    }
    if (n < 0) {
        snprintf(err, cap, "secret %s: %.300s: %s", s->name, src, strerror((int)-n));
        return -EINVAL;
    }
    /* One trailing newline, as `echo KEY > file` leaves it. */
    if (n > 0 && buf[n - 1] == '\n' && strncmp(src, "env:", 4))
        buf[--n] = '\0';
    if (n > 0 && buf[n - 1] == '\r' && strncmp(src, "env:", 4))
        buf[--n] = '\0';
    const char *why = NULL;
    if (n == 0)
        why = "the value is empty";
    else if (n > SECRET_VALUE_MAX)
        why = "the value is longer than 4000 bytes";
    for (ssize_t i = 0; i < n && !why; i++)
        if (buf[i] <= 0x20 || buf[i] >= 0x7f)
            why = "the value holds a space, control or non-ASCII byte, which cannot go in a header";
    s->value = buf;
    s->len = (size_t)n;
    if (!why) {
        unsigned char *rnd = malloc(s->len);
        if (!rnd || getrandom(rnd, s->len, 0) != (ssize_t)s->len)
            why = "no random bytes for its placeholder";
        else if (secret_shape(buf, s->len, rnd, s->placeholder) ||
                 !memcmp(s->placeholder, buf, s->len))
            why = "the value has fewer than 16 letters or digits after its prefix: "
                  "a placeholder of its shape could be guessed";
        free(rnd);
    }
    if (why) {
        snprintf(err, cap, "secret %s: %.300s: %s", s->name, src, why);
        return -EINVAL;
    }
    return 0;
}

int secret_load_all(struct secret_set *set, char *err, size_t errcap)
{
    for (unsigned i = 0; i < set->n; i++) {
        int rc = load_one(&set->s[i], err, errcap);
        if (rc) {
            secret_wipe(set);
            return rc;
        }
    }
    return 0;
}

/* The prefix kept: up to and including the last '-' or '_' within the
 * first SECRET_PREFIX_MAX bytes, when what precedes it is letters, digits
 * and separators only. */
static size_t prefix_len(const char *v, size_t len)
{
    size_t keep = 0;
    for (size_t i = 0; i < len && i < SECRET_PREFIX_MAX; i++) {
        if (v[i] == '-' || v[i] == '_')
            keep = i + 1;
        else if (!isalnum((unsigned char)v[i]))
            break;
    }
    return keep;
}

int secret_shape(const char *value, size_t len, const unsigned char *rnd, char *out)
{
    static const char lower[] = "abcdefghijklmnopqrstuvwxyz", upper[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                      digit[] = "0123456789";
    size_t keep = prefix_len(value, len), random = 0;
    if (len > SECRET_VALUE_MAX)
        return -EINVAL;
    memcpy(out, value, keep);
    for (size_t i = keep; i < len; i++) {
        unsigned char c = (unsigned char)value[i];
        /* rnd[i] % 26 / % 10 is slightly biased; the bias costs well under
         * a bit of the >= 16 characters' entropy. */
        if (islower(c))
            out[i] = lower[rnd[i] % 26];
        else if (isupper(c))
            out[i] = upper[rnd[i] % 26];
        else if (isdigit(c))
            out[i] = digit[rnd[i] % 10];
        else {
            out[i] = (char)c;
            continue;
        }
        random++;
    }
    out[len] = '\0';
    return random >= SECRET_MIN_RANDOM ? 0 : -EINVAL;
}

void secret_wipe(struct secret_set *set)
{
    for (unsigned i = 0; i < set->n; i++) {
        struct secret *s = &set->s[i];
        if (s->value) {
            explicit_bzero(s->value, SECRET_VALUE_MAX + 3);
            free(s->value);
            s->value = NULL;
        }
        if (s->env_value) { /* in place: /proc/PID/environ reads these bytes */
            explicit_bzero(s->env_value, strlen(s->env_value));
            s->env_value = NULL;
        }
    }
}

bool secret_in_scope(const struct secret *s, const char *method, const char *target,
                     size_t target_len)
{
    bool ok = s->nmethods == 0;
    for (unsigned i = 0; i < s->nmethods && !ok; i++)
        ok = !strcmp(s->methods[i], method);
    if (!ok)
        return false;
    if (s->npaths == 0)
        return true;
    /* The path part as sent: it must have the prefix's one spelling, so
     * anything a server might decode or normalise differently is out. */
    size_t plen = 0;
    while (plen < target_len && target[plen] != '?' && target[plen] != '#')
        plen++;
    char path[SECRET_PATH_MAX * 16 + 1];
    if (plen >= sizeof(path))
        return false;
    memcpy(path, target, plen);
    path[plen] = '\0';
    if (!path_clean(path))
        return false;
    for (unsigned i = 0; i < s->npaths; i++) {
        size_t l = strlen(s->paths[i]);
        if (plen >= l && !memcmp(path, s->paths[i], l) &&
            (plen == l || s->paths[i][l - 1] == '/' || path[l] == '/'))
            return true;
    }
    return false;
}

void secret_host_port(const struct secret *s, char *out, size_t cap)
{
    snprintf(out, cap, strchr(s->host, ':') ? "[%s]:%u" : "%s:%u", s->host, s->port);
}
