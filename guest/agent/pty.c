/* The pseudo-terminal of an EXEC with AGENT_EXEC_F_TTY (proto.h): a fresh
 * pair from the devpts instance the agent mounted at /dev/pts, the slave
 * for the command, the master for exec.c's loop. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "guest/agent/agent.h"

/* The master: /dev/pts/ptmx names the agent's own instance (newinstance)
 * whatever /dev/ptmx is in the image; /dev/ptmx serves where that is not
 * mounted (--listen-unix on a host).  -errno on failure. */
static int open_master(void)
{
    int fd = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* The slave through the master (TIOCGPTPEER): no path lookup, so nothing
 * in the guest's /dev/pts can stand in for it. */
static int open_slave(int master)
{
    int unlock = 0;
    if (ioctl(master, TIOCSPTLCK, &unlock) < 0)
        return -errno;
    int fd = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int agent_pty_open(uint16_t rows, uint16_t cols, int *master, int *slave)
{
    *master = *slave = -1;
    int m = open_master();
    if (m < 0)
        return -m;
    int s = open_slave(m);
    struct winsize ws = {.ws_row = rows, .ws_col = cols};
    if (s < 0 || ioctl(m, TIOCSWINSZ, &ws) < 0) {
        int e = s < 0 ? -s : errno;
        if (s >= 0)
            close(s);
        close(m);
        return e;
    }
    *master = m;
    *slave = s;
    return 0;
}

int agent_pty_take(int slave, uint32_t uid, uint32_t gid)
{
    /* The caller's setsid() left it without a terminal: this one becomes
     * its controlling terminal, so ^C and job control work inside. */
    if (ioctl(slave, TIOCSCTTY, 0) < 0)
        return errno;
    /* The command's own terminal, as login and runc make it: it may
     * reopen it by name (/dev/pts/N), and nobody else may read it. */
    if (geteuid() == 0 && (fchown(slave, uid, gid) < 0 || fchmod(slave, 0620) < 0))
        return errno;
    return 0;
}

void agent_pty_resize(int master, uint16_t rows, uint16_t cols)
{
    struct winsize ws = {.ws_row = rows, .ws_col = cols};
    /* The kernel sends SIGWINCH to the foreground group when it changed. */
    ioctl(master, TIOCSWINSZ, &ws);
}

void agent_pty_eof(int master)
{
    /* The host's input ended: the terminal's end-of-file character, so a
     * reader in canonical mode (a shell, cat) sees EOF while the terminal
     * stays open for output.  ^D unless the command changed it. */
    struct termios t;
    unsigned char c = tcgetattr(master, &t) == 0 && t.c_cc[VEOF] ? t.c_cc[VEOF] : 4;
    (void)!write(master, &c, 1);
}
