/* The egress broker process and its request channel; see egress_broker.h. */
#include "vmm/egress/egress_broker.h"
#include "vmm/egress/credential_proxy.h"
#include "vmm/egress/egress_live.h"
#include "vmm/util/exit_codes.h"
#include "vmm/jail/fdpass.h"
#include "vmm/jail/seccomp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* The VM side's question, fixed size: the broker reads it as one
 * SEQPACKET message and trusts nothing in it (the VM side may be
 * compromised). */
struct broker_req {
    uint64_t conn;
    uint16_t port;
    uint8_t tunnel;
    char host[EGRESS_HOST_MAX + 1];
};

/* The broker's first answer: whether it serves, and with secrets the CA. */
struct broker_hello {
    int32_t rc;
    char err[300];
    uint32_t pem_len;
    char pem[CRED_CA_PEM_MAX];
};

/* A reply arrives well within the lookup's and the connect's own limits;
 * this only stops a wedged broker from holding a guest connection forever. */
#define BROKER_REPLY_TIMEOUT_MS 60000

static void verdict(struct egress_verdict *v, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void verdict(struct egress_verdict *v, int status, const char *fmt, ...)
{
    va_list ap;
    v->status = status;
    va_start(ap, fmt);
    vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
    va_end(ap);
}

static void addr_text(const struct sockaddr *sa, char *out, size_t cap)
{
    const void *a = sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
                                             : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
    if (!inet_ntop(sa->sa_family, a, out, (socklen_t)cap))
        snprintf(out, cap, "?");
}

/* A non-blocking connect bounded by EGRESS_CONNECT_TIMEOUT_MS; the socket
 * is returned blocking.  fd or -errno. */
static int connect_bounded(const struct sockaddr *sa, socklen_t len)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int e = 0;
    if (connect(fd, sa, len) < 0) {
        e = errno;
        if (e == EINPROGRESS) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            int n = poll(&p, 1, EGRESS_CONNECT_TIMEOUT_MS);
            socklen_t sl = sizeof(e);
            if (n == 0)
                e = ETIMEDOUT;
            else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) < 0)
                e = errno;
        }
    }
    if (e) {
        close(fd);
        return -e;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

void egress_decide_and_connect(const struct egress_policy *policy, const char *host,
                               uint16_t port, struct egress_verdict *v, int *fd)
{
    *fd = -1;
    v->rule[0] = v->addr[0] = 0;
    bool literal = egress_host_is_ip(host);
    const struct egress_rule *name_rule = literal ? NULL : egress_match_name(policy, host, port);
    if (!literal && !name_rule)
        return verdict(v, 403, "%s:%u is not on the allowlist", host, port);

    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = literal ? AI_NUMERICHOST : 0};
    struct addrinfo *res = NULL;
    int g = getaddrinfo(host, NULL, &hints, &res);
    if (g)
        return verdict(v, 502, "cannot resolve %s: %s", host,
                       g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
    const char *first_denial = NULL;
    enum egress_addr_class denied_class = EGRESS_ADDR_UNSUPPORTED;
    char denied_addr[64] = "", failed_addr[64] = "";
    int conn_err = 0;
    for (struct addrinfo *ai = res; ai && *fd < 0; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        if (ai->ai_family == AF_INET)
            ((struct sockaddr_in *)ai->ai_addr)->sin_port = htons(port);
        else
            ((struct sockaddr_in6 *)ai->ai_addr)->sin6_port = htons(port);
        char text[64];
        addr_text(ai->ai_addr, text, sizeof(text));
        const char *why = NULL;
        const struct egress_rule *rule = egress_check_addr(policy, name_rule, ai->ai_addr, port, &why);
        if (!rule) {
            if (!first_denial) {
                first_denial = why;
                denied_class = egress_classify(ai->ai_addr);
                snprintf(denied_addr, sizeof(denied_addr), "%s", text);
            }
            continue;
        }
        int c = connect_bounded(ai->ai_addr, ai->ai_addrlen);
        if (c >= 0) {
            *fd = c;
            v->status = 200;
            v->reason[0] = 0;
            snprintf(v->rule, sizeof(v->rule), "%s", rule->text);
            snprintf(v->addr, sizeof(v->addr), "%s", text);
        } else if (!conn_err) {
            conn_err = -c;
            snprintf(failed_addr, sizeof(failed_addr), "%s", text);
        }
    }
    freeaddrinfo(res);
    if (*fd >= 0)
        return;
    if (conn_err) { /* some address was allowed, none answered */
        snprintf(v->addr, sizeof(v->addr), "%s", failed_addr);
        return verdict(v, 502, "connecting to %s port %u: %s", failed_addr, port, strerror(conn_err));
    }
    snprintf(v->addr, sizeof(v->addr), "%s", denied_addr);
    if (!first_denial)
        return verdict(v, 502, "%s has no IPv4 or IPv6 address", host);
    if (literal) /* "not on the allowlist" alone would not say what it is */
        return verdict(v, 403, "%s:%u is not on the allowlist (%s address %s)", host, port,
                       egress_addr_class_name(denied_class), denied_addr);
    verdict(v, 403, "%s:%u %s (%s)", host, port, first_denial, denied_addr);
}

/* ---- the broker process ------------------------------------------------ */

static struct cred_proxy *broker_cred; /* NULL: no secrets */
static atomic_uint broker_busy;

/* A host with a secret: the guest's TLS goes to the credential proxy,
 * which holds the upstream socket; the VM side gets the other end. */
static void hand_to_proxy(const struct broker_req *req, struct egress_verdict *v, int *fd)
{
    if (!req->tunnel) {
        close(*fd);
        *fd = -1;
        verdict(v, 403, "%s:%u has a secret: it is reached over HTTPS only", req->host, req->port);
        return;
    }
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
        close(*fd);
        *fd = -1;
        verdict(v, 502, "the credential proxy: %s", strerror(errno));
        return;
    }
    int rc = cred_proxy_start(broker_cred, req->host, req->port, req->conn, sp[1], *fd);
    *fd = sp[0];
    if (rc) {
        close(sp[0]);
        *fd = -1;
        verdict(v, 502, "the credential proxy: %s", strerror(-rc));
        return;
    }
    v->credential = true;
}

