#include "vmm/snapshot/snapshot_control.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/jail/fdpass.h"

_Static_assert(SNAP_CONTROL_MAX_FDS <= FDPASS_MAX_FDS, "fdpass carries a request's fds");

#define REQUEST "SNAPSHOT"
#define STOP_REQUEST "SNAPSHOT-STOP"
#define CRED_REQUEST "CREDENTIALS"
#define RESUME_REQUEST "RESUME"

int snap_control_send(int sock, const char *text, size_t len, const int *fds, unsigned nfds)
{
    if (nfds > SNAP_CONTROL_MAX_FDS)
        return -EINVAL;
    return fdpass_sendv(sock, text, len, fds, nfds);
}

int snap_control_request(int sock, const int *fds, unsigned nfds, bool stop)
{
    if (!nfds)
        return -EINVAL;
    return stop ? snap_control_send(sock, STOP_REQUEST, sizeof(STOP_REQUEST) - 1, fds, nfds)
                : snap_control_send(sock, REQUEST, sizeof(REQUEST) - 1, fds, nfds);
}

int snap_control_answer_wait(int sock, unsigned timeout_ms, char *msg, size_t cap)
{
    struct pollfd p = {.fd = sock, .events = POLLIN};
    int r;
    while ((r = poll(&p, 1, (int)timeout_ms)) < 0 && errno == EINTR)
        ;
    if (r == 0)
        return -ETIMEDOUT;
    char buf[SNAP_CONTROL_MSG_MAX + 1];
    ssize_t n;
    while ((n = recv(sock, buf, sizeof(buf) - 1, 0)) < 0 && errno == EINTR)
        ;
    if (n <= 0)
        return n < 0 ? -errno : -ECONNRESET;
    buf[n] = '\0';
    if (!strcmp(buf, "OK"))
        return 0;
    snprintf(msg, cap, "%s", !strncmp(buf, "ERR ", 4) ? buf + 4 : "a bad answer");
    return -EIO;
}

int snap_control_next(int sock, int *fds, unsigned *nfds, char *text, size_t *textlen)
{
    /* one more fd than a request may carry is taken, so that a message
     * with too many is told from one with just enough; a message or fds
     * cut short are no request either (their fds closed by fdpass), and
     * fds that came with an empty message are closed with it */
    int all[SNAP_CONTROL_MAX_FDS + 1];
    char data[SNAP_CONTROL_TEXT_MAX];
    unsigned got = 0;
    ssize_t n = fdpass_recvv(sock, data, sizeof(data), all, SNAP_CONTROL_MAX_FDS + 1, &got);
    *nfds = 0;
    if (n <= 0 || got > SNAP_CONTROL_MAX_FDS) {
        for (unsigned i = 0; i < got; i++)
            close(all[i]);
        return n == -EMSGSIZE || n > 0 ? -EPROTO : (int)n;
    }
    memcpy(fds, all, got * sizeof(int));
    *nfds = got;
    /* A disk request's text and fds go to the caller, which parses it
     * (vmm/snapshot/disk_control.h) and closes the fds. */
    if ((size_t)n >= sizeof(SNAP_CONTROL_DISK_PREFIX) - 1 &&
        !memcmp(data, SNAP_CONTROL_DISK_PREFIX, sizeof(SNAP_CONTROL_DISK_PREFIX) - 1)) {
        memcpy(text, data, (size_t)n);
        *textlen = (size_t)n;
        return SNAP_CONTROL_DISK;
    }
    if (n == sizeof(CRED_REQUEST) - 1 &&
        !memcmp(data, CRED_REQUEST, sizeof(CRED_REQUEST) - 1) && *nfds == 0)
        return SNAP_CONTROL_CREDENTIALS;
    if (n == sizeof(RESUME_REQUEST) - 1 &&
        !memcmp(data, RESUME_REQUEST, sizeof(RESUME_REQUEST) - 1) && *nfds == 0)
        return SNAP_CONTROL_RESUME;
    bool stop = n == sizeof(STOP_REQUEST) - 1 && !memcmp(data, STOP_REQUEST, n);
    bool ok = *nfds >= 2 &&
              (stop || (n == sizeof(REQUEST) - 1 && !memcmp(data, REQUEST, sizeof(REQUEST) - 1)));
    if (!ok) {
        for (unsigned i = 0; i < *nfds; i++)
            close(fds[i]);
        *nfds = 0;
        return -EPROTO;
    }
    return stop ? SNAP_CONTROL_SNAPSHOT_STOP : SNAP_CONTROL_SNAPSHOT;
}

int snap_control_resume(int sock, unsigned timeout_ms, char *msg, size_t cap)
{
    ssize_t n;
    while ((n = send(sock, RESUME_REQUEST, sizeof(RESUME_REQUEST) - 1, MSG_NOSIGNAL)) < 0 &&
           errno == EINTR)
        ;
    return n < 0 ? -errno : snap_control_answer_wait(sock, timeout_ms, msg, cap);
}

ssize_t snap_control_credentials(int sock, unsigned timeout_ms, unsigned char *buf, size_t cap,
                                 char *msg, size_t msgcap)
{
    ssize_t n;
    while ((n = send(sock, CRED_REQUEST, sizeof(CRED_REQUEST) - 1, MSG_NOSIGNAL)) < 0 &&
           errno == EINTR)
        ;
    if (n < 0)
        return -errno;
    struct pollfd p = {.fd = sock, .events = POLLIN};
    int r;
    while ((r = poll(&p, 1, (int)timeout_ms)) < 0 && errno == EINTR)
        ;
    if (r == 0)
        return -ETIMEDOUT;
    unsigned char *ans = malloc(SNAP_CONTROL_CRED_MAX + 1);
    if (!ans)
        return -ENOMEM;
    while ((n = recv(sock, ans, SNAP_CONTROL_CRED_MAX + 1, 0)) < 0 && errno == EINTR)
        ;
    ssize_t rc;
    if (n <= 0) {
        rc = n < 0 ? -errno : -ECONNRESET;
    } else if (n >= 2 && !memcmp(ans, "OK", 2)) {
        rc = (size_t)n - 2 <= cap && n <= SNAP_CONTROL_CRED_MAX ? n - 2 : -EMSGSIZE;
        if (rc >= 0)
            memcpy(buf, ans + 2, (size_t)rc);
    } else {
        snprintf(msg, msgcap, "%.*s", (int)(n > 4 && !memcmp(ans, "ERR ", 4) ? n - 4 : 11),
                 n > 4 && !memcmp(ans, "ERR ", 4) ? (char *)ans + 4 : "a bad answer");
        rc = -EIO;
    }
    free(ans);
    return rc;
}

int snap_control_credentials_answer(int sock, unsigned char *msg, size_t len)
{
    if (len > SNAP_CONTROL_CRED_MAX - 2)
        return snap_control_answer(sock, "the credentials are too large");
    memcpy(msg, "OK", 2);
    return send(sock, msg, len + 2, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

int snap_control_answer(int sock, const char *msg)
{
    char buf[SNAP_CONTROL_MSG_MAX];
    int len = msg ? snprintf(buf, sizeof(buf), "ERR %s", msg) : snprintf(buf, sizeof(buf), "OK");
    size_t n = len < 0 ? 0 : (size_t)len < sizeof(buf) ? (size_t)len : sizeof(buf) - 1;
    return send(sock, buf, n, MSG_NOSIGNAL) < 0 ? -errno : 0;
}
