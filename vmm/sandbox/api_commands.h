/* The API's commands of one sandbox:
 *   POST   .../commands                 run one: 200 and its output as a
 *                                       stream of JSON lines, or with
 *                                       "background": true, 201 and its record
 *   GET    .../commands                 {"commands": [record...]} (background)
 *   GET    .../commands/{cid}           its record (vmm/sandbox/background.h)
 *   DELETE .../commands/{cid}           204 (SIGKILL first if it runs)
 *   GET    .../commands/{cid}/output?offset=N&follow=true
 *                                       its output from byte N, as lines
 *   POST   .../commands/{cid}/stdin?eof=true   the body to its stdin
 *   POST   .../commands/{cid}/signal    {"signal": "TERM" | 15}
 *   POST   .../commands/{cid}/resize    {"cols": C, "rows": R}: a command
 *                                       started with "pty" (vmm/sandbox/api_pty.h)
 */
#ifndef AIRLOCK_SANDBOX_API_COMMANDS_H
#define AIRLOCK_SANDBOX_API_COMMANDS_H

#include "vmm/sandbox/api_routes.h"

struct bg_cmd;

/* Starts the command a command request's object describes (the fields
 * above), in the background whatever its "background" says: its record
 * with a reference (bg_put), or NULL with the error answered on c.  o
 * stays the caller's.  The one way every API starts a command. */
struct bg_cmd *api_command_start(struct api_server *srv, struct api_conn *c, struct sandbox *sb,
                                 json_t *o);

/* `sub` is the path after ".../commands": "" or "/{cid}[/...]". */
void api_commands(struct api_server *srv, struct api_conn *c, struct sandbox *sb, const char *sub);

#endif
