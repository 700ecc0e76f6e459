/* A create's "secrets" (the credential broker, docs/credentials.md): each
 * becomes a `--secret` of the sandbox's VM, its value on a pipe (fd:N),
 * never on a command line; once the VM's agent answers, the placeholders
 * and the VM's CA (which the VM made) go to the agent.
 *
 *   "secrets": [{"name": "API_KEY", "value": "sk-..." | "source": "env:V" | "file:P",
 *                "host": "api.example.com[:443]", "header": "...", "format": "...",
 *                "methods": ["GET"], "paths": ["/v1/"]}]
 *   "ca_file": "/path/to/ca.pem"   (the upstreams' CAs; default the host's bundle)
 *
 * `source` is read by the daemon's VM process on the daemon's host, as
 * `airlock run --secret` reads it. */
#ifndef AIRLOCK_SANDBOX_CREATE_SECRETS_H
#define AIRLOCK_SANDBOX_CREATE_SECRETS_H

#include <stddef.h>

#include <jansson.h>

#include "vmm/sandbox/api_fields.h"
#include "vmm/sandbox/registry.h"

#define CREATE_SECRETS_MAX 8
#define CREATE_SECRET_SPEC_MAX 2048

struct create_secrets {
    unsigned n;
    char spec[CREATE_SECRETS_MAX][CREATE_SECRET_SPEC_MAX]; /* --secret's argument */
    int fds[CREATE_SECRETS_MAX];  /* read ends of the value pipes, in fd:N order */
    unsigned nfds;
};

/* Reads f's "secrets" (absent: n = 0).  A bad entry answers 400 naming
 * "secrets" (f->failed); the pipes are made only when all are good.
 * create_secrets_close releases them. */
void create_secrets_parse(struct fields *f, struct create_secrets *cs);
void create_secrets_close(struct create_secrets *cs);

/* After the VM answered: fetches the agent's CREDENTIALS payload over the
 * control socket, checks it and gives it to the agent.  0, or -1 with err. */
int create_secrets_deliver(const struct sandbox *sb, char *err, size_t cap);

#endif
