/* RESEED (proto.h): the host's randomness into the guest's CRNG and the
 * host's wall time onto the guest's clock.  After a snapshot restore every
 * VM starts from the same memory, CRNG state included, and its clock from
 * the snapshot's instant; this is what makes each one different and on
 * time.  Best effort: an agent not running as root (host-side tests) can
 * do neither, and says so only on its console. */
#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent/agent.h"

static void reseed_crng(const uint8_t *seed)
{
    struct {
        struct rand_pool_info info;
        uint8_t buf[AGENT_RESEED_SEED];
    } e;
    e.info.entropy_count = AGENT_RESEED_SEED * 8; /* bits credited */
    e.info.buf_size = AGENT_RESEED_SEED;
    memcpy(e.buf, seed, AGENT_RESEED_SEED);
    int fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
    /* RNDADDENTROPY mixes and credits; RNDRESEEDCRNG makes the CRNG take
     * it now rather than at its next scheduled reseed. */
    if (fd < 0 || ioctl(fd, RNDADDENTROPY, &e) < 0 || ioctl(fd, RNDRESEEDCRNG) < 0)
        if (getpid() == 1 || getppid() == 1)
            fprintf(stderr, "airlock-agent: reseed: %s\n", strerror(errno));
    if (fd >= 0)
        close(fd);
    memset(&e, 0, sizeof(e));
}

int agent_do_reseed(struct aconn *c, const struct agent_msg *m)
{
    (void)c;
    reseed_crng(m->u.reseed.seed);
    struct timespec ts = {.tv_sec = (time_t)(m->u.reseed.realtime_ns / 1000000000u),
                          .tv_nsec = (long)(m->u.reseed.realtime_ns % 1000000000u)};
    if (clock_settime(CLOCK_REALTIME, &ts) < 0 && getppid() == 1)
        fprintf(stderr, "airlock-agent: setting the clock: %s\n", strerror(errno));
    return 0;
}
