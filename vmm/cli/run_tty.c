/* `airlock run -t`: the guest command gets a terminal of our stdin's size;
 * while it runs, our terminal is raw (every key goes to the guest's
 * terminal, which echoes and interprets it, ^C included) and its size
 * changes follow as WINSIZE.  Only the waiting parent, which outlives the
 * VM process and ends through `finish` on every path, touches the mode,
 * so it is put back even when the VM process is killed. */
#include "vmm/cli/run_tty.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

int run_tty_prepare(struct run_tty *t, struct agent_exec_req *req, bool with_stdin, char *err,
                    size_t errlen)
{
    t->win_r = t->win_w = -1;
    if (!t->on)
        return 0;
    req->flags |= AGENT_EXEC_F_TTY;
    struct winsize ws;
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &t->saved) < 0) {
        /* As docker: -t alone gives a terminal of unknown size (0 x 0),
         * -it wants ours to take the keys from. */
        if (with_stdin) {
            snprintf(err, errlen, "-t with -i: our stdin is not a terminal (drop -t to pipe "
                     "input in)");
            return -ENOTTY;
        }
        return 0;
    }
    if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) {
        req->tty_rows = ws.ws_row;
        req->tty_cols = ws.ws_col;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "-t: pipe: %m");
        return -errno;
    }
    /* A size nobody reads yet is dropped, never waited for. */
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    t->win_r = p[0];
    t->win_w = p[1];
    t->raw = true;
    return 0;
}

void run_tty_start(struct run_tty *t)
{
    if (!t->raw)
        return;
    struct termios raw = t->saved;
    cfmakeraw(&raw);
    tcsetattr(STDIN_FILENO, TCSANOW, &raw);
}

void run_tty_winch(struct run_tty *t)
{
    struct winsize ws;
    if (!t->raw || ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0)
        return;
    uint8_t rec[AGENT_SIGQ_WINSIZE_LEN];
    agent_sigq_winsize(rec, ws.ws_row, ws.ws_col);
    (void)!write(t->win_w, rec, sizeof(rec));
}

void run_tty_restore(struct run_tty *t)
{
    if (t->raw)
        tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
}
