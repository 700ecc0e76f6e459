/* Our own terminal (stdin) while a command runs on a guest terminal, as
 * docker's -t: its size for the guest's, raw mode for the run (every key
 * goes to the guest's terminal, which echoes and interprets it, ^C
 * included), and its mode put back.  `airlock run -t` (run_tty.c) and
 * `airlock exec -t` (exec_tty.c) both go through here. */
#ifndef AIRLOCK_CLI_LOCAL_TTY_H
#define AIRLOCK_CLI_LOCAL_TTY_H

#include <stdbool.h>
#include <stdint.h>
#include <termios.h>

struct local_tty {
    bool raw;             /* our stdin is a terminal */
    bool keys;            /* its keys go to the command (-i): raw while it runs */
    struct termios saved; /* its mode before, put back by local_tty_restore */
};

/* Looks at our stdin: when it is a terminal, t->raw, its mode saved and
 * *rows x *cols its size (left as they were if it has none).  `keys`:
 * our keys go to the command (-i), so the terminal is raw while it runs;
 * without, as docker's -t alone, it stays as it is and ^C is ours (the
 * command is signalled).  0, or -ENOTTY when stdin is no terminal. */
int local_tty_open(struct local_tty *t, uint16_t *rows, uint16_t *cols, bool keys);
/* Its size now: 0, or -1 (no terminal, or no size). */
int local_tty_size(const struct local_tty *t, uint16_t *rows, uint16_t *cols);
/* Raw for the run; local_tty_restore puts the saved mode back (both do
 * nothing without a terminal, or without `keys`). */
void local_tty_raw(const struct local_tty *t);
void local_tty_restore(const struct local_tty *t);

#endif
