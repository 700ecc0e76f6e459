#include "vmm/util/base64.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

char *base64_encode(const void *data, size_t len)
{
    if (len > (size_t)INT_MAX / 4 * 3)
        return NULL;
    char *out = malloc(4 * ((len + 2) / 3) + 1);
    if (out)
        EVP_EncodeBlock((unsigned char *)out, data, (int)len);
    return out;
}

/* The alphabet, then at most two '=' that end the text: OpenSSL's block
 * decoder takes some malformed padding ("a===") without a word. */
static int well_formed(const char *text, size_t tl)
{
    size_t pad = 0;
    while (pad < tl && text[tl - 1 - pad] == '=')
        pad++;
    if (pad > 2)
        return 0;
    for (size_t i = 0; i < tl - pad; i++) {
        char c = text[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '/'))
            return 0;
    }
    return 1;
}

unsigned char *base64_decode(const char *text, size_t *len)
{
    size_t tl = strlen(text);
    if (tl % 4 || tl > (size_t)INT_MAX || !well_formed(text, tl))
        return NULL;
    unsigned char *out = malloc(tl / 4 * 3 + 1);
    if (!out)
        return NULL;
    int n = EVP_DecodeBlock(out, (const unsigned char *)text, (int)tl);
    if (n < 0) {
        free(out);
        return NULL;
    }
    /* EVP_DecodeBlock counts each '=' of padding as a zero byte. */
    for (size_t pad = 0; pad < 2 && tl > pad && text[tl - 1 - pad] == '='; pad++)
        n--;
    *len = (size_t)n;
    return out;
}
