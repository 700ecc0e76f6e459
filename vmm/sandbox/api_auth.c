#include "vmm/sandbox/api_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

int api_token_load(const char *path, char *token, size_t cap, char *err, size_t errcap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errcap, "--token-file %.200s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    const char *why = !S_ISREG(st.st_mode)       ? "not a regular file"
                      : (st.st_mode & 077)       ? "others may read or write it (chmod 600)"
                      : st.st_uid != geteuid()   ? "owned by another user"
                                                 : NULL;
    char buf[API_TOKEN_MAX + 2];
    ssize_t n = why ? 0 : read(fd, buf, sizeof(buf));
    close(fd);
    if (!why && n < 0)
        why = strerror(errno);
    if (!why && n > 0 && buf[n - 1] == '\n')
        n--;
    if (!why && (n < API_TOKEN_MIN || n > API_TOKEN_MAX || (size_t)n >= cap))
        why = "the token must be 16 to 512 bytes on one line";
    for (ssize_t i = 0; !why && i < n; i++)
        if (buf[i] <= ' ' || buf[i] > '~')
            why = "the token must be printable ASCII without spaces";
    if (why) {
        snprintf(err, errcap, "--token-file %.200s: %s", path, why);
        return -1;
    }
    memcpy(token, buf, (size_t)n);
    token[n] = '\0';
    explicit_bzero(buf, sizeof(buf));
    return 0;
}

bool api_token_ok(const struct api_conn *c, const char *token)
{
    const char *a = c->req.authorization;
    if (strncasecmp(a, "Bearer ", 7)) /* the scheme is case-insensitive (RFC 9110 11.1) */
        return false;
    a += 7;
    while (*a == ' ')
        a++;
    size_t n = strlen(token);
    /* The length is no secret worth a timing guard; the bytes are. */
    return strlen(a) == n && CRYPTO_memcmp(a, token, n) == 0;
}
