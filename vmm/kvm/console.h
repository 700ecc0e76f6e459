/* The host end of the guest's serial console: where its output goes
 * (stdout, a file, nowhere) and where its input comes from (stdin, when the
 * console is stdio).  It also watches the output for a kernel panic, so a
 * guest that panics and reboots is not mistaken for one that finished. */
#ifndef AIRLOCK_KVM_CONSOLE_H
#define AIRLOCK_KVM_CONSOLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <termios.h>

#include "devices/serial.h"
#include "vmm/kvm/evloop.h"
#include "vmm/audit/limits.h"

#define CONSOLE_LINE_MAX 160
#define CONSOLE_OUT_BUF  4096

/* A guest printing forever must neither fill the host's disk nor keep
 * airlock writing flat out: output is metered at 1 MiB/s (bursts of 4 s'
 * worth pass at once, so a boot log is never cut) and at most 64 MiB reach
 * the sink; the rest is dropped and counted.  0 turns either off. */
#define CONSOLE_DEFAULT_RATE_KIB 1024
#define CONSOLE_DEFAULT_MAX_MIB  64
#define CONSOLE_RATE_KIB_MAX     (1u << 20) /* 1 GiB/s */
#define CONSOLE_MAX_MIB_MAX      (1u << 24)
#define CONSOLE_BURST_SECONDS    4
/* How long the last output may wait, once the VM has stopped, for a sink
 * that takes nothing (a stopped reader, a terminal in XOFF). */
#define CONSOLE_STALL_MS         1000

struct console {
    int out_fd;      /* -1: discard */
    bool out_owned;  /* opened by us (a FILE console, or stdout's non-blocking twin) */
    bool out_failed; /* a write failed: output is dropped from then on */
    bool out_nonblock; /* out_fd never waits (vmm/util/nbfd.h); else a file, or a socket */
    int msg_fd;      /* where console_close reports (stderr, or its non-blocking twin) */
    bool out_is_stdout; /* --console stdio */
    /* Called (any thread, out_lock held) when our stdout lost its reader
     * (EPIPE); NULL: the output is dropped from then on. */
    void (*reader_gone)(void *opaque);
    void *reader_gone_opaque;
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
    /* Output is batched: written a line (or a full buffer) at a time by
     * the vCPU thread, and a partial line (a prompt) or what a slow sink
     * did not take by the event loop, woken through flush_efd (and then
     * by EPOLLOUT on out_fd while bytes wait).  out_lock covers the buffer
     * and the writes, so bytes leave in the order the guest sent them; no
     * thread waits for the sink while holding it (the writes do not
     * block, and a vCPU waiting for room sleeps on `room`, which lets go
     * of it).  While the VM runs, a sink that takes nothing holds the
     * guest back (no output is lost); console_stop ends every wait, so
     * airlock's end (a signal, a timeout) never waits on a reader who
     * stopped reading.  Once the VM has stopped, the last bytes wait at
     * most CONSOLE_STALL_MS. */
    pthread_mutex_t out_lock;
    pthread_cond_t room; /* the buffer has room, or the console stops */
    char out_buf[CONSOLE_OUT_BUF];
    size_t out_len;
    int flush_efd;
    bool loop_asked;  /* flush_efd was written and the loop has not flushed yet */
    bool out_watched; /* out_fd is in the event loop for EPOLLOUT */
    bool stalled;
    atomic_bool stopping; /* the VM stops: no more waiting for the sink */
    uint64_t stall_dropped;
    /* Limits (guarded by the serial lock, like line). */
    struct rate_limit rate;
    uint64_t rate_kib, max_mib; /* as given, for messages; 0 = off */
    uint64_t written, dropped;
    bool rate_fired, max_fired;
};

/* `spec` is "stdio", "none" or a file path (created or truncated).
 * -errno with `err` naming the file. */
int console_open(struct console *c, const char *spec, char *err, size_t errlen);

/* Parses the value of --console-rate (KiB/s) or --console-max (MiB), the
 * option named by `opt`; 0 or -EINVAL with `err` naming option and value. */
int console_parse_limit(const char *opt, const char *val, uint64_t *out, char *err, size_t errlen);

/* Sets the output limits (KiB/s, MiB; 0 = no limit) after console_open. */
void console_set_limits(struct console *c, uint64_t rate_kib, uint64_t max_mib);

/* Starts feeding input to `serial` from the event loop. */
int console_attach(struct console *c, struct evloop *loop, struct serial *serial);

/* serial_ops callbacks. */
void console_tx(void *opaque, uint8_t byte);
void console_rx_ready(void *opaque);

/* The VM stops: a vCPU waiting for the sink to take bytes stops waiting.
 * Any thread; before vm_join. */
void console_stop(struct console *c);

/* Writes what is still buffered (waiting at most CONSOLE_STALL_MS for a
 * sink that takes nothing), says how much output the limits dropped,
 * restores the terminal and closes what console_open opened.  Only once no
 * vCPU runs. */
void console_close(struct console *c);

#endif
