#include "vmm/e2b/e2b_files.h"

#include "vmm/e2b/e2b_control.h"

void e2b_files(struct api_server *srv, struct api_conn *c, struct sandbox *sb)
{
    (void)srv;
    (void)sb;
    e2b_rest_error(c, 501, "/files is not served yet");
}
