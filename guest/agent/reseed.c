/* RESEED (proto.h): the host's randomness into the guest's CRNG and the
 * host's wall time onto the guest's clock.  After a snapshot restore every
 * VM starts from the same memory, CRNG state included, and its clock from
 * the snapshot's instant; this is what makes each one different and on
 * time.  The host waits for the answer and runs no command without a
 * RESEEDED: a failure here must not pass unnoticed (VMs restored from one
 * snapshot would share random state).  An agent without CAP_SYS_ADMIN
 * (tests/agent/run-tests drops it) fails with EPERM: that is how the
 * tests make a reseed fail, with no test switch in the agent. */
#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent/agent.h"

/* 0 or -errno. */
static int reseed_crng(const uint8_t *seed)
{
    struct {
        struct rand_pool_info info;
        uint8_t buf[AGENT_RESEED_SEED];
    } e;
    e.info.entropy_count = AGENT_RESEED_SEED * 8; /* bits credited */
    e.info.buf_size = AGENT_RESEED_SEED;
    memcpy(e.buf, seed, AGENT_RESEED_SEED);
    int rc = 0;
    int fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
    /* RNDADDENTROPY mixes and credits; RNDRESEEDCRNG makes the CRNG take
     * it now rather than at its next scheduled reseed. */
    if (fd < 0 || ioctl(fd, RNDADDENTROPY, &e) < 0 || ioctl(fd, RNDRESEEDCRNG) < 0)
        rc = -errno;
    if (fd >= 0)
        close(fd);
    /* The seed is not left on the stack for a later request to find. */
    explicit_bzero(&e, sizeof(e));
    return rc;
}

int agent_do_reseed(struct aconn *c, const struct agent_msg *m)
{
    int rc = reseed_crng(m->u.reseed.seed);
    uint32_t op = AGENT_OP_RESEED;
    /* After a failed reseed the run is refused anyway: the clock is left
     * alone (and a test's unprivileged agent never sets its host's). */
    if (rc == 0) {
        struct timespec ts = {.tv_sec = (time_t)(m->u.reseed.realtime_ns / 1000000000u),
                              .tv_nsec = (long)(m->u.reseed.realtime_ns % 1000000000u)};
        if (clock_settime(CLOCK_REALTIME, &ts) < 0) {
            rc = -errno;
            op = AGENT_OP_CLOCK;
        }
    }
    if (rc < 0) {
        /* On the console too: the host's line is on the host. */
        if (getpid() == 1 || getppid() == 1)
            fprintf(stderr, "airlock-agent: %s: %s\n", op == AGENT_OP_CLOCK ? "setting the clock"
                    : "reseed", strerror(-rc));
        return aconn_send_error(c, -rc, op);
    }
    return aconn_send(c, AGENT_RESEEDED, NULL, 0);
}
