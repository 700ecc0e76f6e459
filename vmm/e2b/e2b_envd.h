/* E2B's sandbox plane ("envd", its spec/envd/), one sandbox's, named by
 * the E2b-Sandbox-Id header:
 *   GET  /health                          204; 502 when the sandbox is gone
 *   POST /process.Process/{Start, Connect, List, SendInput, SendSignal,
 *                          CloseStdin, Update}        (e2b_process.h)
 *   POST /filesystem.Filesystem/{Stat, MakeDir, Move, ListDir, Remove,
 *                                WatchDir}            (e2b_filesystem.h)
 *   GET|POST /files                       (e2b_files.h)
 * Every call but /health carries the sandbox's access token
 * (X-Access-Token) or gets 401: knowing a sandbox's id is not enough. */
#ifndef AIRLOCK_E2B_E2B_ENVD_H
#define AIRLOCK_E2B_E2B_ENVD_H

#include "vmm/sandbox/api_routes.h"

void e2b_envd(struct api_server *srv, struct api_conn *c, const char *sandbox_id);

#endif
