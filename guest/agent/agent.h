/* The guest agent's internal interface: one connection's state and the
 * request handlers (guest/agent/{main,conn,exec,files,dirs}.c). */
#ifndef AIRLOCK_GUEST_AGENT_AGENT_H
#define AIRLOCK_GUEST_AGENT_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "agent_client/agent_client.h"

/* One connection to the host: the shared reader (agent_client/agent_client.h)
 * and its buffer. */
struct aconn {
    struct agent_reader rd;
    uint8_t rbuf[64 * 1024];
};

/* Serves one connection until the host closes it or breaks the protocol;
 * runs in its own process (forked per connection). */
void agent_serve(int fd);

/* 0 or -errno; the frame is sent whole (blocking). */
int aconn_send(struct aconn *c, uint16_t type, const void *payload, size_t len);
int aconn_send_error(struct aconn *c, int code, uint32_t op);

/* Handlers: 0 when the connection can go on, -errno to drop it. */
int agent_do_exec(struct aconn *c, const struct agent_msg *m);
int agent_do_file_put(struct aconn *c, const struct agent_msg *m);
int agent_do_file_get(struct aconn *c, const struct agent_msg *m);
/* STAT, LIST, MKDIR, SYMLINK (dirs.c). */
int agent_do_stat(struct aconn *c, const struct agent_msg *m);
int agent_do_list(struct aconn *c, const struct agent_msg *m);
int agent_do_mkdir(struct aconn *c, const struct agent_msg *m);
int agent_do_symlink(struct aconn *c, const struct agent_msg *m);
/* RESEED: entropy and wall time from the host (reseed.c). */
int agent_do_reseed(struct aconn *c, const struct agent_msg *m);

/* Egress (proxy.c), started by PID 1 only.  Brings `lo` up (the kernel
 * gives it 127.0.0.1): 0 or -errno (-EAFNOSUPPORT on a kernel without
 * INET). */
int agent_lo_up(void);
/* Forks the proxy's supervisor, which keeps a relay process (uid 65534)
 * on 127.0.0.1:AGENT_PROXY_PORT running: 0 or -errno.  Call it before any
 * fd the relay must not inherit is opened. */
int agent_proxy_start(void);

/* agent_write_all (agent_client/agent_client.h) writes a whole buffer to a pipe or
 * file; both ends of the protocol share it. */

#endif
