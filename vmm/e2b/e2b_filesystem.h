/* envd's filesystem.Filesystem service over /v1's file operations
 * (vmm/sandbox/): Stat, MakeDir, Move, ListDir, Remove, WatchDir. */
#ifndef AIRLOCK_E2B_E2B_FILESYSTEM_H
#define AIRLOCK_E2B_E2B_FILESYSTEM_H

#include "vmm/sandbox/api_routes.h"

/* method: what follows "/filesystem.Filesystem/". */
void e2b_filesystem(struct api_server *srv, struct api_conn *c, struct sandbox *sb,
                    const char *method);

#endif
