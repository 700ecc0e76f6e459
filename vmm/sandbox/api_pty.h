/* Terminals through the API: a command with "pty": {"cols": C, "rows": R}
 * runs on a pseudo-terminal in the guest (the agent's AGENT_EXEC_F_TTY:
 * its stdout and stderr are one stream, the terminal's), and
 *   POST .../commands/{cid}/resize   {"cols": C, "rows": R}
 * gives a background one a new size (the agent's WINSIZE: the command's
 * foreground group gets SIGWINCH). */
#ifndef AIRLOCK_SANDBOX_API_PTY_H
#define AIRLOCK_SANDBOX_API_PTY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "vmm/sandbox/api_fields.h"
#include "vmm/sandbox/background.h"

/* What a terminal's size holds (struct winsize's unsigned short); 0 is
 * "unknown" to the kernel and refused here: a client sends a real size. */
#define PTY_DIM_MAX 65535

struct pty_size {
    uint16_t cols, rows;
};

/* A size object {"cols": C, "rows": R}: both whole numbers from 1 to
 * PTY_DIM_MAX, nothing else in it.  `name` is what the client called it
 * ("pty"; "" for a body that is the size itself) and prefixes the member
 * blamed ("pty.cols", "rows", "pty.colour" for an unknown one).  0, or
 * -EINVAL with `field` and `why` filled.  Pure: no answer is sent. */
int pty_size_parse(const json_t *v, const char *name, struct pty_size *out, char *field,
                   size_t fieldlen, char *why, size_t whylen);

/* The request's member `name` as a size: 1 and *out when it is there and
 * good, 0 when absent; a bad one answers 400 naming the member (f fails). */
int get_pty(struct fields *f, const char *name, struct pty_size *out);

/* POST .../commands/{cid}/resize of background command `bc` (`id`). */
void api_pty_resize(struct api_conn *c, struct bg_cmd *bc, const char *id);

#endif
