/* Following a background command's output: bg_follow_with hands it to a
 * sink (each API its own), bg_follow is the /v1 API's JSON lines. */
#include "vmm/sandbox/background.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmm/sandbox/api_http.h"
#include "vmm/sandbox/background_cmd.h"
#include "vmm/sandbox/exec_output.h"

/* Output copied out of the buffer, to be handed to a sink unlocked. */
struct bg_piece {
    struct bg_piece *next;
    uint64_t offset;
    size_t len;
    bool err;
    char data[];
};

/* Under t->lock: the output from *pos on, *pos moved past it; *skipped
 * the bytes before it that are gone. */
static struct bg_piece *pieces_from(const struct bg_cmd *cmd, uint64_t *pos, uint64_t *skipped)
{
    struct bg_piece *first = NULL, **link = &first;
    *skipped = 0;
    if (*pos < cmd->start) {
        *skipped = cmd->start - *pos;
        *pos = cmd->start;
    }
    for (const struct bg_chunk *k = cmd->head; k; k = k->next) {
        if (k->offset + k->len <= *pos)
            continue;
        size_t skip = (size_t)(*pos - k->offset), n = k->len - skip;
        struct bg_piece *p = malloc(sizeof(*p) + n);
        if (!p)
            break; /* the rest comes on the next round */
        p->next = NULL;
        p->offset = *pos;
        p->len = n;
        p->err = k->err;
        memcpy(p->data, k->data + skip, n);
        *link = p;
        link = &p->next;
        *pos = k->offset + k->len;
    }
    return first;
}

void bg_follow_with(struct bg_cmd *cmd, uint64_t offset, bool follow, const struct bg_sink *sink,
                    void *ctx)
{
    struct bg_table *t = cmd->t;
    uint64_t pos = offset;
    for (;;) {
        uint64_t skipped;
        pthread_mutex_lock(&t->lock);
        uint64_t before = pos;
        struct bg_piece *ps = pieces_from(cmd, &pos, &skipped);
        bool idle = false;
        if (follow && !ps && !skipped && !cmd->done) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_sec += 1; /* then ask the sink whether to go on */
            pthread_cond_timedwait(&t->more, &t->lock, &until);
            ps = pieces_from(cmd, &pos, &skipped);
            idle = !ps && !skipped;
        }
        /* The runner marks it done after its last chunk: done and all
         * taken is the end. */
        json_t *exit = cmd->done && pos >= cmd->total ? json_incref(cmd->exit) : NULL;
        pthread_mutex_unlock(&t->lock);
        bool go = !skipped || sink->skipped(ctx, before, skipped);
        while (ps) {
            struct bg_piece *n = ps->next;
            go = go && sink->chunk(ctx, ps->err, ps->data, ps->len, ps->offset);
            free(ps);
            ps = n;
        }
        if (go && exit)
            sink->exit(ctx, exit);
        json_decref(exit);
        if (!go || exit || !follow || (idle && !sink->waiting(ctx)))
            break;
    }
}

/* ---- bg_follow: the output as the API's JSON lines ---- */

static bool line_skipped(void *ctx, uint64_t offset, uint64_t bytes)
{
    struct api_conn *c = ctx;
    api_stream_line(c, json_pack("{s:s,s:I,s:I}", "type", "skipped", "offset", (json_int_t)offset,
                                 "bytes", (json_int_t)bytes));
    return !c->broken;
}

static bool line_chunk(void *ctx, bool err, const char *p, size_t n, uint64_t offset)
{
    struct api_conn *c = ctx;
    json_t *o = exec_output_line(err ? "stderr" : "stdout", p, n);
    json_object_set_new(o, "offset", json_integer((json_int_t)offset));
    api_stream_line(c, o);
    return !c->broken;
}

static void line_exit(void *ctx, json_t *exit)
{
    api_stream_line(ctx, json_incref(exit));
}

/* The client hung up (or the socket failed) while we wait for output. */
static bool line_waiting(void *ctx)
{
    const struct api_conn *c = ctx;
    struct pollfd p = {.fd = c->fd, .events = POLLRDHUP};
    return !(c->broken || (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))));
}

void bg_follow(struct api_conn *c, struct bg_cmd *cmd, uint64_t offset, bool follow)
{
    static const struct bg_sink lines = {line_skipped, line_chunk, line_exit, line_waiting};
    api_stream_begin(c, 200);
    bg_follow_with(cmd, offset, follow, &lines, c);
    api_stream_end(c);
}

