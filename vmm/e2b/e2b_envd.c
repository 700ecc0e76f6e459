#include "vmm/e2b/e2b_envd.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/e2b/connect_call.h"
#include "vmm/e2b/e2b_control.h"
#include "vmm/e2b/e2b_files.h"
#include "vmm/e2b/e2b_filesystem.h"
#include "vmm/e2b/e2b_process.h"
#include "vmm/e2b/e2b_sandbox.h"
#include "vmm/sandbox/sandbox_life.h"
#include "vmm/sandbox/sandbox_pause.h"

/* What E2B's proxy answers for a sandbox that is not (or no longer)
 * there: 502, which the SDK reads as "the sandbox is gone". */
static void gone(struct api_conn *c, const char *id)
{
    /* the id is the client's bytes: null when they are not UTF-8 */
    api_reply(c, 502, json_pack("{s:i,s:s,s:o?}", "code", 502, "message", "the sandbox was not found",
                                "sandboxId", json_string(id)));
}

/* "/package.Service/Method": a Connect call of a service envd has. */
static bool is_rpc_path(const char *path)
{
    const char *slash = strchr(path + 1, '/'), *dot = strchr(path + 1, '.');
    return slash && dot && dot < slash;
}

void e2b_envd(struct api_server *srv, struct api_conn *c, const char *sandbox_id)
{
    char path[HTTP_TARGET_MAX + 1];
    snprintf(path, sizeof(path), "%s", c->req.target);
    path[strcspn(path, "?")] = '\0';
    struct sandbox *sb = registry_find(&srv->reg, sandbox_id);
    if (!sb)
        return gone(c, sandbox_id);
    pthread_mutex_lock(&srv->reg.lock);
    bool paused = sb->state == SB_PAUSED;
    pthread_mutex_unlock(&srv->reg.lock);
    if (paused && !strcmp(path, "/health")) { /* as E2B's proxy: not running */
        registry_put(&srv->reg, sb);
        return gone(c, sandbox_id);
    }
    if (!strcmp(path, "/health")) {
        api_reply_bytes(c, 204, NULL, NULL, NULL, 0);
        return registry_put(&srv->reg, sb);
    }
    char token[80];
    if (api_header(c, "X-Access-Token", token, sizeof(token)) != 1 ||
        !e2b_access_token_ok(srv, sb, token)) {
        /* Read no body from a caller we do not know: answer and close. */
        c->close = true;
        e2b_rest_error(c, 401, "this sandbox wants its access token (X-Access-Token, "
                       "the envdAccessToken its create or connect answered)");
        return registry_put(&srv->reg, sb);
    }
    /* A paused sandbox resumes for its caller, as /v1's do (autoResume). */
    char err[600];
    int http = paused ? sandbox_resume(srv, sb, err, sizeof(err)) : 0;
    if (http) {
        e2b_rest_error(c, http == 404 ? 502 : http, "sandbox %s cannot be resumed: %s", sb->id,
                       err);
        return registry_put(&srv->reg, sb);
    }
    sandbox_touch(srv, sb);
    static const char proc[] = "/process.Process/", fs[] = "/filesystem.Filesystem/";
    if (!strncmp(path, proc, sizeof(proc) - 1)) {
        e2b_process(srv, c, sb, path + sizeof(proc) - 1);
    } else if (!strncmp(path, fs, sizeof(fs) - 1)) {
        e2b_filesystem(srv, c, sb, path + sizeof(fs) - 1);
    } else if (!strcmp(path, "/files")) {
        e2b_files(srv, c, sb);
    } else if (is_rpc_path(path)) {
        /* "/package.Service/Method" of a service envd has and airlock not */
        struct connect_call k;
        json_t *msg;
        if (!connect_call_open(&k, c, &msg))
            connect_fail(&k, "unimplemented", "%.200s is not served by airlock", path);
        json_decref(msg);
        connect_call_close(&k);
    } else {
        e2b_rest_error(c, 404, "no such path: %.200s", path);
    }
    sandbox_touch(srv, sb);
    registry_put(&srv->reg, sb);
}
