#include "vmm/forward/forward_spec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A port in decimal: digits only, at most 65535; `zero_ok` for HOSTPORT. */
static long port_of(const char *s, size_t len, int zero_ok)
{
    if (len == 0 || len > 5)
        return -1;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v > 65535 || (v == 0 && !zero_ok) ? -1 : v;
}

int forward_spec_make_part(const char *ip, long host_port, long guest_port,
                           struct forward_spec *out, char *err, size_t errlen, const char **part)
{
    const char *unused;
    if (!part)
        part = &unused;
    if (!ip || !*ip)
        ip = FORWARD_DEFAULT_IP;
    unsigned char raw[16];
    if (strlen(ip) >= FORWARD_IP_MAX ||
        (inet_pton(AF_INET, ip, raw) != 1 && inet_pton(AF_INET6, ip, raw) != 1)) {
        snprintf(err, errlen, "'%.64s' is not an IP address", ip);
        *part = "host_ip";
        return -EINVAL;
    }
    if (host_port < 0 || host_port > 65535) {
        snprintf(err, errlen, "host port %ld is not 0..65535", host_port);
        *part = "host_port";
        return -EINVAL;
    }
    if (guest_port < 1 || guest_port > 65535) {
        snprintf(err, errlen, "guest port %ld is not 1..65535", guest_port);
        *part = "guest_port";
        return -EINVAL;
    }
    memset(out, 0, sizeof(*out));
    strcpy(out->host_ip, ip);
    out->host_port = (uint16_t)host_port;
    out->guest_port = (uint16_t)guest_port;
    return 0;
}

int forward_spec_make(const char *ip, long host_port, long guest_port, struct forward_spec *out,
                      char *err, size_t errlen)
{
    return forward_spec_make_part(ip, host_port, guest_port, out, err, errlen, NULL);
}

/* Each mistake gets a message naming its part of `text`.  Unbracketed
 * IPv6 is refused, not guessed at: "1::2:3:4" is an address itself, and
 * docker's split from the right would read it as [1::2]:3:4. */
int forward_spec_parse(const char *text, struct forward_spec *out, char *err, size_t errlen)
{
    static const char want[] = "want [IP:]HOSTPORT:GUESTPORT";
    char ip[FORWARD_IP_MAX] = "";
    const char *rest = text;
    if (text[0] == '[') { /* [IPv6]:HOST:GUEST */
        const char *close = strchr(text, ']');
        size_t n = close ? (size_t)(close - text - 1) : 0;
        if (!close) {
            snprintf(err, errlen, "'[' without its ']': want [IPv6]:HOSTPORT:GUESTPORT");
            return -EINVAL;
        }
        if (n == 0) {
            snprintf(err, errlen, "'[]' holds no address: want [IPv6]:HOSTPORT:GUESTPORT");
            return -EINVAL;
        }
        if (n >= sizeof(ip)) {
            snprintf(err, errlen, "'%.24s...' is not an IP address", text + 1);
            return -EINVAL;
        }
        if (close[1] != ':') {
            if (close[1])
                snprintf(err, errlen, "'%.16s' after ']': %s", close + 1, want);
            else
                snprintf(err, errlen, "no ports after ']': %s", want);
            return -EINVAL;
        }
        memcpy(ip, text + 1, n);
        rest = close + 2;
    }
    const char *last = strrchr(rest, ':');
    if (!last) {
        snprintf(err, errlen, "no ':' between the ports: %s", want);
        return -EINVAL;
    }
    const char *host = rest;
    if (rest == text) {
        const char *first = strchr(rest, ':');
        if (first != last) { /* IP:HOST:GUEST */
            const char *mid = last; /* the colon before HOSTPORT */
            while (mid > rest && mid[-1] != ':')
                mid--;
            mid--;
            unsigned char raw[16];
            char v6[FORWARD_IP_MAX];
            size_t n = (size_t)(mid - rest);
            if (mid != first && n < sizeof(v6)) {
                memcpy(v6, rest, n);
                v6[n] = 0;
                if (inet_pton(AF_INET6, v6, raw) == 1) {
                    snprintf(err, errlen, "an IPv6 address goes in brackets: [%s]:%.16s", v6,
                             mid + 1);
                    return -EINVAL;
                }
            }
            if (first == rest) {
                snprintf(err, errlen, "no IP before the first ':': %s", want);
                return -EINVAL;
            }
            if ((size_t)(first - rest) >= sizeof(ip)) {
                snprintf(err, errlen, "'%.24s...' is not an IP address", rest);
                return -EINVAL;
            }
            memcpy(ip, rest, (size_t)(first - rest));
            host = first + 1;
        }
    }
    long hp = port_of(host, (size_t)(last - host), 1);
    long gp = port_of(last + 1, strlen(last + 1), 0);
    if (hp < 0) {
        snprintf(err, errlen, "host port '%.*s' is not 0..65535",
                 (int)(last - host > 16 ? 16 : last - host), host);
        return -EINVAL;
    }
    if (gp < 0) {
        snprintf(err, errlen, "guest port '%.16s' is not 1..65535", last + 1);
        return -EINVAL;
    }
    return forward_spec_make(ip, hp, gp, out, err, errlen);
}

void forward_addr_format(const char *ip, uint16_t port, char *out, size_t outlen)
{
    snprintf(out, outlen, strchr(ip, ':') ? "[%s]:%u" : "%s:%u", ip, port);
}
