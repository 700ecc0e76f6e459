/* The hello and reply of an inbound forward (proto.h, "Inbound forwards"):
 * the host encodes, the agent decodes, one codec for both ends. */
#ifndef AIRLOCK_AGENT_CLIENT_FORWARD_HELLO_H
#define AIRLOCK_AGENT_CLIENT_FORWARD_HELLO_H

#include <stddef.h>
#include <stdint.h>

#include "guest/agent/proto.h"

/* port must be 1..65535 (0 is not encoded: -EINVAL). */
int agent_fwd_hello_encode(uint8_t out[AGENT_FWD_HELLO_SIZE], uint16_t port);
/* 0 and the port, or -EPROTO for anything that is not exactly a hello:
 * another magic, port 0, a flag. */
int agent_fwd_hello_decode(const uint8_t in[AGENT_FWD_HELLO_SIZE], uint16_t *port);

void agent_fwd_reply_encode(uint8_t out[AGENT_FWD_REPLY_SIZE], int err);
/* The connect's outcome: 0, or a positive errno (1..4095); -EPROTO for a
 * value no agent sends. */
int agent_fwd_reply_decode(const uint8_t in[AGENT_FWD_REPLY_SIZE]);

#endif
