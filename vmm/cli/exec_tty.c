/* `airlock exec -t`/`-it` (exec_tty.h).  The command is one of the API's
 * background commands, with "pty": that kind has a resize, a stdin that
 * stays open, and output one can re-attach to.  A thread of its own
 * follows the output from offset 0 and re-attaches at the last offset if
 * its connection ends before the exit record; this thread forwards our
 * keys (-i: POST .../stdin), our terminal's size (SIGWINCH: POST
 * .../resize) and the signals that end us.
 *
 * With -i our terminal is raw from the start to the end (local_tty.h, as
 * for `airlock run -it`) and its mode is put back before anything is printed,
 * on every way out: the signals that end us come on a signalfd, so this
 * thread's ordinary path restores it, never a handler.
 *
 * At the end the command's record is removed, as a foreground exec leaves
 * none.  When we end first (a signal; our stdout's reader gone) removing
 * it kills it: a client gone ends its command, as for a foreground exec. */
#include "vmm/cli/exec_tty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/cli/local_tty.h"
#include "vmm/cli/sandbox_options.h"
#include "vmm/cli/verb_api.h"
#include "vmm/sandbox/api_client.h"
#include "vmm/util/exit_codes.h"

/* Re-attaches in a row that brought no byte: the daemon ends a follow
 * only at the exit record or on an error, so this is a broken one. */
#define FOLLOW_MAX_IDLE 3
/* One stdin request: what one read of our terminal gives (a paste). */
#define KEYS_MAX (64u << 10)

struct follow {
    const char *sock;
    char base[256];       /* /v1/sandboxes/ID/commands/CID */
    int done_w;           /* one byte when the follow ended */
    atomic_bool stop;     /* we are ending: no re-attach */
    pthread_mutex_t lock; /* fd, for our shutdown of it */
    int fd;               /* the follow's connection, -1 between them */
    /* Written by the follow, read once it was joined: */
    json_t *exit;         /* the exit record */
    bool out_gone;        /* our stdout lost its reader */
    char err[256];
};

static void follow_set_fd(struct follow *f, int fd)
{
    pthread_mutex_lock(&f->lock);
    f->fd = fd;
    pthread_mutex_unlock(&f->lock);
}

/* One attach from *offset to its end (the exit record, or the stream
 * ended): 0, or -1 with f->err when the daemon refused it. */
static int follow_once(struct follow *f, uint64_t *offset)
{
    char path[320];
    snprintf(path, sizeof(path), "%s/output?offset=%llu&follow=true", f->base,
             (unsigned long long)*offset);
    struct api_client c;
    if (api_client_request(&c, f->sock, "GET", path, NULL, f->err, sizeof(f->err)))
        return -1;
    if (c.status != 200) {
        char buf[64];
        json_t *j = api_client_json(&c, f->err, sizeof(f->err));
        snprintf(f->err, sizeof(f->err), "%s", api_client_error_text(j, c.status, buf, sizeof(buf)));
        json_decref(j);
        api_client_close(&c);
        return -1;
    }
    follow_set_fd(f, c.fd);
    json_t *line;
    char err[128];
    while (!f->exit && !f->out_gone && (line = api_client_line(&c, err, sizeof(err)))) {
        const char *type = json_string_value(json_object_get(line, "type"));
        uint64_t at = (uint64_t)json_integer_value(json_object_get(line, "offset"));
        if (type && !strcmp(type, "exit")) {
            f->exit = json_incref(line);
        } else if (type && !strcmp(type, "skipped")) { /* the buffer lost them: go on after */
            *offset = at + (uint64_t)json_integer_value(json_object_get(line, "bytes"));
        } else if (type) { /* "stdout": a terminal's output is one stream */
            ssize_t n = api_client_line_write(line, STDOUT_FILENO);
            if (n < 0 && errno == EPIPE)
                f->out_gone = true;
            else if (n >= 0)
                *offset = at + (uint64_t)n;
        }
        json_decref(line);
    }
    follow_set_fd(f, -1);
    api_client_close(&c);
    return 0;
}

static void *follow_thread(void *arg)
{
    struct follow *f = arg;
    uint64_t offset = 0;
    for (int idle = 0; !f->exit && !f->out_gone && !atomic_load(&f->stop) &&
                       idle < FOLLOW_MAX_IDLE;) {
        uint64_t before = offset;
        if (follow_once(f, &offset))
            break;
        idle = offset == before ? idle + 1 : 0;
    }
    if (!f->exit && !f->err[0])
        snprintf(f->err, sizeof(f->err), "the daemon's stream ended without an exit record");
    (void)!write(f->done_w, "", 1);
    return NULL;
}

/* A request whose answer matters only by its status (stdin, resize,
 * delete): the status, or -1 when no daemon answered.  It says nothing:
 * our terminal may be raw. */
static int ask(const char *sock, const char *method, const char *path, json_t *body,
               const void *raw, size_t len)
{
    struct api_client c;
    char err[256];
    int rc = raw ? api_client_request_raw(&c, sock, method, path, raw, len, err, sizeof(err))
                 : api_client_request(&c, sock, method, path, body, err, sizeof(err));
    if (rc)
        return -1;
    json_decref(api_client_json(&c, err, sizeof(err))); /* the answer read to its end */
    api_client_close(&c);
    return c.status;
}

/* Our keys to the command's terminal; false once no more can go: our
 * stdin ended (sent as eof: the terminal's ^D) or the command's stdin is
 * closed (409). */
