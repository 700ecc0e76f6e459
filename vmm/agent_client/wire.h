/* Little-endian integers of the agent protocol's frames (proto.h), for its
 * codecs (agent_client.c, agent_dir_codec.c, ...): byte by byte, so neither
 * the host's byte order nor a payload's alignment matters. */
#ifndef AIRLOCK_AGENT_CLIENT_WIRE_H
#define AIRLOCK_AGENT_CLIENT_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* Strings in a section whose byte count is known (EXEC's container and
 * linux sections): strlen bounded by max, or SIZE_MAX for NULL or a
 * string past it; a string and its NUL laid out, the next byte
 * returned; the next NUL-terminated string of [*off, end) in p, which
 * must end there: its length, or SIZE_MAX. */
static inline size_t wire_len_upto(const char *s, size_t max)
{
    if (!s)
        return SIZE_MAX;
    size_t n = strnlen(s, max + 1);
    return n > max ? SIZE_MAX : n;
}
static inline uint8_t *wire_put_str(uint8_t *p, const char *s)
{
    size_t n = strlen(s) + 1;
    memcpy(p, s, n);
    return p + n;
}
static inline size_t wire_take_str(const uint8_t *p, size_t end, size_t *off, const char **s)
{
    if (*off >= end)
        return SIZE_MAX;
    const uint8_t *nul = memchr(p + *off, 0, end - *off);
    if (!nul)
        return SIZE_MAX;
    *s = (const char *)p + *off;
    size_t n = (size_t)(nul - (p + *off));
    *off += n + 1;
    return n;
}

#endif
