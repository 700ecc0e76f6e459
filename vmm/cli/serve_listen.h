/* Where `airlock serve` listens: its Unix socket (mode 0600), and a TCP
 * port when asked (vmm/sandbox/api_auth.h: a token guards it). */
#ifndef AIRLOCK_CLI_SERVE_LISTEN_H
#define AIRLOCK_CLI_SERVE_LISTEN_H

#include <stdbool.h>
#include <stddef.h>

/* The default socket path (making /run/airlock as root); -errno when
 * there is none to be had (not root, no XDG_RUNTIME_DIR). */
int serve_default_socket(char *out, size_t cap);

/* Binds PATH (0600) and listens: the fd, or -1 after a one-line error.
 * A socket file nobody answers on is a leftover and is replaced; one a
 * live daemon answers on is not. */
int serve_listen_unix(const char *path);

/* Binds "IP:PORT" ("[IPv6]:PORT"; numbers only: names are not looked up)
 * and listens: the fd, or -1 after a one-line error.  *loopback says
 * whether only this machine can reach it. */
int serve_listen_tcp(const char *spec, bool *loopback);

#endif