/* One request against the policy in force (vmm/egress/egress_live.h). */
static void decide(const struct broker_req *req, struct egress_verdict *v, int *fd)
{
    const struct egress_policy *p = egress_live_hold();
    if (!p->n) /* a sandbox's broker runs with no rules: its allowlist may get some */
        verdict(v, 403, "%s:%u: egress is off (no --allow or --allow-ip rules)", req->host,
                req->port);
    else
        egress_decide_and_connect(p, req->host, req->port, v, fd);
    if (*fd >= 0 && broker_cred && cred_proxy_host(broker_cred, req->host, req->port) >= 0) {
        hand_to_proxy(req, v, fd); /* a secret's host:port stays in every allowlist */
    } else if (*fd >= 0) {
        int rc = egress_live_admit(p, req->host, req->port, v->addr, req->conn, *fd, v->reason,
                                   sizeof(v->reason));
        if (rc) {
            close(*fd);
            *fd = -1;
            v->status = rc == -EACCES ? 403 : 502;
            v->rule[0] = 0;
        }
    }
    egress_live_release(p);
}

static void *broker_serve(void *arg)
{
    int chan = (int)(intptr_t)arg;
    struct broker_req req;
    struct egress_verdict v = {0};
    int fd = -1, ignored;
    ssize_t n = fdpass_recv(chan, &req, sizeof(req), &ignored);
    if (ignored >= 0)
        close(ignored);
    if (n != (ssize_t)sizeof(req) || !memchr(req.host, 0, sizeof(req.host)) || !req.port)
        verdict(&v, 502, "malformed request to the egress broker");
    else if (atomic_load(&broker_busy) > EGRESS_BROKER_MAX_BUSY)
        verdict(&v, 502, "the egress broker is busy");
    else
        decide(&req, &v, &fd);
    fdpass_send(chan, &v, sizeof(v), fd);
    if (fd >= 0)
        close(fd);
    close(chan);
    atomic_fetch_sub(&broker_busy, 1);
    return NULL;
}

/* Closes every fd from 3 on but the n in keep (-1 entries: none). */
static void close_all_but(const int *keep, unsigned n)
{
    int lo = 3;
    for (;;) {
        int next = -1; /* the lowest kept fd at lo or above */
        for (unsigned i = 0; i < n; i++)
            if (keep[i] >= lo && (next < 0 || keep[i] < next))
                next = keep[i];
        if (next < 0) {
            close_range((unsigned)lo, ~0u, 0);
            return;
        }
        if (next > lo)
            close_range((unsigned)lo, (unsigned)next - 1, 0);
        lo = next + 1;
    }
}

