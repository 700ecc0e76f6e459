/* Little-endian integers of the agent protocol's frames (proto.h), for its
 * codecs (agent_client.c, agent_dir_codec.c): byte by byte, so neither
 * the host's byte order nor a payload's alignment matters. */
#ifndef AIRLOCK_AGENT_CLIENT_WIRE_H
#define AIRLOCK_AGENT_CLIENT_WIRE_H

#include <stdint.h>

static inline void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static inline void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = v >> (8 * i);
}
static inline void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = v >> (8 * i);
}
static inline uint16_t get16(const uint8_t *p) { return p[0] | (uint16_t)p[1] << 8; }
static inline uint32_t get32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

#endif
