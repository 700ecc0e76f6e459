#include "vmm/sandbox/image_defaults.h"

#include <stdio.h>
#include <string.h>

void image_defaults_apply(struct sandbox *sb, const json_t *rec, json_t *env)
{
    sb->env = env ? json_deep_copy(env) : json_object();
    sb->cwd[0] = '\0';
    sb->has_user = false;
    sb->user_error[0] = '\0';
    if (!rec)
        return;
    const json_t *cfg = json_object_get(rec, "config");
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(cfg, "Env"), i, e) {
        const char *kv = json_string_value(e), *eq = kv ? strchr(kv, '=') : NULL;
        if (!eq || eq == kv)
            continue;
        char key[256];
        if (snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv) >= (int)sizeof(key))
            continue;
        if (!json_object_get(sb->env, key))
            json_object_set_new(sb->env, key, json_string(eq + 1));
    }
    const char *wd = json_string_value(json_object_get(cfg, "WorkingDir"));
    if (wd)
        snprintf(sb->cwd, sizeof(sb->cwd), "%s", wd);
    const char *why = json_string_value(json_object_get(rec, "user_error"));
    if (why) {
        snprintf(sb->user_error, sizeof(sb->user_error), "%s", why);
    } else if (json_object_get(rec, "uid")) {
        sb->has_user = true;
        sb->uid = (uint32_t)json_integer_value(json_object_get(rec, "uid"));
        sb->gid = (uint32_t)json_integer_value(json_object_get(rec, "gid"));
    }
}
