/* A container's ports mirrored into its network namespace; see
 * container_ports.h.  One thread reads the guest's socket tables through
 * one agent connection, kept open between reads (each new connection is
 * a process forked in the guest), and adds or removes the forwarder's
 * listeners to match. */
#include "vmm/runtime/container_ports.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "vmm/agent_client/agent_client.h"
#include "vmm/forward/forward.h"
#include "vmm/sandbox/vm_proc.h"

#define LISTEN_STATE 0x0A /* TCP_LISTEN as the tables print it */
#define MISSES_TO_DROP 2

struct container_ports {
    char sock[PATH_MAX];
    struct forwarder *fwd;
    pthread_t poller;
    pthread_mutex_t lock;
    int wake; /* eventfd: stop */
    bool stop;
    int conn; /* the agent, -1; closed only under the lock */
    uint64_t set[CONTAINER_PORTS_SET_WORDS];  /* listening in the guest now */
    uint64_t have[CONTAINER_PORTS_SET_WORDS]; /* forwarded now */
    uint8_t misses[65536];                    /* reads a forwarded port was not seen in */
    struct forward_info infos[FORWARD_MAX_PORTS];
    char table[CONTAINER_PORTS_TABLE_KEEP];
    size_t table_len;
};

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool in_set(const uint64_t *set, unsigned port)
{
    return set[port / 64] >> (port % 64) & 1;
}

