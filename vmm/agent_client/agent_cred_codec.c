/* The CREDENTIALS request of the agent protocol as bytes (layout and rules
 * in guest/agent/proto.h): its payload laid out and checked, below
 * agent_client.c (its encoder frames it, its decoder calls the check;
 * nothing here calls back).  The encoder and the decoder share every rule,
 * so a request that encodes also decodes, and the agent reads the entries
 * it stored (trust.c) with the same check.  Pure code: the agent links it. */
#include <errno.h>
#include <string.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/wire.h"

/* The longest string agent_cred_entry_ok can accept, NUL left out. */
#define ENTRY_MAX (AGENT_CRED_MAX_NAME + 1 + AGENT_CRED_MAX_VALUE)

/* The NAME of s[0, len): its length when it is [A-Za-z_][A-Za-z0-9_]*,
 * 1..AGENT_CRED_MAX_NAME bytes, and an '=' follows it; else 0. */
static size_t name_len(const char *s, size_t len)
{
    size_t i = 0;
    for (; i < len && s[i] != '=' && i <= AGENT_CRED_MAX_NAME; i++) {
        char ch = s[i];
        if (!(ch == '_' || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
              (i > 0 && ch >= '0' && ch <= '9')))
            return 0;
    }
    return i < len && s[i] == '=' && i <= AGENT_CRED_MAX_NAME ? i : 0;
}

int agent_cred_entry_ok(const char *s, size_t len)
{
    size_t n = name_len(s, len);
    if (!n || len - n - 1 < 1 || len - n - 1 > AGENT_CRED_MAX_VALUE)
        return 0;
    for (size_t i = n + 1; i < len; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
            return 0;
    return 1;
}

int agent_cred_same_name(const char *a, const char *b)
{
    /* Both hold an '=' (agent_cred_entry_ok), so neither runs past it. */
    size_t i = 0;
    while (a[i] == b[i] && a[i] != '=')
        i++;
    return a[i] == '=' && b[i] == '=';
}

int agent_cred_pem_ok(const char *pem, size_t len)
{
    static const char begin[] = AGENT_CRED_PEM_BEGIN;
    if (len == 0)
        return 1;
    if (len > AGENT_CRED_MAX_PEM || len < sizeof(begin) - 1 ||
        memcmp(pem, begin, sizeof(begin) - 1))
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)pem[i];
        if ((ch < 0x20 || ch > 0x7e) && ch != '\n' && ch != '\r')
            return 0;
    }
    return 1;
}

/* Whether entry i repeats the NAME of one before it. */
static int name_repeated(const char *const *env, uint32_t i)
{
    for (uint32_t j = 0; j < i; j++)
        if (agent_cred_same_name(env[j], env[i]))
            return 1;
    return 0;
}

ssize_t agent_cred_payload(uint8_t *p, size_t cap, const struct agent_cred *c)
{
    if (c->envc > AGENT_CRED_MAX_ENVS || c->pem_len > AGENT_CRED_MAX_PEM)
        return -EMSGSIZE;
    if ((c->envc && !c->env) || (c->pem_len && !c->pem))
        return -EINVAL;
    size_t eb = 0;
    for (uint32_t i = 0; i < c->envc; i++) {
        if (!c->env[i])
            return -EINVAL;
        size_t l = strnlen(c->env[i], ENTRY_MAX + 1);
        if (!agent_cred_entry_ok(c->env[i], l) || name_repeated(c->env, i))
            return -EINVAL;
        eb += l + 1;
    }
    if (eb > AGENT_CRED_MAX_ENV_BYTES)
        return -EMSGSIZE;
    if (!agent_cred_pem_ok(c->pem, c->pem_len))
        return -EINVAL;
    size_t len = AGENT_CRED_FIXED + eb + c->pem_len;
    if (len > cap)
        return -EMSGSIZE;
    put32(p, c->envc);
    put32(p + 4, (uint32_t)eb);
    uint8_t *q = p + AGENT_CRED_FIXED;
    for (uint32_t i = 0; i < c->envc; i++) {
        size_t l = strlen(c->env[i]) + 1;
        memcpy(q, c->env[i], l);
        q += l;
    }
    if (c->pem_len)
        memcpy(q, c->pem, c->pem_len);
    return (ssize_t)len;
}

int agent_cred_parse(const uint8_t *p, size_t len, struct agent_cred *c, const char **env_buf)
{
    if (len < AGENT_CRED_FIXED || len > AGENT_CRED_MAX_PAYLOAD)
        return -EPROTO;
    uint32_t envc = get32(p), eb = get32(p + 4);
    /* Both bounded before the sum, which then cannot wrap. */
    if (envc > AGENT_CRED_MAX_ENVS || eb > AGENT_CRED_MAX_ENV_BYTES || eb > len - AGENT_CRED_FIXED)
        return -EPROTO;
    const char *env[AGENT_CRED_MAX_ENVS + 1];
    const uint8_t *s = p + AGENT_CRED_FIXED;
    size_t off = 0;
    for (uint32_t i = 0; i < envc; i++) {
        /* A string ends (NUL) inside the env section, not in the PEM. */
        const uint8_t *nul = off < eb ? memchr(s + off, 0, eb - off) : NULL;
        if (!nul)
            return -EPROTO;
        env[i] = (const char *)s + off;
        size_t l = (size_t)(nul - (s + off));
        if (!agent_cred_entry_ok(env[i], l) || name_repeated(env, i))
            return -EPROTO;
        off += l + 1;
    }
    if (off != eb)
        return -EPROTO;
    const char *pem = (const char *)s + eb;
    size_t pem_len = len - AGENT_CRED_FIXED - eb;
    if (!agent_cred_pem_ok(pem, pem_len))
        return -EPROTO;
    if (c) {
        if (env_buf) {
            memcpy(env_buf, env, envc * sizeof(*env));
            env_buf[envc] = NULL;
        }
        c->env = env_buf;
        c->envc = envc;
        c->pem = pem;
        c->pem_len = pem_len;
    }
    return 0;
}
