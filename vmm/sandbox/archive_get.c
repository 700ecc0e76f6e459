/* GET .../archive?path=/ABS: a tar of a guest file or folder
 * (vmm/sandbox/archive.h), walked and written by vmm/sandbox/guest_tree.c
 * straight into the chunked answer. */
#include "vmm/sandbox/archive.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "vmm/sandbox/guest_fs.h"
#include "vmm/sandbox/guest_tree.h"

static const struct guest_tree_limits get_limits = {
    ARCHIVE_GET_MAX_ENTRIES, ARCHIVE_GET_MAX_BYTES, ARCHIVE_GET_MAX_NAMES,
};

/* The answer begins with the tar's first bytes, so a tar that cannot
 * even start is still a plain error. */
struct answer {
    struct api_conn *c;
    int begun;
};

static int to_client(void *opaque, const void *buf, size_t len)
{
    struct answer *a = opaque;
    if (!a->begun) {
        api_chunked_begin(a->c, 200, "application/x-tar");
        a->begun = 1;
    }
    api_chunked_write(a->c, buf, len);
    return a->c->broken ? -1 : 0;
}

void archive_get(struct api_conn *c, const struct sandbox *sb)
{
    char path[AGENT_MAX_PATH];
    if (guest_fs_path(c, path))
        return;
    size_t pl = strlen(path);
    while (pl > 1 && path[pl - 1] == '/')
        path[--pl] = '\0';
    const char *top = pl == 1 ? "." : strrchr(path, '/') + 1;
    int agent = guest_fs_dial(c, sb);
    if (agent < 0)
        return;
    struct guest_tree t;
    if (guest_tree_walk(&t, agent, path, &get_limits)) {
        /* the path itself missing or refused: as any other route says it */
        if (t.n == 0 && t.err != EINVAL && t.err != ENOMEM && t.err != EFBIG)
            guest_fs_error(c, path, t.err);
        else
            api_error(c, t.err == ENOMEM ? 503 : t.err == EFBIG ? 413 : guest_fs_status(t.err),
                      "path", "%s", t.why);
    } else {
        struct answer a = {c, 0};
        int rc = guest_tree_write(&t, path, top, to_client, &a);
        if (!rc && !c->broken)
            api_chunked_end(c);
        else if (a.begun)
            api_chunked_abort(c);
        else
            api_error(c, 503, NULL, "cannot write a tar: %s", strerror(ENOMEM));
    }
    close(agent);
    guest_tree_free(&t);
}
