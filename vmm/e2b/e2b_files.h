/* envd's /files: GET one file's bytes, POST one or more files (multipart
 * or octet-stream), over /v1's file operations (vmm/sandbox/files.h). */
#ifndef AIRLOCK_E2B_E2B_FILES_H
#define AIRLOCK_E2B_E2B_FILES_H

#include "vmm/sandbox/api_routes.h"

void e2b_files(struct api_server *srv, struct api_conn *c, struct sandbox *sb);

#endif
