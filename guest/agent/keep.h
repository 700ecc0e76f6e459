/* Commands that outlive their conversation (AGENT_EXEC_F_KEEP, proto.h):
 * the output they sent, kept for a replay, and the hand-over of a new
 * host connection from the process that took the ATTACH to the one that
 * runs the command. */
#ifndef AIRLOCK_GUEST_AGENT_KEEP_H
#define AIRLOCK_GUEST_AGENT_KEEP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "guest/agent/agent.h"

/* The last AGENT_KEEP_REPLAY bytes of output sent, as frames. */
struct keep_ring {
    uint8_t *buf;     /* records: u16 type, u32 n, n bytes */
    size_t head, tail; /* buf[head, tail) holds them */
    uint64_t first;   /* the output offset of the oldest record's first byte */
    uint64_t total;   /* output bytes sent in all (the next record's offset) */
};

/* 0 or -ENOMEM. */
int keep_ring_init(struct keep_ring *k);
void keep_ring_free(struct keep_ring *k);
/* Records a chunk about to be sent (the oldest go to make room). */
void keep_ring_add(struct keep_ring *k, uint16_t type, const uint8_t *data, size_t n);
/* Sends what follows output offset `have` again on c: 0 with *from the
 * offset it starts at (have, or the oldest kept when have is older), or
 * -errno; -EINVAL when have is past what was sent. */
int keep_ring_replay(struct keep_ring *k, struct aconn *c, uint64_t have, uint64_t *from);

/* Where the command with this pid waits for its next connection: a
 * listening socket (abstract: the same for every mount namespace a
 * command may run in; only root's connections count).  The fd, or -errno. */
int keep_listen(pid_t pid);
/* Waits at most AGENT_KEEP_WAIT_MS for a hand-over on lfd: the new
 * connection's fd with *have, -ETIMEDOUT, or -errno. */
int keep_accept(int lfd, uint64_t *have);
/* ATTACH (in the process that read it): hands fd over to the process that
 * runs command `pid`.  0 (fd is theirs now), -ESRCH when no command of
 * that pid waits, or -errno. */
int keep_hand_over(uint32_t pid, uint64_t have, int fd);

#endif
