/* A published port as the user writes it: docker's `-p` syntax,
 * [IP:]HOSTPORT:GUESTPORT (IPv6 in brackets: [::1]:8080:80; without them it
 * is refused, with the bracketed form in the message).  IP defaults
 * to 127.0.0.1, not docker's 0.0.0.0: a sandbox's port is reachable from
 * this machine only unless the user names another address.  HOSTPORT 0
 * means any free port. */
#ifndef AIRLOCK_FORWARD_FORWARD_SPEC_H
#define AIRLOCK_FORWARD_FORWARD_SPEC_H

#include <stddef.h>
#include <stdint.h>

#define FORWARD_IP_MAX 46 /* INET6_ADDRSTRLEN */
#define FORWARD_DEFAULT_IP "127.0.0.1"

struct forward_spec {
    char host_ip[FORWARD_IP_MAX]; /* a numeric IPv4 or IPv6 address */
    uint16_t host_port;           /* 0: any */
    uint16_t guest_port;          /* 1..65535 */
};

/* 0, or -EINVAL with err naming what is wrong in `text`. */
int forward_spec_parse(const char *text, struct forward_spec *out, char *err, size_t errlen);
/* The same checks for the parts given apart (the API's fields); ip NULL
 * or "" is the default. */
int forward_spec_make(const char *ip, long host_port, long guest_port, struct forward_spec *out,
                      char *err, size_t errlen);
/* The same, and which part was refused: "host_ip", "host_port" or
 * "guest_port" (the API's field names); part may be NULL. */
int forward_spec_make_part(const char *ip, long host_port, long guest_port,
                           struct forward_spec *out, char *err, size_t errlen, const char **part);
/* "IP:PORT", IPv6 in brackets, for messages and answers. */
void forward_addr_format(const char *ip, uint16_t port, char *out, size_t outlen);

#endif
