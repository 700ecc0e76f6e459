/* The agent's relay process: one poll loop that carries byte streams
 * between pairs of sockets for two services, both started by PID 1.
 *   egress  (proxy.c)    a TCP client on 127.0.0.1:3128 -> vsock to the host
 *   forward (forward.c)  a vsock from the host -> TCP to 127.0.0.1:PORT
 * A service accepts on its listener and makes each pair's second socket;
 * the relay moves the bytes, bounded per pair (RELAY_BUF each way), and
 * never looks at them.  Internal to the agent. */
#ifndef AIRLOCK_AGENT_RELAY_H
#define AIRLOCK_AGENT_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest/agent/proto.h"

/* Pairs at once, both services together, and each service's own share
 * (relay_service.max_pairs: egress 64, as before forwards came, and
 * forwards the rest): more are accepted and closed at once, so no backlog
 * fills.  Buffers exist only while a pair does: 256 * 2 * 64 KiB = 32 MiB
 * at the very most, and each direction's pipe holds at most RELAY_BUF
 * bytes more (in the kernel: what a splice moved is counted there). */
#define RELAY_MAX_PAIRS 256
#define RELAY_EGRESS_PAIRS 64
#define RELAY_BUF       (64 * 1024)
/* The relay's fd limit: 2 sockets and 4 pipe ends a pair, and a margin. */
#define RELAY_NOFILE    (6 * RELAY_MAX_PAIRS + 64)

/* One direction of a pair: bytes read from `from`, waiting for `to`.
 * They move by splice(2) through a pipe of the direction's own (from ->
 * pipe -> to: the kernel moves page references where it can, so a TCP
 * side costs no copy of ours), at most RELAY_BUF bytes in it; through
 * buf (recv, then send) when a side cannot splice or no pipe could be
 * made.  buf also carries what a service puts first on the stream (the
 * forward's answer): it goes out before anything in the pipe. */
struct relay_dir {
    uint8_t *buf;
    size_t off, len;
    bool eof;  /* `from` has reached EOF: no more reads */
    bool shut; /* EOF passed on: shutdown(to, SHUT_WR) done */
    bool has_pipe;  /* pipe[] is open */
    bool no_splice; /* copy through buf only */
    bool full;      /* the last splice into the pipe found no room */
    int pipe[2];
    size_t piped;   /* bytes in the pipe */
};

enum relay_stage {
    RELAY_HELLO,      /* reading the accepted side's hello (forward) */
    RELAY_CONNECTING, /* the second socket's connect is under way */
    RELAY_OPEN,       /* bytes flow both ways */
    RELAY_DRAIN,      /* refused: reading the accepted side to EOF */
};

struct relay_service;

struct relay_pair {
    int afd;                 /* accepted; -1 = a free slot */
    int bfd;                 /* made by the service; -1 while none */
    enum relay_stage stage;
    const struct relay_service *svc;
    double deadline;         /* RELAY_HELLO and RELAY_DRAIN end then */
    uint8_t hello[AGENT_FWD_HELLO_SIZE];
    size_t hello_len;
    struct relay_dir up;     /* afd -> bfd */
    struct relay_dir down;   /* bfd -> afd */
};

struct relay_service {
    const char *name;
    unsigned max_pairs;  /* this service's pairs at once */
    int (*listen)(void); /* the listening socket (non-blocking) or -errno */
    /* A pair was accepted: start its stage (dial, or wait for a hello). */
    void (*accepted)(struct relay_pair *p);
    /* RELAY_HELLO and afd is readable. */
    void (*hello)(struct relay_pair *p);
    /* RELAY_CONNECTING is over: err 0 (connected) or the errno. */
    void (*connected)(struct relay_pair *p, int err);
};

extern const struct relay_service relay_egress, relay_forward;

/* For the services. */
double relay_now(void);
void relay_close(struct relay_pair *p);
void relay_log(const char *what, int err);
/* Starts a non-blocking connect of a new socket; -errno. */
int relay_connect(int family, const void *addr, unsigned addrlen);

#endif
