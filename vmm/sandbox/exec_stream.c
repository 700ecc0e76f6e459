#include "vmm/sandbox/exec_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/sandbox/vm_proc.h"

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

/* Each chunk is a line of the answer, while the client is there. */
static void to_client(void *ctx, const struct exec_output *o, const char *p, size_t len)
{
    struct api_conn *c = ctx;
    if (!c->broken)
        api_stream_line(c, exec_output_line(o->type, p, len));
}

int exec_input_fd(const struct exec_input *in)
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

int exec_stream_run(struct api_conn *c, const char *sock, const struct agent_exec_req *req,
                    const struct exec_input *in, uint64_t max_output, struct exec_outcome *done)
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
    if (!rc && (j.in_fd = exec_input_fd(in)) < -1)
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
        struct exec_output s[2] = {{.fd = out[0], .type = "stdout"},
                                   {.fd = err[0], .type = "stderr"}};
        bool hung_up = false;
        while (s[0].fd >= 0 || s[1].fd >= 0) {
            /* The client too: a command that prints nothing never fails
             * a write, so only its hang-up tells that nobody waits. */
            struct pollfd p[3] = {{.fd = s[0].fd, .events = POLLIN},
                                  {.fd = s[1].fd, .events = POLLIN},
                                  {.fd = c->broken ? -1 : c->fd, .events = POLLRDHUP}};
            if (poll(p, 3, -1) < 0 && errno != EINTR)
                break;
            for (int i = 0; i < 2; i++)
                if (p[i].revents && !exec_output_pump(&s[i], to_client, c))
                    p[i].fd = -1;
            if (p[2].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
                /* The agent kills the command's process group when its
                 * connection closes; shutdown also wakes agent_exec,
                 * whatever it waits for. */
                c->broken = hung_up = true;
                shutdown(agent, SHUT_RDWR);
            }
            if (c->broken) { /* the client is gone: agent_exec sees EPIPE and returns */
                for (int i = 0; i < 2; i++)
                    if (s[i].fd >= 0)
                        close(s[i].fd), s[i].fd = -1;
            }
        }
        pthread_join(t, NULL);
        if (hung_up && j.rc) {
            /* We cut the agent's connection: the outcome is the one a
             * client that stops reading output gets (output_closed). */
            j.rc = 0;
            j.res.output_closed = 1;
        }
        done->rc = j.rc;
        done->res = j.res;
        done->ms = agent_mono_ms() - t0;
        api_stream_line(c, exec_exit_record(j.rc, &j.res, done->ms));
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
