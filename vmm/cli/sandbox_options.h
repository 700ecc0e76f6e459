/* The options that shape a sandbox (`airlock create`, `airlock mcp`). */
#ifndef AIRLOCK_CLI_SANDBOX_OPTIONS_H
#define AIRLOCK_CLI_SANDBOX_OPTIONS_H

#include <stdbool.h>

#include <jansson.h>

#define CREATE_OPTIONS_USAGE                                                                  \
    "  [--image NAME|PATH] [--mem MiB] [--cpus N] [--allow HOST[:PORT]]...\n"                 \
    "  [--allow-ip CIDR[:PORT]]... [-e K=V]... [--label K=V]... [--timeout S]\n"              \
    "  [--max-lifetime S] [--on-timeout kill|pause] [--append STR] [--socket PATH]\n"         \
    "  [--secret NAME=SOURCE,host=HOST[:PORT][,...]]... [--ca-file FILE]\n"                 \
    "  [--mount HOSTDIR:GUESTDIR[:ro|:rw]]... [--volume NAME:GUESTDIR[:ro|:rw]]...\n"     \
    "  [-p [IP:]HOSTPORT:GUESTPORT]...\n"

#define CREATE_USAGE                                                                          \
    "usage: airlock create [options]\n" CREATE_OPTIONS_USAGE                                  \
    "Makes a sandbox in airlock serve and prints its id.  --timeout is its lease: idle\n"     \
    "that long, it is destroyed (600; 0: never), or paused (--on-timeout pause: airlock\n"  \
    "resume, or any request, brings it back).  --secret reads each value here, in\n"      \
    "this process (its env:, its files), and the daemon keeps it out of the VM\n"           \
    "(docs/credentials.md).  --mount: HOSTDIR's contents at GUESTDIR, read-only unless\n"   \
    ":rw (whose writes stay in the VM); HOSTDIR is this host's, read by the daemon's\n"     \
    "VM process (docs/mounts.md).  --volume: the daemon's named volume NAME at GUESTDIR,\n" \
    "read-write unless :ro, its writes kept; one writer or readers (docs/volumes.md).\n"  \
    "-p (--publish): IP:HOSTPORT on this host reaches\n"   \
    "127.0.0.1:GUESTPORT in the sandbox (IP 127.0.0.1 unless given; HOSTPORT 0: any,\n"  \
    "see GET /v1/sandboxes/ID/ports; docs/forwarding.md).  docs/sandboxes.md.\n"

/* Parses argv (argv[0] the verb) into *body, a create request (always
 * set, the caller's to free), and *sock_flag (--socket, or left NULL).
 * 0; -1 when --help was printed; 125 after a one-line error. */
int sandbox_create_options(int argc, char **argv, const char *verb, const char *usage,
                           json_t **body, const char **sock_flag);

/* Prints "airlock: " and the message on stderr; returns 125. */
int verb_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The options of a verb that takes only --socket PATH, --help and, when
 * flag is not NULL, --FLAG (then *flag_set is true): 0 with optind at its
 * first argument, -1 when --help printed usage, or 125 after a one-line
 * error. */
int verb_socket_option(int argc, char **argv, const char *verb, const char *usage,
                       const char **sock_flag, const char *flag, bool *flag_set);

/* Whether id can be a sandbox id in a request path (the daemon says
 * whether there is such a sandbox): 1 to 64 bytes, none of "/?#% ". */
bool verb_id_ok(const char *id);

/* "K=V" into obj[K] = V; -1 when there is no '=' or no name. */
int sandbox_add_var(json_t *obj, const char *kv);

#endif
