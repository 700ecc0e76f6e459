/* The host end of the guest's serial console: where its output goes
 * (stdout, a file, nowhere) and where its input comes from (stdin, when the
 * console is stdio).  It also watches the output for a kernel panic, so a
 * guest that panics and reboots is not mistaken for one that finished. */
#ifndef AIRLOCK_VMM_CONSOLE_H
#define AIRLOCK_VMM_CONSOLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <termios.h>

#include "devices/serial.h"
#include "vmm/evloop.h"

#define CONSOLE_LINE_MAX 160

struct console {
    int out_fd;      /* -1: discard */
    bool out_owned;  /* opened by us (a FILE console) */
    bool out_failed; /* a write failed: output is dropped from then on */
    int in_fd;       /* -1: no input */
    bool in_watched; /* stdin is in the event loop */
    bool in_eof;     /* stdin ended (or cannot be watched) */
    bool tty_saved;
    struct termios saved_tty;
    struct serial *serial;
    struct evloop *loop;
    int ready_efd; /* the guest can take more input */
    unsigned char pending[256];
    size_t pending_off, pending_len;
    /* Output line being assembled (guarded by the serial lock, which every
     * console_tx call holds). */
    char line[CONSOLE_LINE_MAX];
    size_t line_len;
    atomic_bool panicked;
    char panic_line[CONSOLE_LINE_MAX];
};

/* `spec` is "stdio", "none" or a file path (created or truncated).
 * -errno with `err` naming the file. */
int console_open(struct console *c, const char *spec, char *err, size_t errlen);

/* Starts feeding input to `serial` from the event loop. */
int console_attach(struct console *c, struct evloop *loop, struct serial *serial);

/* serial_ops callbacks. */
void console_tx(void *opaque, uint8_t byte);
void console_rx_ready(void *opaque);

/* Restores the terminal and closes what console_open opened. */
void console_close(struct console *c);

#endif
