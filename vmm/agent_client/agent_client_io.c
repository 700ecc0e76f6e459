/* Blocking drivers of the file, reseed and credentials requests over a
 * connected stream socket (vsock in airlock run, a Unix socket in the host
 * tests); the exec request is vmm/agent_client/agent_exec.c.  Replies from the hostile agent
 * go through the validating decoder and must come in the order proto.h
 * fixes. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmm/agent_client/agent_conn.h"

static int put_data(int fd, agent_read_fn *read_fn, void *opaque, uint64_t size)
{
    uint8_t f[AGENT_HDR_SIZE + AGENT_MAX_CHUNK]; /* read straight into its payload */
    uint64_t sent = 0;
    while (sent < size) {
        size_t want = size - sent < AGENT_MAX_CHUNK ? (size_t)(size - sent) : AGENT_MAX_CHUNK;
        ssize_t n = read_fn(opaque, f + AGENT_HDR_SIZE, want);
        if (n <= 0)
            break; /* short: FILE_END with a wrong total makes the agent refuse */
        ssize_t fl = agent_encode_in_place(f, sizeof(f), AGENT_FILE_DATA, (size_t)n);
        int rc = fl < 0 ? (int)fl : agent_send_all(fd, f, (size_t)fl);
        if (rc)
            return rc;
        sent += (uint64_t)n;
    }
    ssize_t fl = agent_encode(f, sizeof(f), AGENT_FILE_END, NULL, 0);
    int rc = fl < 0 ? (int)fl : agent_send_all(fd, f, (size_t)fl);
    return rc ? rc : sent == size ? 0 : -EIO;
}

/* The next message by a deadline (1 with *m, -ETIMEDOUT, or -errno): the
 * agent is in the guest, and a guest that never answers must not hold the
 * run forever.  Reads never go past the message (agent_reader_fill_frame):
 * what follows on the stream belongs to the next request's reader. */
int ac_answer_by(struct agent_conn *c, int64_t deadline, struct agent_msg *m)
{
    for (;;) {
        int rc = agent_reader_next(&c->rd, m);
        if (rc)
            return rc;
        int64_t left = deadline - agent_mono_ms();
        struct pollfd p = {.fd = c->rd.fd, .events = POLLIN};
        int n = left > 0 ? poll(&p, 1, left < INT_MAX ? (int)left : INT_MAX) : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -ETIMEDOUT;
        rc = agent_reader_fill_frame(&c->rd);
        if (rc < 0)
            return rc;
    }
}

/* The agent's answer to RESEED. */
static int reseed_answer(struct agent_conn *c, unsigned wait_ms, int *err, uint32_t *op)
{
    struct agent_msg m;
    int rc = ac_answer_by(c, agent_deadline_ms(wait_ms), &m);
    if (rc < 0)
        return rc;
    if (m.type == AGENT_RESEEDED)
        return 0;
    if (m.type != AGENT_ERROR ||
        (m.u.error.op != AGENT_OP_RESEED && m.u.error.op != AGENT_OP_CLOCK))
        return -EPROTO;
    *err = (int)m.u.error.code;
    *op = m.u.error.op;
    return 0;
}

int agent_reseed(int fd, uint64_t realtime_ns, const uint8_t *seed, unsigned wait_ms, int *err,
                 uint32_t *op)
{
    *err = 0;
    *op = 0;
    uint8_t f[AGENT_HDR_SIZE + AGENT_RESEED_SIZE];
    ssize_t n = agent_encode_reseed(f, sizeof(f), realtime_ns, seed);
    int rc = n < 0 ? (int)n : agent_send_all(fd, f, (size_t)n);
    if (rc)
        return rc;
    struct agent_conn *c = ac_new(fd, &rc);
    if (!c)
        return rc;
    rc = reseed_answer(c, wait_ms, err, op);
    ac_free(c);
    return rc;
}

const char *agent_reseed_now(int fd, const uint8_t *seed, char *buf, size_t cap)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int err = 0;
    uint32_t op = 0;
    int rc = agent_reseed(fd, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec, seed,
                          AGENT_RESEED_WAIT_MS, &err, &op);
    return agent_reseed_failure(rc, err, op, AGENT_RESEED_WAIT_MS, buf, cap);
}

const char *agent_reseed_failure(int rc, int err, uint32_t op, unsigned wait_ms, char *buf,
                                size_t cap)
{
    static const char crng[] = "the guest could not reseed its random number generator";
    if (rc == -ETIMEDOUT)
        snprintf(buf, cap, "%s: the guest agent did not answer in %u %s", crng,
                 wait_ms % 1000 ? wait_ms : wait_ms / 1000, wait_ms % 1000 ? "ms" : "s");
    else if (rc == -EPROTONOSUPPORT)
        snprintf(buf, cap, "%s: the guest agent speaks another protocol version (an image or "
                 "snapshot from another airlock build?)", crng);
    else if (rc)
        snprintf(buf, cap, "lost the guest agent while it reseeded: %s", strerror(-rc));
    else if (err)
        snprintf(buf, cap, "%s: %s", op == AGENT_OP_CLOCK ? "the guest could not set its clock"
                 : crng, strerror(err));
    else
        return NULL;
    return buf;
}

