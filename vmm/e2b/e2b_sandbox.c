#include "vmm/e2b/e2b_sandbox.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/crypto.h>

int e2b_access_token(struct api_server *srv, struct sandbox *sb, char out[65])
{
    unsigned char raw[32];
    int rc = 0;
    pthread_mutex_lock(&srv->reg.lock);
    if (!sb->access_token[0]) {
        if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
            rc = -1;
        } else {
            for (size_t i = 0; i < sizeof(raw); i++)
                snprintf(sb->access_token + 2 * i, 3, "%02x", raw[i]);
            explicit_bzero(raw, sizeof(raw));
        }
    }
    memcpy(out, sb->access_token, 65);
    pthread_mutex_unlock(&srv->reg.lock);
    return rc;
}

bool e2b_access_token_ok(struct api_server *srv, struct sandbox *sb, const char *given)
{
    char mine[65];
    pthread_mutex_lock(&srv->reg.lock);
    memcpy(mine, sb->access_token, sizeof(mine));
    pthread_mutex_unlock(&srv->reg.lock);
    bool ok = mine[0] && strlen(given) == 64 && CRYPTO_memcmp(mine, given, 64) == 0;
    explicit_bzero(mine, sizeof(mine));
    return ok;
}
