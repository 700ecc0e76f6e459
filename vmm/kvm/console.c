#include "vmm/kvm/console.h"
#include "vmm/util/parse.h"
#include "vmm/util/nbfd.h"
#include "vmm/util/mono_deadline.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define PANIC_MARK "Kernel panic - not syncing"

/* A pipe or terminal is written through a non-blocking twin, so that a
 * stalled reader never blocks a thread (vmm/util/nbfd.h); anything else (a
 * file, a socket) as it is. */
static void console_use_twin(struct console *c)
{
    int t = nbfd_twin(c->out_fd);
    if (t < 0)
        return;
    if (c->out_owned)
        close(c->out_fd);
    c->out_fd = t;
    c->out_owned = c->out_nonblock = true;
}

int console_open(struct console *c, const char *spec, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    c->out_fd = c->in_fd = c->ready_efd = c->flush_efd = -1;
    c->msg_fd = STDERR_FILENO;
    pthread_mutex_init(&c->out_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->room, &ca);
    pthread_condattr_destroy(&ca);
    if (strcmp(spec, "none") == 0)
        return 0;
    if (strcmp(spec, "stdio") == 0) {
        c->out_fd = STDOUT_FILENO;
        c->out_is_stdout = true;
        c->in_fd = STDIN_FILENO;
        console_use_twin(c);
        return 0;
    }
    c->out_fd = open(spec, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (c->out_fd < 0) {
        int e = errno;
        snprintf(err, errlen, "--console %s: %s", spec, strerror(e));
        return -e;
    }
    c->out_owned = true;
    console_use_twin(c); /* a FIFO given as FILE */
    return 0;
}

int console_parse_limit(const char *opt, const char *val, uint64_t *out, char *err, size_t errlen)
{
    bool rate = !strcmp(opt, "--console-rate");
    uint64_t max = rate ? CONSOLE_RATE_KIB_MAX : CONSOLE_MAX_MIB_MAX;
    if (parse_uint(val, max, out) == 0)
        return 0;
    snprintf(err, errlen, "%s '%.64s': want %s, 0 (no limit) to %llu", opt, val,
             rate ? "KiB per second" : "whole MiB", (unsigned long long)max);
    return -EINVAL;
}

void console_set_limits(struct console *c, uint64_t rate_kib, uint64_t max_mib)
{
    c->rate_kib = rate_kib;
    c->max_mib = max_mib;
    rate_limit_init(&c->rate, rate_kib << 10, (rate_kib << 10) * CONSOLE_BURST_SECONDS);
}

/* Writes what the sink takes now and keeps the rest at the start of the
 * buffer; out_lock held.  Only a file or a socket (no twin) can block. */
static void console_push_locked(struct console *c)
{
    size_t off = 0;
    while (off < c->out_len && !c->out_failed) {
        ssize_t n = write(c->out_fd, c->out_buf + off, c->out_len - off);
        if (n < 0 && errno == EINTR && !atomic_load(&c->stopping))
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        if (n <= 0) {
            /* A closed or broken sink must not stall the guest: stop writing.
             * Our stdout's reader gone (`airlock boot | head`) ends the VM,
             * as SIGPIPE ends a writer. */
            c->out_failed = true;
            if (n < 0 && errno == EPIPE && c->out_is_stdout && c->reader_gone)
                c->reader_gone(c->reader_gone_opaque);
            break;
        }
        off += (size_t)n;
    }
    if (c->out_failed)
        off = c->out_len;
    memmove(c->out_buf, c->out_buf + off, c->out_len - off);
    c->out_len -= off;
    if (off) {
        c->stalled = false;
        pthread_cond_broadcast(&c->room);
    }
}

static bool mono_passed(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

/* Writes until at most `keep` bytes are left, waiting for the sink (10 ms
 * at a time: the loop's EPOLLOUT flush may wake us sooner).  A vCPU
 * (in_vcpu) waits until the sink takes bytes or the VM stops: the guest is
 * held back, as a UART with flow control would hold it, and loses nothing.
 * After the vCPUs are gone (console_close) the wait is bounded by
 * CONSOLE_STALL_MS without progress; then the sink counts as stalled.
 * out_lock held (the waits let go of it). */
static void console_push_waiting(struct console *c, size_t keep, bool in_vcpu)
{
    struct timespec give_up = mono_after_ms(CONSOLE_STALL_MS);
    for (;;) {
        size_t before = c->out_len;
        console_push_locked(c);
        if (c->out_len <= keep || c->out_failed || c->stalled || !c->out_nonblock ||
            (in_vcpu && atomic_load(&c->stopping)))
            return;
        if (c->out_len < before || in_vcpu)
            give_up = mono_after_ms(CONSOLE_STALL_MS);
        else if (mono_passed(&give_up)) {
            c->stalled = true;
            return;
        }
        struct timespec slice = mono_after_ms(10);
        pthread_cond_timedwait(&c->room, &c->out_lock, &slice);
    }
}

/* Asks the loop to flush soon (a partial line, or bytes the sink did not
 * take); out_lock held. */
static bool console_ask_loop(struct console *c)
{
    if (c->loop_asked || c->flush_efd < 0 || !c->out_len)
        return false;
    c->loop_asked = true;
    return true;
}

static void poke(int efd)
{
    uint64_t one = 1;
    if (write(efd, &one, sizeof(one)) < 0) {
        /* eventfd counter overflow is impossible here */
    }
}

static void console_on_writable(void *opaque, int fd, uint32_t events);

/* The loop's flush: never waits; bytes the sink did not take are written
 * when it says it has room. */
static void console_loop_flush(struct console *c)
{
    pthread_mutex_lock(&c->out_lock);
    c->loop_asked = false;
    console_push_locked(c);
    bool want = c->out_len && c->out_nonblock && !c->out_failed;
    if (want && !c->out_watched)
        c->out_watched = evloop_add(c->loop, c->out_fd, EPOLLOUT, console_on_writable, c) == 0;
    else if (!want && c->out_watched) {
        evloop_remove(c->loop, c->out_fd);
        c->out_watched = false;
    }
    pthread_mutex_unlock(&c->out_lock);
}

static void console_on_writable(void *opaque, int fd, uint32_t events)
{
    (void)fd;
    (void)events;
    console_loop_flush(opaque);
}

static void console_on_flush(void *opaque, int fd, uint32_t events)
{
    uint64_t v;
    (void)events;
    if (read(fd, &v, sizeof(v)) < 0)
        return;
    console_loop_flush(opaque);
}

void console_stop(struct console *c)
{
    atomic_store(&c->stopping, true);
    pthread_mutex_lock(&c->out_lock);
    pthread_cond_broadcast(&c->room);
    pthread_mutex_unlock(&c->out_lock);
}

/* Whether one more byte may reach the sink; reports a limit the first time
 * it drops something. */
static bool console_admit(struct console *c)
{
    if (c->max_mib && c->written >= c->max_mib << 20) {
        if (!c->max_fired)
            limit_report("console_max", c->max_mib << 20, 0,
                         "guest console reached --console-max %llu MiB: the rest is dropped",
                         (unsigned long long)c->max_mib);
        c->max_fired = true;
        return false;
    }
    if (rate_limit_take(&c->rate, limits_now_ns(), 1) == 0) {
        if (!c->rate_fired)
            limit_report("console_rate", c->rate_kib << 10, 0,
                         "guest console over --console-rate %llu KiB/s: the excess is dropped",
                         (unsigned long long)c->rate_kib);
        c->rate_fired = true;
        return false;
    }
    c->written++;
    return true;
}

/* Batches one byte: a line or a full buffer goes out at once; the start of
 * a partial line asks the event loop to write it soon (a prompt has no
 * newline to wait for).  A full buffer waits for the sink to take bytes or
 * for the VM to stop (then the byte is dropped and counted).  The event
 * loop never blocks on us: it takes only out_lock, which nobody holds
 * while waiting. */
static void console_out(struct console *c, uint8_t byte)
{
    if (c->out_fd < 0 || c->out_failed)
        return;
    if (!console_admit(c)) {
        c->dropped++;
        return;
    }
    pthread_mutex_lock(&c->out_lock);
    if (c->out_len == sizeof(c->out_buf))
        console_push_waiting(c, sizeof(c->out_buf) - 1, true);
    bool ask = false;
    if (c->out_len == sizeof(c->out_buf)) {
        c->stall_dropped++;
        ask = console_ask_loop(c); /* the loop writes it when the sink has room */
    } else {
        bool was_empty = c->out_len == 0;
        c->out_buf[c->out_len++] = (char)byte;
        bool now = byte == '\n' || c->out_len == sizeof(c->out_buf);
        if (now)
            console_push_locked(c);
        if (!now ? was_empty : c->out_len > 0)
            ask = console_ask_loop(c);
    }
    pthread_mutex_unlock(&c->out_lock);
    if (ask)
        poke(c->flush_efd);
}

void console_tx(void *opaque, uint8_t byte)
{
    struct console *c = opaque;
    console_out(c, byte);
    if (byte == '\n' || c->line_len == CONSOLE_LINE_MAX - 1) {
        c->line[c->line_len] = 0;
        if (!atomic_load(&c->panicked) && strstr(c->line, PANIC_MARK)) {
            size_t n = strcspn(c->line, "\r");
            snprintf(c->panic_line, sizeof(c->panic_line), "%.*s", (int)n, c->line);
            atomic_store(&c->panicked, true);
        }
        c->line_len = 0;
    }
    if (byte != '\n')
        c->line[c->line_len++] = (char)byte;
}

static void console_on_input(void *opaque, int fd, uint32_t events);

/* stdin is watched only while nothing is pending.  Pausing it with an
 * empty event mask is not enough: epoll still reports a hang-up, and a read
 * then would overwrite input the guest has not taken yet. */
static void console_watch_input(struct console *c, bool on)
{
    if (on == c->in_watched || c->in_eof)
        return;
    if (!on) {
        evloop_remove(c->loop, c->in_fd);
        c->in_watched = false;
    } else if (evloop_add(c->loop, c->in_fd, EPOLLIN, console_on_input, c) == 0) {
        c->in_watched = true;
    }
}

/* Offers what is pending to the guest; stops reading stdin until the guest
 * has taken all of it, so no input is dropped. */
static void console_feed(struct console *c)
{
    size_t n = serial_receive(c->serial, c->pending + c->pending_off,
                              c->pending_len - c->pending_off);
    c->pending_off += n;
    if (c->pending_off == c->pending_len)
        c->pending_off = c->pending_len = 0;
    console_watch_input(c, c->pending_len == 0);
}

static void console_on_input(void *opaque, int fd, uint32_t events)
{
    struct console *c = opaque;
    (void)fd;
    (void)events;
    if (c->pending_len) {
        console_watch_input(c, false);
        return;
    }
    ssize_t n = read(c->in_fd, c->pending, sizeof(c->pending));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        /* End of input: the guest simply gets no more. */
        console_watch_input(c, false);
        c->in_eof = true;
        return;
    }
    c->pending_off = 0;
    c->pending_len = (size_t)n;
    console_feed(c);
}

static void console_on_rx_ready(void *opaque, int fd, uint32_t events)
{
    struct console *c = opaque;
    uint64_t v;
    (void)fd;
    (void)events;
    if (read(c->ready_efd, &v, sizeof(v)) < 0)
        return;
    if (c->pending_len)
        console_feed(c);
}

void console_rx_ready(void *opaque)
{
    struct console *c = opaque;
    uint64_t one = 1;
    if (c->ready_efd >= 0 && write(c->ready_efd, &one, sizeof(one)) < 0) {
        /* eventfd counter overflow is impossible here */
    }
}

int console_attach(struct console *c, struct evloop *loop, struct serial *serial)
{
    c->serial = serial;
    c->loop = loop;
    if (c->out_fd >= 0) {
        int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (efd < 0)
            return -errno;
        int err = evloop_add(loop, efd, EPOLLIN, console_on_flush, c);
        if (err) {
            close(efd);
            return err;
        }
        c->flush_efd = efd; /* before vm_start: every vCPU thread sees it */
    }
    if (c->in_fd < 0)
        return 0;
    if (isatty(c->in_fd) && tcgetattr(c->in_fd, &c->saved_tty) == 0) {
        /* Characters go to the guest as typed and the guest echoes them;
         * ISIG stays so ^C still ends airlock. */
        struct termios raw = c->saved_tty;
        raw.c_lflag &= ~(ICANON | ECHO);
        raw.c_iflag &= ~(ICRNL | IXON);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        if (tcsetattr(c->in_fd, TCSANOW, &raw) == 0)
            c->tty_saved = true;
    }
    c->ready_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->ready_efd < 0)
        return -errno;
    int err = evloop_add(loop, c->ready_efd, EPOLLIN, console_on_rx_ready, c);
    if (!err) {
        err = evloop_add(loop, c->in_fd, EPOLLIN, console_on_input, c);
        c->in_watched = err == 0;
    }
    if (err == -EPERM || err == -EBADF) {
        /* stdin is a regular file or /dev/null (epoll refuses those), or
         * closed: the guest gets no input rather than airlock failing. */
        c->in_eof = true;
        err = 0;
    }
    return err;
}