/* One line into why (when there is room for it); returns rc. */
static int say(int rc, char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int say(int rc, char *why, size_t whylen, const char *fmt, ...)
{
    if (why && whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* The answer to a request that ends in DONE (CREDENTIALS, MOUNT), by
 * wait_ms: 0 for DONE, else -errno with one line in why: `what` failed
 * (an ERROR of step `op`, or PROTO: the agent refused the request; no
 * answer; another protocol version), or the agent was lost while it
 * `doing`. */
static int done_by(int fd, unsigned wait_ms, uint32_t op, const char *what, const char *doing,
                   char *why, size_t whylen)
{
    int rc;
    struct agent_conn *c = ac_new(fd, &rc);
    if (!c)
        return say(rc, why, whylen, "%s: %s", what, strerror(-rc));
    struct agent_msg m;
    rc = ac_answer_by(c, agent_deadline_ms(wait_ms), &m);
    if (rc == 1 && m.type == AGENT_DONE)
        rc = 0;
    else if (rc == 1 && m.type == AGENT_ERROR &&
             (m.u.error.op == op || m.u.error.op == AGENT_OP_PROTO))
        rc = say(-(int)m.u.error.code, why, whylen, "%s: %s%s", what,
                 m.u.error.op == AGENT_OP_PROTO ? "the agent refused the request: " : "",
                 strerror((int)m.u.error.code));
    else if (rc == 1)
        rc = say(-EPROTO, why, whylen, "%s: the guest agent answered out of turn", what);
    else if (rc == -ETIMEDOUT)
        say(rc, why, whylen, "%s: the guest agent did not answer in %u %s", what,
            wait_ms % 1000 ? wait_ms : wait_ms / 1000, wait_ms % 1000 ? "ms" : "s");
    else if (rc == -EPROTONOSUPPORT)
        say(rc, why, whylen, "%s: the guest agent speaks another protocol version (an image or "
            "snapshot from another airlock build?)", what);
    else
        say(rc, why, whylen, "lost the guest agent while it %s: %s", doing, strerror(-rc));
    ac_free(c);
    return rc;
}

int agent_credentials_wait(int fd, const char *const *env, unsigned envc, const char *pem,
                           size_t pem_len, unsigned wait_ms, char *why, size_t whylen)
{
    static const char what[] = "the guest could not install the credentials";
    if (why && whylen)
        why[0] = 0;
    if (envc > AGENT_CRED_MAX_ENVS)
        return say(-EMSGSIZE, why, whylen, "the credentials were not sent: more than %d entries",
                   AGENT_CRED_MAX_ENVS);
    struct agent_cred cr = {.env = env, .envc = envc, .pem = pem, .pem_len = pem ? pem_len : 0};
    size_t cap = AGENT_HDR_SIZE + AGENT_CRED_MAX_PAYLOAD;
    uint8_t *f = malloc(cap);
    if (!f)
        return say(-ENOMEM, why, whylen, "the credentials were not sent: %s", strerror(ENOMEM));
    ssize_t n = agent_encode_credentials(f, cap, &cr);
    int rc = n < 0 ? (int)n : agent_send_all(fd, f, (size_t)n);
    free(f);
    if (n < 0)
        return say(rc, why, whylen, "the credentials were not sent: %s",
                   rc == -EINVAL ? "an entry or the CA is not what the protocol allows"
                                 : "the entries or the CA are over the protocol's limits");
    if (rc)
        return say(rc, why, whylen, "lost the guest agent while sending the credentials: %s",
                   strerror(-rc));
    return done_by(fd, wait_ms, AGENT_OP_FILE, what, "installed the credentials", why, whylen);
}

int agent_credentials(int fd, const char *const *env, unsigned envc, const char *pem,
                      size_t pem_len, char *why, size_t whylen)
{
    return agent_credentials_wait(fd, env, envc, pem, pem_len, AGENT_CREDENTIALS_WAIT_MS, why,
                                  whylen);
}

int agent_mount(int fd, uint32_t device, uint32_t flags, const char *path, unsigned wait_ms,
                char *why, size_t whylen)
{
    char what[AGENT_MOUNT_MAX_PATH + 64];
    if (why && whylen)
        why[0] = 0;
    uint8_t f[AGENT_HDR_SIZE + AGENT_MOUNT_FIXED + AGENT_MOUNT_MAX_PATH];
    ssize_t n = agent_encode_mount(f, sizeof(f), device, flags, path);
    if (n < 0)
        return say((int)n, why, whylen, "the mount was not sent: disk %u at that path is not "
                   "what the protocol allows", device);
    int rc = agent_send_all(fd, f, (size_t)n);
    if (rc)
        return say(rc, why, whylen, "lost the guest agent while sending the mount: %s",
                   strerror(-rc));
    snprintf(what, sizeof(what), "the guest could not mount /dev/vd%c at %s", 'a' + (int)device,
             path);
    return done_by(fd, wait_ms, AGENT_OP_MOUNT, what, "mounted a folder", why, whylen);
}

ssize_t agent_encode_container_end(uint8_t *buf, size_t cap, const char *name)
{
    uint8_t p[AGENT_CTR_MAX_NAME + 1];
    size_t n = agent_ctr_end_payload(p, name);
    return n ? agent_encode(buf, cap, AGENT_CONTAINER_END, p, n) : -EINVAL;
}

int agent_container_end(int fd, const char *name, unsigned wait_ms, char *why, size_t whylen)
{
    char what[AGENT_CTR_MAX_NAME + 64];
    if (why && whylen)
        why[0] = 0;
    uint8_t f[AGENT_HDR_SIZE + AGENT_CTR_MAX_NAME + 1];
    ssize_t n = agent_encode_container_end(f, sizeof(f), name);
    if (n < 0)
        return say((int)n, why, whylen, "the container's end was not sent: its name is not "
                   "what the protocol allows");
    int rc = agent_send_all(fd, f, (size_t)n);
    if (rc)
        return say(rc, why, whylen, "lost the guest agent while ending a container: %s",
                   strerror(-rc));
    snprintf(what, sizeof(what), "the guest could not end container %s", name);
    return done_by(fd, wait_ms, AGENT_OP_CONTAINER, what, "ended a container", why, whylen);
}

int agent_sync(int fd, unsigned wait_ms, char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = 0;
    uint8_t f[AGENT_HDR_SIZE];
    ssize_t n = agent_encode(f, sizeof(f), AGENT_SYNC, NULL, 0);
    int rc = n < 0 ? (int)n : agent_send_all(fd, f, (size_t)n);
    if (rc)
        return say(rc, why, whylen, "lost the guest agent while asking it to sync: %s",
                   strerror(-rc));
    return done_by(fd, wait_ms, AGENT_OP_PROTO, "the guest could not sync its disks", "synced",
                   why, whylen);
}

int agent_file_put_from(int fd, const char *path, uint32_t root_len, uint32_t mode,
                        uint64_t size, agent_read_fn *read_fn, void *opaque)
{
    uint8_t f[AGENT_HDR_SIZE + AGENT_FILE_PUT_FIXED + AGENT_MAX_PATH];
    ssize_t fl = agent_encode_file_put(f, sizeof(f), path, root_len, mode, size);
    if (fl < 0)
        return (int)fl;
    int rc = agent_send_all(fd, f, (size_t)fl);
    if (rc)
        return rc;
    int data_rc = put_data(fd, read_fn, opaque, size);
    if (data_rc && data_rc != -EIO)
        return data_rc;
    struct agent_conn *c = ac_new(fd, &rc);
    if (!c)
        return rc;
    rc = ac_verdict(c, AGENT_FILE_END);
    ac_free(c);
    return data_rc ? data_rc : rc;
}

/* A file descriptor as agent_read_fn: read(2), EINTR retried. */
static ssize_t read_fd(void *opaque, void *buf, size_t len)
{
    ssize_t n;
    while ((n = read(*(int *)opaque, buf, len)) < 0 && errno == EINTR)
        ;
    return n;
}

int agent_file_put(int fd, const char *path, uint32_t mode, int in_fd, uint64_t size)
{
    return agent_file_put_from(fd, path, 0, mode, size, read_fd, &in_fd);
}

static int get_loop(struct agent_conn *c, agent_write_fn *write_fn, void *opaque,
                    uint64_t max_bytes)
{
    uint64_t total = 0;
    for (;;) {
        struct agent_msg m;
        int rc = agent_reader_wait(&c->rd, &m);
        if (rc < 0)
            return rc;
        switch (m.type) {
        case AGENT_FILE_DATA:
            total += m.len;
            if (total > max_bytes)
                return -EFBIG;
            rc = write_fn(opaque, m.payload, m.len);
            if (rc)
                return rc;
            break;
        case AGENT_FILE_END:
            return 0;
        case AGENT_ERROR: /* e.g. a read error half-way through the file */
            return -(int)m.u.error.code;
        default:
            return -EPROTO;
        }
    }
}

int agent_file_get_to(int fd, const char *path, uint64_t max_bytes, agent_write_fn *write_fn,
                      void *opaque)
{
    uint8_t f[AGENT_HDR_SIZE + AGENT_MAX_PATH];
    ssize_t fl = agent_encode_file_get(f, sizeof(f), path);
    if (fl < 0)
        return (int)fl;
    int rc = agent_send_all(fd, f, (size_t)fl);
    if (rc)
        return rc;
    struct agent_conn *c = ac_new(fd, &rc);
    if (!c)
        return rc;
    rc = get_loop(c, write_fn, opaque, max_bytes);
    ac_free(c);
    return rc;
}

static int write_fd(void *opaque, const void *buf, size_t len)
{
    return agent_write_all(*(int *)opaque, buf, len);
}

int agent_file_get(int fd, const char *path, int out_fd, uint64_t max_bytes)
{
    return agent_file_get_to(fd, path, max_bytes, write_fd, &out_fd);
}