static bool send_keys(const char *sock, const char *base)
{
    static char keys[KEYS_MAX];
    ssize_t n;
    while ((n = read(STDIN_FILENO, keys, sizeof(keys))) < 0 && errno == EINTR)
        ;
    char path[320];
    snprintf(path, sizeof(path), "%s/stdin%s", base, n > 0 ? "" : "?eof=true");
    int status = ask(sock, "POST", path, NULL, keys, n > 0 ? (size_t)n : 0);
    return n > 0 && status != 409 && status >= 0;
}

static void send_size(const char *sock, const char *base, const struct local_tty *t)
{
    uint16_t rows, cols;
    if (local_tty_size(t, &rows, &cols))
        return;
    char path[320];
    snprintf(path, sizeof(path), "%s/resize", base);
    json_t *size = json_pack("{s:i,s:i}", "cols", cols, "rows", rows);
    ask(sock, "POST", path, size, NULL, 0); /* 409: it ended meanwhile */
    json_decref(size);
}

/* Starts the command: 0 with its path in base, or 125 after one line. */
static int start(const char *sock, const char *id, json_t *body, char *base, size_t cap)
{
    char path[200];
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/commands", id);
    int status;
    json_t *rec = verb_call(sock, "POST", path, body, 201, &status);
    const char *cid = json_string_value(json_object_get(rec, "id"));
    int rc = 0;
    if (!rec)
        rc = EXIT_AIRLOCK_ERROR;
    else if (!cid || !*cid || strlen(cid) > 32 || strpbrk(cid, "/?#% "))
        rc = verb_fail("the daemon's answer has no command id");
    else
        snprintf(base, cap, "%s/%s", path, cid);
    json_decref(rec);
    return rc;
}

/* Until the follow ends or a signal ends us: that signal, or 0. */
static int pump(struct follow *f, int done_r, int sfd, bool keys, const struct local_tty *t)
{
    for (;;) {
        struct pollfd p[3] = {{.fd = done_r, .events = POLLIN}, {.fd = sfd, .events = POLLIN},
                              {.fd = keys ? STDIN_FILENO : -1, .events = POLLIN}};
        if (poll(p, 3, -1) < 0 && errno != EINTR)
            return 0;
        if (p[0].revents)
            return 0;
        struct signalfd_siginfo si;
        if (p[1].revents && read(sfd, &si, sizeof(si)) == sizeof(si)) {
            if (si.ssi_signo != SIGWINCH)
                return (int)si.ssi_signo;
            send_size(f->sock, f->base, t);
        }
        if (p[2].revents)
            keys = send_keys(f->sock, f->base);
    }
}

int exec_tty_run(const char *sock, const char *id, json_t *body, bool with_stdin)
{
    struct local_tty term;
    uint16_t rows = 24, cols = 80; /* without a terminal of ours: the usual size */
    if (local_tty_open(&term, &rows, &cols, with_stdin) && with_stdin)
        return verb_fail("-t with -i: our stdin is not a terminal (drop -t to pipe input in)");
    json_object_set_new(body, "pty", json_pack("{s:i,s:i}", "cols", cols, "rows", rows));
    json_object_set_new(body, "background", json_true());
    if (with_stdin)
        json_object_set_new(body, "stdin_open", json_true());
    struct follow f = {.sock = sock, .fd = -1, .done_w = -1};
    if (start(sock, id, body, f.base, sizeof(f.base)))
        return EXIT_AIRLOCK_ERROR;

    /* Blocked before the follow starts, so its thread has them blocked
     * too, and left blocked: we are about to exit, and a second ^C must
     * not end us before the terminal is back and the status said. */
    static const int sigs[] = {SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaddset(&set, sigs[i]);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN); /* our stdout gone is EPIPE from the write */
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    int done[2] = {-1, -1};
    pthread_t th;
    pthread_mutex_init(&f.lock, NULL);
    bool up = sfd >= 0 && pipe2(done, O_CLOEXEC) == 0;
    f.done_w = done[1];
    int e = up ? pthread_create(&th, NULL, follow_thread, &f) : errno;
    up = !e;
    int signo = 0;
    if (up) {
        local_tty_raw(&term);
        signo = pump(&f, done[0], sfd, with_stdin, &term);
        local_tty_restore(&term);
    }

    /* The record goes: an ended command's is forgotten, a running one is
     * killed first; then the follow ends, if it had not. */
    atomic_store(&f.stop, true);
    ask(sock, "DELETE", f.base, NULL, NULL, 0);
    if (up) {
        pthread_mutex_lock(&f.lock);
        if (f.fd >= 0)
            shutdown(f.fd, SHUT_RDWR);
        pthread_mutex_unlock(&f.lock);
        pthread_join(th, NULL);
    }
    int status;
    if (!up)
        status = verb_fail("-t: cannot follow the command: %s", strerror(e));
    else if (signo)
        status = 128 + signo;
    else if (f.out_gone)
        status = 128 + SIGPIPE;
    else if (f.exit)
        status = verb_exit_status(f.exit);
    else
        status = verb_fail("%s", f.err);
    json_decref(f.exit);
    pthread_mutex_destroy(&f.lock);
    for (int i = 0; i < 2; i++)
        if (done[i] >= 0)
            close(done[i]);
    if (sfd >= 0)
        close(sfd);
    return status;
}
