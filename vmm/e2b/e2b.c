#include "vmm/e2b/e2b.h"

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "vmm/e2b/e2b_control.h"
#include "vmm/e2b/e2b_envd.h"
#include "vmm/sandbox/api_auth.h"

/* The path without its query. */
static void path_of(const struct api_conn *c, char *out, size_t cap)
{
    snprintf(out, cap, "%s", c->req.target);
    out[strcspn(out, "?")] = '\0';
}

bool e2b_request(const struct api_conn *c)
{
    char v[8], path[HTTP_TARGET_MAX + 1];
    if (api_header(c, "E2b-Sandbox-Id", v, sizeof(v)) != 0)
        return true; /* present, even if malformed: the envd plane answers it */
    path_of(c, path, sizeof(path));
    return e2b_control_path(path);
}

/* The API key: X-API-Key (E2B's header) or Authorization: Bearer. */
static bool key_ok(const struct api_conn *c, const char *token)
{
    char key[API_TOKEN_MAX + 2];
    int k = api_header(c, "X-API-Key", key, sizeof(key));
    if (k == 1) {
        size_t n = strlen(token);
        return strlen(key) == n && CRYPTO_memcmp(key, token, n) == 0;
    }
    return k == 0 && api_token_ok(c, token);
}

void e2b_handle(struct api_server *srv, struct api_conn *c, const char *token)
{
    char id[80];
    int has_id = api_header(c, "E2b-Sandbox-Id", id, sizeof(id));
    if (has_id != 0) {
        if (has_id < 0) {
            c->error_hook = e2b_rest_error_hook;
            api_error(c, 400, NULL, "%s", "E2b-Sandbox-Id: want one sandbox id");
            c->error_hook = NULL;
            return;
        }
        return e2b_envd(srv, c, id);
    }
    if (token && !key_ok(c, token)) {
        c->close = true;
        return e2b_rest_error(c, 401, "this listener wants the daemon's token as the API key "
                              "(X-API-Key: TOKEN, or Authorization: Bearer TOKEN)");
    }
    char path[HTTP_TARGET_MAX + 1];
    path_of(c, path, sizeof(path));
    e2b_control(srv, c, path);
}
