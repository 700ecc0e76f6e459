#include "vmm/e2b/e2b_filesystem.h"

#include "vmm/e2b/connect_call.h"

void e2b_filesystem(struct api_server *srv, struct api_conn *c, struct sandbox *sb,
                    const char *method)
{
    (void)srv;
    (void)sb;
    struct connect_call k;
    json_t *msg;
    if (connect_call_open(&k, c, &msg) == 0) {
        connect_fail(&k, "unimplemented", "filesystem.Filesystem/%.64s is not served yet", method);
        json_decref(msg);
    }
    connect_call_close(&k);
}
