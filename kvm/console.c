#include "kvm/console.h"
#include "util/parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define PANIC_MARK "Kernel panic - not syncing"

int console_open(struct console *c, const char *spec, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    c->out_fd = c->in_fd = c->ready_efd = c->flush_efd = -1;
    pthread_mutex_init(&c->out_lock, NULL);
    if (strcmp(spec, "none") == 0)
        return 0;
    if (strcmp(spec, "stdio") == 0) {
        c->out_fd = STDOUT_FILENO;
        c->in_fd = STDIN_FILENO;
        return 0;
    }
    c->out_fd = open(spec, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (c->out_fd < 0) {
        int e = errno;
        snprintf(err, errlen, "--console %s: %s", spec, strerror(e));
        return -e;
    }
    c->out_owned = true;
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

static void console_write_all(struct console *c, const void *buf, size_t len)
{
    const char *p = buf;
    while (len && !c->out_failed) {
        ssize_t n = write(c->out_fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            /* A closed or broken sink must not stall the guest: stop writing. */
            c->out_failed = true;
            return;
        }
        p += n;
        len -= (size_t)n;
    }
}

/* Writes the buffered bytes out; out_lock held. */
static void console_flush_locked(struct console *c)
{
    console_write_all(c, c->out_buf, c->out_len);
    c->out_len = 0;
}

static void console_on_flush(void *opaque, int fd, uint32_t events)
{
    struct console *c = opaque;
    uint64_t v;
    (void)events;
    if (read(fd, &v, sizeof(v)) < 0)
        return;
    pthread_mutex_lock(&c->out_lock);
    console_flush_locked(c);
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
 * newline to wait for).  The event loop never blocks on us: it takes only
 * out_lock. */
static void console_out(struct console *c, uint8_t byte)
{
    if (c->out_fd < 0 || c->out_failed)
        return;
    if (!console_admit(c)) {
        c->dropped++;
        return;
    }
    pthread_mutex_lock(&c->out_lock);
    bool was_empty = c->out_len == 0;
    c->out_buf[c->out_len++] = (char)byte;
    bool now = byte == '\n' || c->out_len == sizeof(c->out_buf);
    if (now)
        console_flush_locked(c);
    pthread_mutex_unlock(&c->out_lock);
    uint64_t one = 1;
    if (!now && was_empty && c->flush_efd >= 0 && write(c->flush_efd, &one, sizeof(one)) < 0) {
        /* eventfd counter overflow is impossible here */
    }
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
        console_flush_locked(c);
    pthread_mutex_unlock(&c->out_lock);
    if (c->dropped)
        fprintf(stderr, "airlock: console limits dropped %llu bytes of guest output\n",
                (unsigned long long)c->dropped);
    c->dropped = 0;
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
