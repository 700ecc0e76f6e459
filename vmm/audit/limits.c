/* Token bucket and limit reports; see limits.h. */
#include "vmm/audit/limits.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "devices/disk.h"
#include "vmm/util/nbfd.h"

#define NS_PER_S 1000000000ULL
#define BURST_MAX (16ULL << 30) /* x 1e9 stays below 2^64 */

void rate_limit_init(struct rate_limit *rl, uint64_t rate, uint64_t burst)
{
    if (burst > BURST_MAX)
        burst = BURST_MAX;
    *rl = (struct rate_limit){.rate = rate, .max = burst * NS_PER_S};
    rl->credit = rl->max;
}

uint64_t rate_limit_take(struct rate_limit *rl, uint64_t now_ns, uint64_t n)
{
    if (!rl->rate)
        return n;
    if (now_ns > rl->last_ns) {
        /* 128 bits: hours of idle time at a high rate overflow 64. */
        unsigned __int128 add = (unsigned __int128)(now_ns - rl->last_ns) * rl->rate;
        unsigned __int128 sum = add + rl->credit;
        rl->credit = sum > rl->max ? rl->max : (uint64_t)sum;
        rl->last_ns = now_ns;
    }
    uint64_t can = rl->credit / NS_PER_S;
    uint64_t take = n < can ? n : can;
    rl->credit -= take * NS_PER_S;
    return take;
}

uint64_t limits_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static const struct audit *limits_audit;
static int limits_err_fd = STDERR_FILENO;

void limits_set_audit(const struct audit *a)
{
    limits_audit = a;
}

void limits_set_err_fd(int fd)
{
    limits_err_fd = fd;
}

void limit_report(const char *limit, uint64_t max, uint64_t dropped, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char line[sizeof(msg) + 16];
    int n = snprintf(line, sizeof(line), "airlock: %s\n", msg);
    fflush(stderr); /* what stdio still holds goes first */
    nbfd_say(limits_err_fd, line, n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
    if (limits_audit)
        limit_record(limits_audit, limit, max, dropped);
}

void limit_record(const struct audit *a, const char *limit, uint64_t max, uint64_t dropped)
{
    struct audit_rec r;
    audit_begin(a, &r, "limit");
    audit_str(&r, "limit", limit);
    audit_u64(&r, "max", max);
    audit_u64(&r, "dropped_bytes", dropped);
    audit_end(a, &r);
}

void limits_disk_full(void *opaque, const struct disk *d, uint64_t refused)
{
    const char *flag = opaque ? opaque : "--disk ...,cow=SIZE; airlock run: --disk-cap";
    uint64_t cap = disk_overlay_cap(d);
    limit_report("disk_cow", cap, refused,
                 "%s: copy-on-write overlay full (%llu MiB, %s): the guest's writes beyond it "
                 "fail with I/O errors",
                 disk_path(d), (unsigned long long)(cap >> 20), flag);
}
