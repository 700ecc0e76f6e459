#include "vmm/e2b/e2b_fs_entry.h"

#include <stdio.h>
#include <string.h>

#include "vmm/e2b/proto_json.h"

int e2b_clean_path(const char *path, char *out, size_t cap)
{
    if (path[0] != '/' || cap < 2)
        return -1;
    size_t n = 0;
    out[n++] = '/';
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        const char *s = p;
        while (*p && *p != '/')
            p++;
        size_t len = (size_t)(p - s);
        if (!len || (len == 1 && s[0] == '.'))
            continue;
        if (len == 2 && s[0] == '.' && s[1] == '.') {
            while (n > 1 && out[n - 1] != '/')
                n--;
            if (n > 1)
                n--; /* the '/' before the part taken back */
            continue;
        }
        if (n > 1) {
            if (n + 1 >= cap)
                return -1;
            out[n++] = '/';
        }
        if (n + len >= cap)
            return -1;
        memcpy(out + n, s, len);
        n += len;
    }
    out[n] = '\0';
    return 0;
}

void e2b_permissions(uint32_t kind, uint32_t mode, char *out)
{
    size_t n = 0;
    if (kind == AGENT_ENTRY_DIR)
        out[n++] = 'd';
    else if (kind == AGENT_ENTRY_SYMLINK)
        out[n++] = 'L';
    else if (kind == AGENT_ENTRY_OTHER)
        out[n++] = '?';
    if (mode & 04000)
        out[n++] = 'u';
    if (mode & 02000)
        out[n++] = 'g';
    if (mode & 01000)
        out[n++] = 't';
    if (n == 0)
        out[n++] = '-';
    static const char rwx[] = "rwxrwxrwx";
    for (int i = 0; i < 9; i++)
        out[n++] = mode & (0400u >> i) ? rwx[i] : '-';
    out[n] = '\0';
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

json_t *e2b_entry_info(const struct e2b_names *names, const char *path,
                       const struct agent_entry *e)
{
    static const char *const types[] = {"FILE_TYPE_FILE", "FILE_TYPE_DIRECTORY",
                                        "FILE_TYPE_SYMLINK", "FILE_TYPE_UNSPECIFIED"};
    char perm[16], owner[40], group[40];
    e2b_permissions(e->kind, e->mode, perm);
    json_t *name = json_string(base_name(path)), *p = json_string(path);
    if (!name || !p) {
        json_decref(name);
        json_decref(p);
        return NULL;
    }
    json_t *o = json_pack("{s:o,s:s,s:o,s:o,s:I,s:s,s:s,s:s,s:o}", "name", name, "type",
                          types[e->kind <= 3 ? e->kind : 3], "path", p, "size",
                          pj_int64_new((int64_t)e->size), "mode", (json_int_t)(e->mode & 0777),
                          "permissions", perm, "owner",
                          e2b_uid_name(names, e->uid, owner, sizeof(owner)), "group",
                          e2b_gid_name(names, e->gid, group, sizeof(group)), "modifiedTime",
                          pj_timestamp_new(e->mtime * 1000));
    if (o && e->kind == AGENT_ENTRY_SYMLINK) {
        char joined[2 * AGENT_MAX_PATH + 2], clean[AGENT_MAX_PATH];
        if (e->target[0] == '/') {
            snprintf(joined, sizeof(joined), "%s", e->target);
        } else {
            size_t dl = (size_t)(base_name(path) - path);
            snprintf(joined, sizeof(joined), "%.*s/%s", (int)dl, path, e->target);
        }
        json_t *t = e2b_clean_path(joined, clean, sizeof(clean)) ? NULL : json_string(clean);
        if (t)
            json_object_set_new(o, "symlinkTarget", t);
    }
    return o;
}
