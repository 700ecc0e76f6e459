/* A create's secrets; see create_secrets.h. */
#include "vmm/sandbox/create_secrets.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "guest/agent/proto.h"
#include "vmm/sandbox/vm_proc.h"
#include "vmm/snapshot/snapshot_control.h"

#define CREDENTIALS_WAIT_MS 10000

/* Appends ",key=value" (or the list's items) to the spec; the spec's own
 * syntax separates with commas, so a value holding one is refused. */
static const char *add(char *spec, const char *key, json_t *v)
{
    size_t n = strlen(spec);
    if (!v)
        return NULL;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (strchr(s, ','))
            return "must not hold a comma";
        if ((size_t)snprintf(spec + n, CREATE_SECRET_SPEC_MAX - n, ",%s=%s", key, s) >=
            CREATE_SECRET_SPEC_MAX - n)
            return "is too long";
        return NULL;
    }
    if (!json_is_array(v) || !json_array_size(v) || json_array_size(v) > 16)
        return "must be a string (or, for methods and paths, 1 to 16 strings)";
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        const char *s = json_string_value(e);
        if (!s || !*s || strchr(s, ','))
            return "must hold strings without commas";
        /* ",key=first" then ",next" */
        n += (size_t)snprintf(spec + n, CREATE_SECRET_SPEC_MAX - n, i ? ",%s%s" : ",%s=%s",
                              i ? "" : key, s);
        if (n >= CREATE_SECRET_SPEC_MAX)
            return "is too long";
    }
    return NULL;
}

static bool one(struct fields *f, struct create_secrets *cs, json_t *o, const char **values)
{
    static const char *const known[] = {"name", "value", "source", "host", "header", "format",
                                        "methods", "paths", NULL};
    char *spec = cs->spec[cs->n];
    const char *name = json_string_value(json_object_get(o, "name"));
    const char *value = json_string_value(json_object_get(o, "value"));
    const char *source = json_string_value(json_object_get(o, "source"));
    const char *k;
    json_t *v;
    if (!json_is_object(o))
        return field_error(f, "secrets", "%s", "each secret is an object"), false;
    json_object_foreach(o, k, v) {
        bool ok = false;
        for (size_t i = 0; known[i] && !ok; i++)
            ok = !strcmp(k, known[i]);
        if (!ok)
            return field_error(f, "secrets", "unknown field '%.40s' in a secret", k), false;
    }
    if (!name || !json_is_string(json_object_get(o, "host")))
        return field_error(f, "secrets", "%s", "a secret needs a name and a host"), false;
    if (!!value == !!source)
        return field_error(f, "secrets", "secret %.128s: give its value or its source (env:VAR, "
                           "file:PATH), one of them", name), false;
    if (source && strncmp(source, "env:", 4) && strncmp(source, "file:", 5))
        return field_error(f, "secrets", "secret %.128s: source is env:VAR or file:PATH", name), false;
    if (strchr(name, ',') || strchr(name, '=') || (source && strchr(source, ',')))
        return field_error(f, "secrets", "secret %.128s: the name and source hold no comma or '='",
                           name), false;
    if (value) /* its pipe becomes fd VM_PROC_EXTRA_FD + i in the VM process */
        snprintf(spec, CREATE_SECRET_SPEC_MAX, "%s=fd:%u", name, VM_PROC_EXTRA_FD + cs->nfds);
    else
        snprintf(spec, CREATE_SECRET_SPEC_MAX, "%s=%s", name, source);
    static const char *const keys[] = {"host", "header", "format", "methods", "paths"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *why = add(spec, keys[i], json_object_get(o, keys[i]));
        if (why) {
            char what[200];
            snprintf(what, sizeof(what), "secret %.64s: %s %s", name, keys[i], why);
            field_error(f, "secrets", "%s", what);
            return false;
        }
    }
    if (value)
        values[cs->nfds++] = value;
    cs->n++;
    return true;
}

void create_secrets_parse(struct fields *f, struct create_secrets *cs)
{
    memset(cs, 0, sizeof(*cs));
    json_t *arr = f->failed ? NULL : json_object_get(f->obj, "secrets");
    if (!arr)
        return;
    if (!json_is_array(arr) || json_array_size(arr) > CREATE_SECRETS_MAX)
        return field_error(f, "secrets", "%s", "an array of at most 8 secrets");
    const char *values[CREATE_SECRETS_MAX];
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o)
        if (!one(f, cs, o, values))
            return;
    unsigned made = 0;
    for (; made < cs->nfds; made++) {
        int p[2];
        size_t len = strlen(values[made]);
        /* A value is at most a few KiB: far below a pipe's buffer, so the
         * write never waits for the reader. */
        if (len > 4096 || pipe2(p, O_CLOEXEC) < 0)
            break;
        ssize_t w = write(p[1], values[made], len);
        close(p[1]);
        if (w != (ssize_t)len) {
            close(p[0]);
            break;
        }
        cs->fds[made] = p[0];
    }
    if (made < cs->nfds) {
        cs->nfds = made;
        create_secrets_close(cs);
        field_error(f, "secrets", "%s", "a secret's value is too long (or no pipe for it)");
    }
}

void create_secrets_close(struct create_secrets *cs)
{
    for (unsigned i = 0; i < cs->nfds; i++)
        close(cs->fds[i]);
    cs->nfds = 0;
}

int create_secrets_deliver(const struct sandbox *sb, char *err, size_t cap)
{
    unsigned char *buf = malloc(SNAP_CONTROL_CRED_MAX);
    char msg[256] = "";
    const char *env[AGENT_CRED_MAX_ENVS + 1];
    struct agent_cred c;
    int rc = -1;
    ssize_t n = buf ? snap_control_credentials(sb->control_fd, CREDENTIALS_WAIT_MS, buf,
                                               SNAP_CONTROL_CRED_MAX, msg, sizeof(msg))
                    : -ENOMEM;
    if (n < 0) {
        snprintf(err, cap, "the sandbox's VM did not give its credentials: %s",
                 n == -EIO ? msg : strerror((int)-n));
    } else if (agent_cred_parse(buf, (size_t)n, &c, env)) {
        /* The VM process is less trusted than the daemon: checked as the
         * agent would check it. */
        snprintf(err, cap, "the sandbox's VM gave malformed credentials");
    } else {
        int fd = vm_proc_dial(sb->sock);
        char why[256] = "";
        int e = fd < 0 ? fd : agent_credentials(fd, c.env, c.envc, c.pem, c.pem_len, why, sizeof(why));
        if (fd >= 0)
            close(fd);
        if (e)
            snprintf(err, cap, "the guest did not take the secrets' placeholders: %s",
                     why[0] ? why : strerror(-e));
        else
            rc = 0;
    }
    free(buf);
    return rc;
}