static void set_add(uint64_t *set, unsigned port)
{
    set[port / 64] |= (uint64_t)1 << (port % 64);
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Exactly n hex digits at p (before e): their value, or -1. */
static long hex_n(const char *p, const char *e, size_t n)
{
    if ((size_t)(e - p) < n)
        return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = hex_digit(p[i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static const char *skip_spaces(const char *p, const char *e)
{
    while (p < e && *p == ' ')
        p++;
    return p;
}

/* One table line, "  N: LOCALADDR:PORT REMADDR:PORT ST ...": the port of
 * a LISTEN socket on a wildcard address (all zeros, 8 or 32 digits), or 0. */
static unsigned wildcard_listener(const char *p, const char *e)
{
    p = skip_spaces(p, e);
    const char *d = p;
    while (p < e && *p >= '0' && *p <= '9')
        p++;
    if (p == d || p >= e || *p++ != ':')
        return 0;
    p = skip_spaces(p, e);
    const char *a = p;
    while (p < e && hex_digit(*p) >= 0)
        p++;
    size_t alen = (size_t)(p - a);
    if ((alen != 8 && alen != 32) || p >= e || *p++ != ':')
        return 0;
    bool wild = true;
    for (size_t i = 0; i < alen; i++)
        wild = wild && a[i] == '0';
    long port = hex_n(p, e, 4);
    p += 4;
    if (port < 0 || p >= e || *p != ' ')
        return 0;
    p = skip_spaces(p, e);
    while (p < e && *p != ' ') /* the remote address */
        p++;
    p = skip_spaces(p, e);
    long st = hex_n(p, e, 2);
    p += 2;
    if (st != LISTEN_STATE || (p < e && *p != ' ') || !wild)
        return 0;
    return (unsigned)port;
}

unsigned container_ports_parse(const char *table, size_t len, uint64_t *set)
{
    unsigned added = 0;
    const char *p = table, *end = table + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        unsigned port = wildcard_listener(p, le);
        if (port && !in_set(set, port)) {
            set_add(set, port);
            added++;
        }
        p = nl ? nl + 1 : end;
    }
    return added;
}

/* Keeps the head of a table; the rest is read (the answer must be taken
 * whole for the connection to stay in step) and dropped. */
static int keep_head(void *opaque, const void *buf, size_t len)
{
    struct container_ports *p = opaque;
    size_t room = sizeof(p->table) - p->table_len;
    size_t take = len < room ? len : room;
    memcpy(p->table + p->table_len, buf, take);
    p->table_len += take;
    return 0;
}

/* The guest's wildcard listeners into p->set: 0, or -errno (the
 * connection is then dropped). */
static int read_tables(struct container_ports *p, int conn)
{
    static const char *const tables[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    memset(p->set, 0, sizeof(p->set));
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        p->table_len = 0;
        int rc = agent_file_get_to(conn, tables[i], CONTAINER_PORTS_TABLE_MAX, keep_head, p);
        if (rc == -ENOENT)
            continue; /* a guest kernel without IPv6 has no tcp6 */
        if (rc)
            return rc;
        size_t len = p->table_len;
        if (len == sizeof(p->table)) { /* cut: only whole lines */
            while (len && p->table[len - 1] != '\n')
                len--;
        }
        container_ports_parse(p->table, len, p->set);
    }
    return 0;
}

/* The forwarder's listeners made to match p->set. */
static void reconcile(struct container_ports *p)
{
    size_t n = forwarder_list(p->fwd, p->infos, FORWARD_MAX_PORTS);
    if (n > FORWARD_MAX_PORTS)
        n = FORWARD_MAX_PORTS;
    memset(p->have, 0, sizeof(p->have));
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned port = p->infos[i].spec.guest_port;
        if (in_set(p->set, port)) {
            p->misses[port] = 0;
        } else if (++p->misses[port] >= MISSES_TO_DROP) {
            p->misses[port] = 0;
            forwarder_remove(p->fwd, (uint16_t)port);
            continue;
        }
        set_add(p->have, port);
        count++;
    }
    for (unsigned w = 0; w < CONTAINER_PORTS_SET_WORDS && count < FORWARD_MAX_PORTS; w++) {
        uint64_t fresh = p->set[w] & ~p->have[w];
        while (fresh && count < FORWARD_MAX_PORTS) {
            unsigned port = w * 64 + (unsigned)__builtin_ctzll(fresh);
            fresh &= fresh - 1;
            struct forward_spec s = {.host_ip = "0.0.0.0", .host_port = (uint16_t)port,
                                     .guest_port = (uint16_t)port};
            char err[160];
            /* A port taken in a namespace others share (a pod's) is
             * tried again at the next read, as a container's bind would
             * be by its program. */
            if (forwarder_add(p->fwd, &s, NULL, err, sizeof(err)) == 0)
                count++;
        }
    }
}

static int dial_forward(void *opaque)
{
    const struct container_ports *p = opaque;
    return vm_proc_dial_port(p->sock, AGENT_FORWARD_VSOCK_PORT);
}

static void *poll_main(void *arg)
{
    struct container_ports *p = arg;
    uint64_t start = mono_ms();
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        int conn = p->conn;
        pthread_mutex_unlock(&p->lock);
        if (conn < 0)
            conn = vm_proc_dial(p->sock);
        pthread_mutex_lock(&p->lock);
        if (p->conn < 0 && conn >= 0) {
            if (p->stop) {
                close(conn);
                break;
            }
            p->conn = conn;
        }
        pthread_mutex_unlock(&p->lock);
        int rc = conn >= 0 ? read_tables(p, conn) : conn;
        if (!rc)
            reconcile(p);
        pthread_mutex_lock(&p->lock);
        if (rc && p->conn >= 0) {
            close(p->conn);
            p->conn = -1;
        }
        pthread_mutex_unlock(&p->lock);
        int ms = mono_ms() - start < CONTAINER_PORTS_FAST_FOR_MS ? CONTAINER_PORTS_FAST_MS
                                                                : CONTAINER_PORTS_POLL_MS;
        struct pollfd w = {.fd = p->wake, .events = POLLIN};
        poll(&w, 1, ms); /* the stop's wake, or the next read */
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int container_ports_start(const char *sock, const struct audit *audit,
                          struct container_ports **out)
{
    struct container_ports *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    if (strlen(sock) >= sizeof(p->sock)) {
        free(p);
        return -ENAMETOOLONG;
    }
    strcpy(p->sock, sock);
    p->conn = -1;
    if ((p->wake = eventfd(0, EFD_CLOEXEC)) < 0) {
        int e = errno;
        free(p);
        return -e;
    }
    pthread_mutex_init(&p->lock, NULL);
    /* The stand-in passes signals on to the guest from its main thread:
     * these threads (and the connections' threads the forwarder starts,
     * which inherit the mask) take none. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    struct forward_dial d = {.dial = dial_forward, .opaque = p, .audit = audit};
    int rc = forwarder_new(&d, &p->fwd);
    if (!rc && (rc = -pthread_create(&p->poller, NULL, poll_main, p)))
        forwarder_free(p->fwd);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        close(p->wake);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void container_ports_stop(struct container_ports *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    if (p->conn >= 0)
        shutdown(p->conn, SHUT_RDWR); /* a read in flight ends now */
    pthread_mutex_unlock(&p->lock);
    uint64_t one = 1;
    if (write(p->wake, &one, sizeof(one)) < 0) {
        /* an eventfd's counter cannot be full here */
    }
    pthread_join(p->poller, NULL);
    if (p->conn >= 0)
        close(p->conn);
    forwarder_free(p->fwd);
    close(p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
