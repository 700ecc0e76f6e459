/* `airlock run -t`: the caller's terminal for a command on a guest
 * terminal (agent protocol 6, AGENT_EXEC_F_TTY), as `docker run -t`. */
#ifndef AIRLOCK_CLI_RUN_TTY_H
#define AIRLOCK_CLI_RUN_TTY_H

#include <stdbool.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/cli/local_tty.h"

struct run_tty {
    bool on;            /* -t given */
    struct local_tty term; /* our stdin, raw during the run when a terminal */
    int win_r, win_w;   /* size records (agent_sigq_winsize): the VM process
                         * reads, the waiting parent writes; -1: none */
};

/* Before the VM process is forked: with -t asks req for a terminal, of
 * our stdin's size when it is one, and makes the size records' pipe.
 * 0, or -errno with err filled (with_stdin: -i, which needs a terminal
 * as docker's -it does). */
int run_tty_prepare(struct run_tty *t, struct agent_exec_req *req, bool with_stdin, char *err,
                    size_t errlen);
/* In the waiting parent (vmm/jail/detach.h start): our terminal raw. */
void run_tty_start(struct run_tty *t);
/* ... on SIGWINCH: its new size to the VM process, never blocking. */
void run_tty_winch(struct run_tty *t);
/* ... at its end, on every path (finish): the terminal's mode back. */
void run_tty_restore(struct run_tty *t);

#endif
