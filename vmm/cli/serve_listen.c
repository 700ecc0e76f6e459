#include "vmm/cli/serve_listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/util/parse.h"

/* The default socket path; -errno when there is none to be had. */
int serve_default_socket(char *out, size_t cap)
{
    if (geteuid() == 0) {
        if (mkdir("/run/airlock", 0700) < 0 && errno != EEXIST)
            return -errno;
        snprintf(out, cap, "/run/airlock/airlock.sock");
        return 0;
    }
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (!xdg || !*xdg)
        return -ENOENT;
    snprintf(out, cap, "%s/airlock.sock", xdg);
    return 0;
}

/* Binds PATH (0600).  A socket file nobody answers on is a leftover and
 * is replaced; one a live daemon answers on is not. */
int serve_listen_unix(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(a.sun_path)) {
        fprintf(stderr, "airlock: --socket %s: path too long for a Unix socket\n", path);
        return -1;
    }
    strcpy(a.sun_path, path);
    struct stat st;
    if (lstat(path, &st) == 0) {
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool live = S_ISSOCK(st.st_mode) && probe >= 0 &&
                    connect(probe, (struct sockaddr *)&a, sizeof(a)) == 0;
        if (probe >= 0)
            close(probe);
        if (!S_ISSOCK(st.st_mode) || live) {
            fprintf(stderr, "airlock: --socket %s: %s\n", path,
                    live ? "another airlock serve listens there" : "exists and is not a socket");
            return -1;
        }
        unlink(path);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    mode_t old = umask(0177);
    int rc = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&a, sizeof(a));
    umask(old);
    if (rc < 0 || listen(fd, 64) < 0) {
        fprintf(stderr, "airlock: --socket %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

int serve_listen_tcp(const char *spec, bool *loopback)
{
    char host[64];
    const char *colon = strrchr(spec, ':');
    size_t hl = colon ? (size_t)(colon - spec) : 0;
    uint64_t port;
    if (!colon || !hl || hl >= sizeof(host) || parse_uint(colon + 1, 65535, &port) || !port) {
        fprintf(stderr, "airlock: --listen '%.200s': want IP:PORT (e.g. 127.0.0.1:8080 or "
                        "[::1]:8080)\n", spec);
        return -1;
    }
    memcpy(host, spec, hl);
    host[hl] = '\0';
    struct sockaddr_storage ss = {0};
    socklen_t len;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        len = sizeof(*v4);
        *loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
    } else if (hl > 2 && host[0] == '[' && host[hl - 1] == ']' &&
               (host[hl - 1] = '\0', inet_pton(AF_INET6, host + 1, &v6->sin6_addr) == 1)) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        len = sizeof(*v6);
        *loopback = IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
    } else {
        fprintf(stderr, "airlock: --listen '%.200s': '%s' is not an IP address (names are not "
                        "looked up)\n", spec, host);
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 64) < 0) {
        fprintf(stderr, "airlock: --listen %.200s: %s\n", spec, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}
