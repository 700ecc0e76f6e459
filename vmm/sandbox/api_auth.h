/* The API over TCP: no peer credentials and no file mode guard the port,
 * so every request on it carries the daemon's bearer token
 * (`Authorization: Bearer TOKEN`, RFC 6750), read from a file only its
 * owner may read.  The Unix socket needs none (its mode 0600 is the
 * guard). */
#ifndef AIRLOCK_SANDBOX_API_AUTH_H
#define AIRLOCK_SANDBOX_API_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/sandbox/api_http.h"

#define API_TOKEN_MIN 16   /* bytes: a guessable token is no guard */
#define API_TOKEN_MAX 512

/* Reads the token from `path`: one line (a final newline is dropped) of
 * API_TOKEN_MIN..API_TOKEN_MAX printable, non-space ASCII bytes, in a
 * regular file no one but its owner can read or write.  0, or -1 with the
 * reason (naming the path) in err. */
int api_token_load(const char *path, char *token, size_t cap, char *err, size_t errcap);

/* Whether c's request carries `token` as its bearer credentials (the
 * comparison takes the same time whatever the bytes). */
bool api_token_ok(const struct api_conn *c, const char *token);

#endif