void console_close(struct console *c)
{
    pthread_mutex_lock(&c->out_lock);
    if (c->out_fd >= 0)
        console_push_waiting(c, 0, false); /* the vCPUs are gone: the last bytes may wait */
    uint64_t lost = c->stall_dropped + c->out_len;
    c->out_len = 0;
    pthread_mutex_unlock(&c->out_lock);
    char msg[256];
    int n;
    if (c->dropped) {
        n = snprintf(msg, sizeof(msg), "airlock: console limits dropped %llu bytes of guest output\n",
                     (unsigned long long)c->dropped);
        nbfd_say(c->msg_fd, msg, (size_t)n);
    }
    if (lost && !c->out_failed) {
        n = snprintf(msg, sizeof(msg), "airlock: the console's reader was not reading when the VM "
                     "stopped: %llu bytes of guest output dropped\n", (unsigned long long)lost);
        nbfd_say(c->msg_fd, msg, (size_t)n);
    }
    c->dropped = c->stall_dropped = 0;
    if (c->tty_saved)
        tcsetattr(c->in_fd, TCSANOW, &c->saved_tty);
    c->tty_saved = false;
    if (c->out_owned && c->out_fd >= 0)
        close(c->out_fd);
    if (c->ready_efd >= 0)
        close(c->ready_efd);
    if (c->flush_efd >= 0)
        close(c->flush_efd);
    c->out_fd = c->ready_efd = c->flush_efd = -1;
}
