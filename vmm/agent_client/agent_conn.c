/* Allocating one agent connection, and the clock its requests' deadlines
 * use (vmm/agent_client/agent_conn.h). */
#include "vmm/agent_client/agent_conn.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

struct agent_conn *ac_new(int fd, int *rc)
{
    struct agent_conn *c = malloc(sizeof(*c));
    if (!c) {
        *rc = -ENOMEM;
        return NULL;
    }
    *rc = agent_reader_init(&c->rd, fd, AGENT_DIR_REPLY, c->rbuf, sizeof(c->rbuf));
    if (*rc) {
        free(c);
        return NULL;
    }
    return c;
}

void ac_free(struct agent_conn *c)
{
    agent_reader_free(&c->rd);
    free(c);
}

struct agent_conn *ac_ask(int fd, const uint8_t *f, ssize_t fl, int *rc)
{
    *rc = fl < 0 ? (int)fl : agent_send_all(fd, f, (size_t)fl);
    return *rc ? NULL : ac_new(fd, rc);
}

int ac_verdict(struct agent_conn *c, uint16_t ok_type)
{
    struct agent_msg m;
    int rc = agent_reader_wait(&c->rd, &m);
    if (rc < 0)
        return rc;
    if (m.type == ok_type)
        return 0;
    return m.type == AGENT_ERROR ? -(int)m.u.error.code : -EPROTO;
}

static int64_t clock_ms(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int64_t agent_mono_ms(void)
{
    return clock_ms(CLOCK_MONOTONIC);
}

int64_t agent_deadline_ms(unsigned wait_ms)
{
    return agent_mono_ms() + 1 + wait_ms;
}

int64_t agent_wall_ms(void)
{
    return clock_ms(CLOCK_REALTIME);
}
