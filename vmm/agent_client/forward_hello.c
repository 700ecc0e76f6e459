#include "vmm/agent_client/forward_hello.h"

#include <errno.h>

#include "vmm/agent_client/wire.h"

int agent_fwd_hello_encode(uint8_t out[AGENT_FWD_HELLO_SIZE], uint16_t port)
{
    if (port == 0)
        return -EINVAL;
    put32(out, AGENT_FWD_MAGIC);
    put16(out + 4, port);
    put16(out + 6, 0);
    return 0;
}

int agent_fwd_hello_decode(const uint8_t in[AGENT_FWD_HELLO_SIZE], uint16_t *port)
{
    if (get32(in) != AGENT_FWD_MAGIC || get16(in + 4) == 0 || get16(in + 6) != 0)
        return -EPROTO;
    *port = get16(in + 4);
    return 0;
}

void agent_fwd_reply_encode(uint8_t out[AGENT_FWD_REPLY_SIZE], int err)
{
    put32(out, err > 0 && err < 4096 ? (uint32_t)err : err ? EIO : 0);
}

int agent_fwd_reply_decode(const uint8_t in[AGENT_FWD_REPLY_SIZE])
{
    uint32_t v = get32(in);
    return v < 4096 ? (int)v : -EPROTO;
}
