#include "vmm/sandbox/api_ports.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/sandbox/api_http.h"
#include "vmm/sandbox/port_proxy.h"
#include "vmm/sandbox/sandbox_ports.h"

/* One port as the API gives it: an object, or docker's string; *field
 * names the object's member that was refused (NULL: the whole). */
static int spec_of(json_t *v, struct forward_spec *s, char *err, size_t errlen,
                   const char **field)
{
    *field = NULL;
    if (json_is_string(v))
        return forward_spec_parse(json_string_value(v), s, err, errlen);
    if (!json_is_object(v)) {
        snprintf(err, errlen, "want {\"guest_port\": N, \"host_port\": N, \"host_ip\": IP} "
                 "or \"[IP:]HOSTPORT:GUESTPORT\"");
        return -EINVAL;
    }
    const char *key;
    json_t *x;
    json_object_foreach(v, key, x) {
        if (strcmp(key, "guest_port") && strcmp(key, "host_port") && strcmp(key, "host_ip")) {
            snprintf(err, errlen, "unknown field '%.64s' (guest_port, host_port, host_ip)", key);
            return -EINVAL;
        }
    }
    json_t *g = json_object_get(v, "guest_port"), *h = json_object_get(v, "host_port"),
           *ip = json_object_get(v, "host_ip");
    if (!json_is_integer(g)) {
        snprintf(err, errlen, "guest_port: want a port number, 1..65535");
        *field = "guest_port";
        return -EINVAL;
    }
    if (h && !json_is_integer(h)) {
        snprintf(err, errlen, "host_port: want a port number, 0 (any) to 65535");
        *field = "host_port";
        return -EINVAL;
    }
    if (ip && !json_is_string(ip)) {
        snprintf(err, errlen, "host_ip: want an IP address as a string");
        *field = "host_ip";
        return -EINVAL;
    }
    long long gp = json_integer_value(g), hp = h ? json_integer_value(h) : 0;
    return forward_spec_make_part(ip ? json_string_value(ip) : NULL,
                                  hp < -1 || hp > 65536 ? -1 : (long)hp,
                                  gp < 0 || gp > 65536 ? 0 : (long)gp, s, err, errlen, field);
}

void api_ports_parse(struct fields *f, struct forward_spec *out, unsigned *n)
{
    *n = 0;
    json_t *a = json_object_get(f->obj, "ports");
    if (!a || f->failed)
        return;
    if (!json_is_array(a) || json_array_size(a) > API_PORTS_MAX) {
        field_error(f, "ports", "%s", "ports: want a list of at most 64 ports");
        return;
    }
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) {
        char err[200], msg[260];
        const char *member;
        if (spec_of(v, &out[i], err, sizeof(err), &member)) {
            snprintf(msg, sizeof(msg), "ports[%zu]: %s", i, err);
            return field_error(f, "ports", "%s", msg);
        }
        for (size_t k = 0; k < i; k++)
            if (out[k].guest_port == out[i].guest_port) {
                snprintf(msg, sizeof(msg), "ports[%zu]: guest port %u is in the list twice", i,
                         out[i].guest_port);
                return field_error(f, "ports", "%s", msg);
            }
    }
    *n = (unsigned)json_array_size(a);
}

/* The HTTP status of a failed publish, and the field to blame. */
static int status_of(int rc, const char **field)
{
    *field = "host_port";
    switch (rc) {
    case -EEXIST: *field = "guest_port"; return 409;
    case -ENOSPC: *field = "guest_port"; return 409;
    case -EADDRINUSE: return 409;
    case -EACCES: return 403;
    case -EADDRNOTAVAIL: *field = "host_ip"; return 400;
    default: *field = NULL; return 500;
    }
}

int api_ports_publish(struct sandbox *sb, const struct forward_spec *s, unsigned n, char *err,
                      size_t errlen, const char **field)
{
    for (unsigned i = 0; i < n; i++) {
        int rc = sandbox_ports_add(sb, &s[i], NULL, err, errlen);
        if (rc) {
            int http = status_of(rc, field);
            *field = "ports";
            return http;
        }
    }
    return 0;
}

static void publish(struct api_conn *c, struct sandbox *sb)
{
    json_t *o = body_object(c);
    if (!o)
        return;
    struct forward_spec s;
    char err[300];
    const char *field;
    if (spec_of(o, &s, err, sizeof(err), &field)) {
        json_decref(o);
        return api_error(c, 400, field, "%s", err);
    }
    json_decref(o);
    struct forward_info info;
    int rc = sandbox_ports_add(sb, &s, &info, err, sizeof(err));
    if (rc) {
        const char *field;
        int http = status_of(rc, &field);
        return api_error(c, http, field, "%s", err);
    }
    api_reply(c, 201, sandbox_port_json(&info));
}

/* "/8000" -> 8000; 0 for anything else. */
static unsigned port_in_path(const char *s)
{
    if (*s++ != '/' || !*s || strlen(s) > 5)
        return 0;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    unsigned long v = strtoul(s, NULL, 10);
    return v <= 65535 ? (unsigned)v : 0;
}

bool api_ports_is_route(const char *sub)
{
    return sub[0] == '/' && strchr(sub + 1, '/') != NULL;
}

void api_ports(struct api_conn *c, struct sandbox *sb, const char *sub)
{
    bool is = !strcmp(c->req.method, "GET");
    if (!*sub) {
        if (is) {
            json_t *o = json_object();
            json_object_set_new(o, "ports", sandbox_ports_json(sb));
            return api_reply(c, 200, o);
        }
        if (!strcmp(c->req.method, "POST"))
            return publish(c, sb);
        return api_method_not_allowed(c, "GET, POST");
    }
    const char *slash = *sub ? strchr(sub + 1, '/') : NULL;
    if (slash) { /* .../ports/{port}/PATH: the guest's own HTTP */
        char num[8];
        snprintf(num, sizeof(num), "%.*s", (int)(slash - sub), sub);
        unsigned p = port_in_path(num);
        if (!p)
            return api_error(c, 404, NULL, "no such path: %.200s (want .../ports/GUEST_PORT/...)",
                             c->req.target);
        /* The path as the client sent it, query included. */
        const char *full = strstr(c->req.target, "/ports/");
        full = full ? strchr(full + 7, '/') : NULL;
        return port_proxy(c, sb, (uint16_t)p, full ? full : "/");
    }
    unsigned port = port_in_path(sub);
    if (!port)
        return api_error(c, 404, NULL, "no such path: %.200s (want .../ports/GUEST_PORT)",
                         c->req.target);
    if (!strcmp(c->req.method, "DELETE")) {
        if (sandbox_ports_remove(sb, (uint16_t)port))
            return api_error(c, 404, NULL, "guest port %u is not published", port);
        return api_reply(c, 204, NULL);
    }
    if (!is)
        return api_method_not_allowed(c, "GET, DELETE");
    json_t *all = sandbox_ports_json(sb), *v;
    size_t i;
    json_array_foreach(all, i, v) {
        if (json_integer_value(json_object_get(v, "guest_port")) == port) {
            json_incref(v);
            json_decref(all);
            return api_reply(c, 200, v);
        }
    }
    json_decref(all);
    api_error(c, 404, NULL, "guest port %u is not published", port);
}
