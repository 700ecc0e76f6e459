#include "vmm/e2b/connect_wire.h"

#include <string.h>

int connect_request_envelope(const uint8_t *body, size_t n, const uint8_t **msg, size_t *len,
                             const char **why)
{
    if (n < CONNECT_HEAD_LEN) {
        *why = "the request is not a Connect envelope (shorter than its 5-byte head)";
        return -1;
    }
    uint32_t l = (uint32_t)body[1] << 24 | (uint32_t)body[2] << 16 | (uint32_t)body[3] << 8 | body[4];
    if (body[0] & CONNECT_FLAG_COMPRESSED) {
        *why = "compressed messages are not accepted";
        return -1;
    }
    if (body[0]) {
        *why = "the request's envelope has unknown or end-of-stream flags";
        return -1;
    }
    if (l != n - CONNECT_HEAD_LEN) {
        *why = l > n - CONNECT_HEAD_LEN ? "the request's envelope is cut short"
                                        : "a server-streaming call takes exactly one message";
        return -1;
    }
    *msg = body + CONNECT_HEAD_LEN;
    *len = l;
    return 0;
}

void connect_envelope_head(uint8_t head[CONNECT_HEAD_LEN], uint8_t flags, uint32_t len)
{
    head[0] = flags;
    head[1] = (uint8_t)(len >> 24);
    head[2] = (uint8_t)(len >> 16);
    head[3] = (uint8_t)(len >> 8);
    head[4] = (uint8_t)len;
}

static const struct {
    const char *code;
    int http;
} codes[] = {
    {"canceled", 499},          {"unknown", 500},           {"invalid_argument", 400},
    {"deadline_exceeded", 504}, {"not_found", 404},         {"already_exists", 409},
    {"permission_denied", 403}, {"resource_exhausted", 429}, {"failed_precondition", 400},
    {"aborted", 409},           {"out_of_range", 400},      {"unimplemented", 501},
    {"internal", 500},          {"unavailable", 503},       {"data_loss", 500},
    {"unauthenticated", 401},
};

int connect_code_http(const char *code)
{
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (!strcmp(codes[i].code, code))
            return codes[i].http;
    return 500;
}

const char *connect_code_for_http(int status)
{
    switch (status) {
    case 400: case 411: case 414: case 415: case 422: case 431: return "invalid_argument";
    case 401: return "unauthenticated";
    case 403: return "permission_denied";
    case 404: return "not_found";
    case 405: case 501: case 505: return "unimplemented";
    case 408: case 504: return "deadline_exceeded";
    case 409: return "failed_precondition";
    case 413: case 429: case 507: return "resource_exhausted";
    case 502: case 503: return "unavailable";
    default: return status < 500 ? "invalid_argument" : "internal";
    }
}

int connect_timeout_parse(const char *s, uint64_t *ms)
{
    size_t n = strlen(s);
    if (!n || n > 10 || strspn(s, "0123456789") != n)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    *ms = v;
    return 0;
}
