/* `airlock run -t`: the guest command gets a terminal of our stdin's size;
 * while it runs, its size changes follow as WINSIZE, and with -i our
 * terminal is raw (local_tty.h).  Only the waiting parent, which outlives the VM
 * process and ends through `finish` on every path, touches the mode, so
 * it is put back even when the VM process is killed. */
#include "vmm/cli/run_tty.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int run_tty_prepare(struct run_tty *t, struct agent_exec_req *req, bool with_stdin, char *err,
                    size_t errlen)
{
    t->win_r = t->win_w = -1;
    t->term.raw = false;
    if (!t->on)
        return 0;
    req->flags |= AGENT_EXEC_F_TTY;
    if (local_tty_open(&t->term, &req->tty_rows, &req->tty_cols, with_stdin)) {
        /* As docker: -t alone gives a terminal of unknown size (0 x 0),
         * -it wants ours to take the keys from. */
        if (with_stdin) {
            snprintf(err, errlen, "-t with -i: our stdin is not a terminal (drop -t to pipe "
                     "input in)");
            return -ENOTTY;
        }
        return 0;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        int e = errno;
        snprintf(err, errlen, "-t: pipe: %s", strerror(e));
        t->term.raw = false;
        return -e;
    }
    /* A size nobody reads yet is dropped, never waited for. */
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    t->win_r = p[0];
    t->win_w = p[1];
    return 0;
}

void run_tty_start(struct run_tty *t)
{
    local_tty_raw(&t->term);
}

void run_tty_winch(struct run_tty *t)
{
    uint16_t rows, cols;
    if (local_tty_size(&t->term, &rows, &cols))
        return;
    uint8_t rec[AGENT_SIGQ_WINSIZE_LEN];
    agent_sigq_winsize(rec, rows, cols);
    (void)!write(t->win_w, rec, sizeof(rec));
}

void run_tty_restore(struct run_tty *t)
{
    local_tty_restore(&t->term);
}
