/* `airlock exec -t` and `-it`: a command on a terminal in the sandbox, as
 * `docker exec -t`/`-it`, through the API's background commands. */
#ifndef AIRLOCK_CLI_EXEC_TTY_H
#define AIRLOCK_CLI_EXEC_TTY_H

#include <stdbool.h>

#include <jansson.h>

/* Runs the command `body` describes (argv, env, cwd, user, timeout_s) in
 * sandbox `id` on a guest terminal of our terminal's size (80 x 24 when
 * stdin is none) until it ends; with_stdin (-i) forwards our stdin, which
 * must then be a terminal.  The exit status as `airlock run -t` gives
 * it; 128+N when signal N ended us first (the command is then killed). */
int exec_tty_run(const char *sock, const char *id, json_t *body, bool with_stdin);

#endif