static __attribute__((noreturn)) void broker_main(int ctl, const struct egress_policy *policy,
                                                  struct egress_broker_creds *creds, int update_fd)
{
    static struct broker_hello hello;
    static struct cred_proxy proxy;
    prctl(PR_SET_NAME, "airlock-broker");
    /* Nothing of airlock's stdio: a pipeline reading airlock's output must
     * see EOF when airlock is done, whatever the broker is doing. */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int i = 0; i < 3 && null >= 0; i++)
        dup2(null, i);
    bool secrets = creds && creds->secrets && creds->secrets->n;
    int keep[] = {ctl, secrets && creds->audit ? creds->audit->fd : -1, update_fd};
    close_all_but(keep, sizeof(keep) / sizeof(keep[0]));
    signal(SIGPIPE, SIG_IGN);
    /* The CA, the TLS contexts and the CA bundle, while files may still
     * be opened. */
    if (secrets) {
        if (cred_proxy_init(&proxy, creds->secrets, creds->ca_file, creds->audit, hello.err,
                            sizeof(hello.err))) {
            hello.rc = -EINVAL;
        } else {
            broker_cred = &proxy;
            memcpy(hello.pem, proxy.ca.pem, proxy.ca.pem_len);
            hello.pem_len = (uint32_t)proxy.ca.pem_len;
        }
    }
    if (!hello.rc)
        hello.rc = egress_live_init(policy, secrets ? creds->secrets : NULL, update_fd >= 0);
    /* Everything is set up: from here on, only what serving needs (every
     * request thread inherits the filter).  The parent waits for this
     * answer, so a broker without its filter never serves. */
    if (!hello.rc)
        hello.rc = seccomp_apply(SECCOMP_BROKER);
    if (!hello.rc && update_fd >= 0)
        hello.rc = egress_live_serve(update_fd);
    int32_t rc = hello.rc;
    fdpass_send(ctl, &hello, sizeof(hello), -1);
    if (rc)
        _exit(EXIT_AIRLOCK_ERROR);
    for (;;) {
        char b;
        int chan;
        ssize_t n = fdpass_recv(ctl, &b, 1, &chan);
        if (n == -EMSGSIZE)
            continue; /* too long or too many fds: dropped, fds closed */
        if (n <= 0)
            _exit(0); /* the VM side is gone */
        if (chan < 0)
            continue;
        atomic_fetch_add(&broker_busy, 1);
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &at, broker_serve, (void *)(intptr_t)chan)) {
            close(chan);
            atomic_fetch_sub(&broker_busy, 1);
        }
        pthread_attr_destroy(&at);
    }
}

int egress_broker_start(const struct egress_policy *policy, struct egress_broker_creds *creds,
                        int update_fd, int *ctl)
{
    static struct broker_hello hello;
    int sv[2];
    if (update_fd >= 0 && update_fd < 3) /* the broker's stdio becomes /dev/null */
        return -EBADF;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        int e = errno;
        if (update_fd >= 0)
            close(update_fd);
        return -e;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        if (update_fd >= 0)
            close(update_fd);
        return -e;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(0);
        broker_main(sv[1], policy, creds, update_fd); /* our copy of the parent's memory */
    }
    close(sv[1]);
    /* The channel is the broker's alone: the VM-facing process never
     * holds it (vmm/egress/egress_rules.h). */
    if (update_fd >= 0)
        close(update_fd);
    hello.rc = -EPIPE; /* the broker ended without answering */
    int ignored;
    ssize_t n = fdpass_recv(sv[0], &hello, sizeof(hello), &ignored);
    if (ignored >= 0)
        close(ignored);
    int32_t rc = hello.rc;
    if (creds && n == (ssize_t)sizeof(hello)) {
        hello.err[sizeof(hello.err) - 1] = '\0';
        snprintf(creds->err, sizeof(creds->err), "%s", hello.err);
        creds->ca_pem_len = hello.pem_len < sizeof(creds->ca_pem) ? hello.pem_len : 0;
        memcpy(creds->ca_pem, hello.pem, creds->ca_pem_len);
    }
    if (n != (ssize_t)sizeof(hello) || rc) {
        close(sv[0]);
        waitpid(pid, NULL, 0);
        return n < 0 ? (int)n : rc ? rc : -EPROTO;
    }
    *ctl = sv[0];
    return 0;
}

int egress_broker_connect(int ctl, const char *host, uint16_t port, bool tunnel, uint64_t conn,
                          struct egress_verdict *v, int *fd)
{
    int ch[2];
    *fd = -1;
    memset(v, 0, sizeof(*v));
    verdict(v, 502, "the egress broker did not answer");
    struct broker_req req = {.port = port, .tunnel = tunnel, .conn = conn};
    if (strlen(host) > EGRESS_HOST_MAX)
        return verdict(v, 403, "host name too long"), 0;
    snprintf(req.host, sizeof(req.host), "%s", host);
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ch) < 0)
        return -errno;
    int rc = fdpass_send(ctl, "r", 1, ch[1]);
    close(ch[1]);
    if (!rc)
        rc = fdpass_send(ch[0], &req, sizeof(req), -1);
    struct pollfd p = {.fd = ch[0], .events = POLLIN};
    if (!rc && poll(&p, 1, BROKER_REPLY_TIMEOUT_MS) != 1)
        rc = -ETIMEDOUT;
    struct egress_verdict got;
    if (!rc) {
        ssize_t n = fdpass_recv(ch[0], &got, sizeof(got), fd);
        if (n == (ssize_t)sizeof(got) && (got.status == 200) == (*fd >= 0)) {
            got.reason[sizeof(got.reason) - 1] = got.rule[sizeof(got.rule) - 1] = 0;
            got.addr[sizeof(got.addr) - 1] = 0;
            *v = got;
        } else {
            rc = n < 0 ? (int)n : -EPROTO;
            if (*fd >= 0)
                close(*fd);
            *fd = -1;
        }
    }
    close(ch[0]);
    return rc;
}
