/* One connection to the agent as airlock's helpers drive it (internal to
 * vmm/agent_client/agent_*.c): the shared reader (agent_client.h) with its buffer, and
 * a frame of stdin on its way, all too big for a thread's stack. */
#ifndef AIRLOCK_AGENT_CLIENT_AGENT_CONN_H
#define AIRLOCK_AGENT_CLIENT_AGENT_CONN_H

#include "vmm/agent_client/agent_client.h"

struct agent_conn {
    struct agent_reader rd;
    uint8_t rbuf[AGENT_HDR_SIZE + AGENT_MAX_CHUNK];
    uint8_t pend[AGENT_HDR_SIZE + AGENT_MAX_CHUNK]; /* a STDIN frame being sent */
};

/* A connection's state over fd; NULL with *rc = -errno on failure (*rc is
 * 0 on success).  ac_free releases it (not the fd). */
struct agent_conn *ac_new(int fd, int *rc);
void ac_free(struct agent_conn *c);

/* Sends one encoded request (fl: its encoder's result, which may be an
 * error) and opens the reader for its answer; NULL with *rc = -errno. */
struct agent_conn *ac_ask(int fd, const uint8_t *f, ssize_t fl, int *rc);

/* Waits for a request's verdict: 0 when ok_type came, the guest's -errno
 * for an ERROR, -EPROTO for anything else, or the transport's -errno. */
int ac_verdict(struct agent_conn *c, uint16_t ok_type);

/* The next message by a deadline (agent_client_io.c): 1 with *m,
 * -ETIMEDOUT, or -errno; reads never go past the message. */
int ac_answer_by(struct agent_conn *c, int64_t deadline, struct agent_msg *m);

/* CLOCK_MONOTONIC in milliseconds, for the requests' deadlines. */
int64_t agent_mono_ms(void);
/* The agent_mono_ms() time wait_ms from now, rounded up: agent_mono_ms()
 * truncates to the millisecond, so now + wait could end a wait up to 1 ms
 * short of what the error then says it waited (CI saw 299 of 300). */
int64_t agent_deadline_ms(unsigned wait_ms);
/* CLOCK_REALTIME in milliseconds since the epoch, for the times a record
 * shows (created_ms, started_ms). */
int64_t agent_wall_ms(void);

#endif
