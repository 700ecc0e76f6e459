#include "vmm/cli/local_tty.h"

#include <errno.h>
#include <sys/ioctl.h>
#include <unistd.h>

int local_tty_open(struct local_tty *t, uint16_t *rows, uint16_t *cols, bool keys)
{
    t->keys = keys;
    t->raw = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &t->saved) == 0;
    if (!t->raw)
        return -ENOTTY;
    local_tty_size(t, rows, cols);
    return 0;
}

int local_tty_size(const struct local_tty *t, uint16_t *rows, uint16_t *cols)
{
    struct winsize ws;
    /* 0 x 0 is a terminal that never had a size set (a bare pty): none. */
    if (!t->raw || ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0 || !ws.ws_row || !ws.ws_col)
        return -1;
    *rows = ws.ws_row;
    *cols = ws.ws_col;
    return 0;
}

void local_tty_raw(const struct local_tty *t)
{
    if (!t->raw || !t->keys)
        return;
    struct termios raw = t->saved;
    cfmakeraw(&raw);
    tcsetattr(STDIN_FILENO, TCSANOW, &raw);
}

void local_tty_restore(const struct local_tty *t)
{
    if (t->raw && t->keys)
        tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
}
