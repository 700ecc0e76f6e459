#include "sandbox/exec_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent_client/agent_conn.h"
#include "sandbox/vm_proc.h"
#include "util/base64.h"

#define CHUNK (64 * 1024)

struct job {
    int agent;
    const struct agent_exec_req *req;
    int out_w, err_w, in_fd;
    uint64_t max_output;
    struct agent_exec_result res;
    int rc;
};

/* agent_exec on its own thread: it writes the output into two pipes,
 * which the connection's thread turns into lines. */
static void *exec_thread(void *arg)
{
    struct job *j = arg;
    j->rc = agent_exec(j->agent, j->req, j->out_w, j->err_w, j->in_fd, j->max_output, &j->res);
    close(j->out_w);
    close(j->err_w);
    return NULL;
}

/* A line for `len` bytes of a stream.  The text goes as a JSON string
 * when it is UTF-8; a sequence cut at the chunk's end is held back for
 * the next chunk (*keep bytes at the end); anything else goes as base64. */
static json_t *data_line(const char *type, const char *p, size_t len, size_t *keep)
{
    *keep = 0;
    json_t *s = json_stringn(p, len);
    for (size_t k = 1; !s && k <= 3 && k < len; k++) {
        unsigned char lead = (unsigned char)p[len - k];
        if ((lead & 0xC0) == 0xC0) { /* the start of the last, cut sequence */
            s = json_stringn(p, len - k);
            if (s)
                *keep = k;
            break;
        }
        if ((lead & 0xC0) != 0x80)
            break;
    }
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string(type));
    if (s) {
        json_object_set_new(o, "data", s);
        return o;
    }
    char *b64 = base64_encode(p, len);
    if (b64)
        json_object_set_new(o, "data_b64", json_string(b64));
    free(b64);
    return o;
}

struct stream {
    int fd;
    const char *type;
    char buf[CHUNK + 4];
    size_t held; /* bytes of a cut UTF-8 sequence from the last chunk */
};

/* Reads once from s->fd; false at EOF or error (the fd is then closed). */
static bool pump(struct api_conn *c, struct stream *s)
{
    ssize_t n = read(s->fd, s->buf + s->held, CHUNK);
    if (n < 0 && errno == EINTR)
        return true;
    if (n <= 0) {
        size_t none;
        if (s->held) /* a sequence cut at the very end: it goes as base64 */
            api_stream_line(c, data_line(s->type, s->buf, s->held, &none));
        close(s->fd);
        s->fd = -1;
        return false;
    }
    size_t len = s->held + (size_t)n, keep = 0;
    if (!c->broken)
        api_stream_line(c, data_line(s->type, s->buf, len, &keep));
    memmove(s->buf, s->buf + len - keep, keep);
    s->held = keep;
    return true;
}

static int stdin_fd(const struct exec_input *in)
{
    if (!in || !in->data)
        return -1;
    int fd = memfd_create("airlock-stdin", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (agent_write_all(fd, in->data, in->len)) {
        close(fd);
        return -EIO;
    }
    lseek(fd, 0, SEEK_SET);
    return fd;
}

static json_t *exit_line(const struct job *j, int64_t ms)
{
    const struct agent_exec_result *r = &j->res;
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string("exit"));
    if (j->rc) {
        json_object_set_new(o, "exit_code", json_integer(125));
        json_object_set_new(o, "signal", json_null());
        json_object_set_new(o, "error", json_sprintf("lost the guest agent: %s", strerror(-j->rc)));
    } else {
        json_object_set_new(o, "exit_code", json_integer(agent_result_status(r)));
        json_object_set_new(o, "signal", r->signaled && !r->timed_out ? json_integer(r->value)
                                                                       : json_null());
        json_object_set_new(o, "error", r->error ? json_sprintf("%s", strerror(r->error))
                                                 : json_null());
    }
    json_object_set_new(o, "timed_out", json_boolean(r->timed_out));
    json_object_set_new(o, "output_truncated", json_boolean(r->dropped > 0));
    json_object_set_new(o, "duration_ms", json_integer(ms));
    return o;
}

int exec_stream_run(struct api_conn *c, const char *sock, const struct agent_exec_req *req,
                    const struct exec_input *in, uint64_t max_output)
{
    int agent = vm_proc_dial(sock);
    if (agent < 0)
        return agent;
    struct job j = {.agent = agent, .req = req, .max_output = max_output, .in_fd = -1};
    struct agent_exec_req with_stdin = *req;
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    int rc = 0;
    if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
        rc = -errno;
    if (!rc && (j.in_fd = stdin_fd(in)) < -1)
        rc = j.in_fd;
    if (!rc && j.in_fd >= 0) {
        with_stdin.flags |= AGENT_EXEC_F_STDIN;
        j.req = &with_stdin;
    }
    j.out_w = out[1];
    j.err_w = err[1];
    pthread_t t;
    if (!rc && (rc = -pthread_create(&t, NULL, exec_thread, &j)) == 0) {
        int64_t t0 = agent_mono_ms();
        api_stream_begin(c, 200);
        struct stream s[2] = {{.fd = out[0], .type = "stdout"}, {.fd = err[0], .type = "stderr"}};
        while (s[0].fd >= 0 || s[1].fd >= 0) {
            struct pollfd p[2] = {{.fd = s[0].fd, .events = POLLIN}, {.fd = s[1].fd, .events = POLLIN}};
            if (poll(p, 2, -1) < 0 && errno != EINTR)
                break;
            for (int i = 0; i < 2; i++)
                if (p[i].revents && !pump(c, &s[i]))
                    p[i].fd = -1;
            if (c->broken) { /* the client is gone: agent_exec sees EPIPE and returns */
                for (int i = 0; i < 2; i++)
                    if (s[i].fd >= 0)
                        close(s[i].fd), s[i].fd = -1;
            }
        }
        pthread_join(t, NULL);
        api_stream_line(c, exit_line(&j, agent_mono_ms() - t0));
        api_stream_end(c);
        out[0] = err[0] = -1; /* closed by pump */
        out[1] = err[1] = -1; /* closed by exec_thread */
    }
    for (int i = 0; i < 2; i++) {
        if (out[i] >= 0)
            close(out[i]);
        if (err[i] >= 0)
            close(err[i]);
    }
    if (j.in_fd >= 0)
        close(j.in_fd);
    close(agent);
    return rc;
}
