/* envd's process.Process service over /v1's commands (vmm/sandbox/
 * api_commands.h, background.h): every process is a background command,
 * its pid the guest's.
 *   Start       the command, then its events: start {pid}, data
 *               {stdout|stderr|pty: base64}, end {exitCode, exited,
 *               status, error}; keepalives while it is quiet
 *   Connect     the events of a running one, from now on
 *   List        the running ones {pid, tag, config}
 *   SendInput   stdin (or the terminal's input) bytes
 *   CloseStdin, SendSignal (SIGTERM, SIGKILL), Update (a terminal's size)
 * A process is found by pid or by tag; none found: not_found. */
#ifndef AIRLOCK_E2B_E2B_PROCESS_H
#define AIRLOCK_E2B_E2B_PROCESS_H

#include "vmm/sandbox/api_routes.h"

/* method: what follows "/process.Process/". */
void e2b_process(struct api_server *srv, struct api_conn *c, struct sandbox *sb, const char *method);

#endif
