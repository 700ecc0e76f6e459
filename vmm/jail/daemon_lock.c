/* The daemon's capabilities and filter; see daemon_lock.h. */
#include "vmm/jail/daemon_lock.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

/* What a root daemon still does with privilege once its spawner makes
 * every child (the VM processes jail themselves under an unprivileged
 * uid of their own, so they are not ours to signal or read without it):
 *   CAP_KILL        SIGTERM / SIGKILL to a sandbox's VM process (stop,
 *                   lease end, pool refill, daemon exit)
 *   CAP_SYS_PTRACE  /proc/PID/smaps_rollup and /proc/PID/fd of a VM
 *                   process, for a sandbox's RSS, PSS and overlay bytes
 *                   (ptrace(2) and process_vm_* are not on the filter's
 *                   list: the capability serves reading /proc only)
 *   CAP_NET_BIND_SERVICE  a published port under 1024 (POST .../ports) */
static const cap_value_t kept[] = {CAP_KILL, CAP_SYS_PTRACE, CAP_NET_BIND_SERVICE};
const char *const daemon_caps_kept[] = {
    "CAP_KILL: signal a sandbox's VM process (it runs under a uid of its own)",
    "CAP_SYS_PTRACE: read a VM process's /proc/PID/smaps_rollup and fd/ for its figures",
    "CAP_NET_BIND_SERVICE: publish a sandbox's port on a host port under 1024",
    NULL,
};

static bool is_kept(cap_value_t c)
{
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
        if (kept[i] == c)
            return true;
    return false;
}

static int drop_caps(char *why, size_t whylen)
{
    cap_t now = cap_get_proc();
    if (!now)
        return snprintf(why, whylen, "cap_get_proc: %s", strerror(errno)), -errno;
    cap_flag_value_t setpcap = CAP_CLEAR;
    cap_get_flag(now, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap);
    /* The bounding set: what no exec could give back (the daemon never
     * execs, but a stray one stays powerless).  Only with CAP_SETPCAP:
     * a daemon run as a user has nothing there to lose. */
    for (cap_value_t c = 0; setpcap == CAP_SET && c <= CAP_LAST_CAP; c++)
        if (!is_kept(c) && prctl(PR_CAPBSET_READ, c, 0, 0, 0) > 0 &&
            prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL) {
            int e = errno;
            snprintf(why, whylen, "dropping capability %d from the bounding set: %s", (int)c,
                     strerror(e));
            cap_free(now);
            return -e;
        }
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); /* fails only without ambient caps */
    /* Effective and permitted: the kept ones we have; inheritable: none. */
    cap_t want = cap_init();
    int rc = want ? 0 : -ENOMEM;
    for (size_t i = 0; !rc && i < sizeof(kept) / sizeof(kept[0]); i++) {
        cap_flag_value_t have = CAP_CLEAR;
        cap_get_flag(now, kept[i], CAP_PERMITTED, &have);
        if (have == CAP_SET &&
            (cap_set_flag(want, CAP_PERMITTED, 1, &kept[i], CAP_SET) ||
             cap_set_flag(want, CAP_EFFECTIVE, 1, &kept[i], CAP_SET)))
            rc = -EINVAL;
    }
    if (!rc && cap_set_proc(want))
        rc = -errno;
    if (rc)
        snprintf(why, whylen, "dropping capabilities: %s", strerror(-rc));
    cap_free(want);
    cap_free(now);
    return rc;
}

int daemon_lock(enum seccomp_mode mode, char *why, size_t whylen)
{
    if (mode == SECCOMP_MODE_OFF) {
        fprintf(stderr, "airlock: --seccomp off: the daemon runs without its seccomp filter and "
                        "keeps its capabilities\n");
        return 0;
    }
    int rc = drop_caps(why, whylen);
    if (rc)
        return rc;
    seccomp_set_mode(mode);
    if ((rc = seccomp_apply(SECCOMP_DAEMON)))
        snprintf(why, whylen, "cannot install the daemon's seccomp filter: %s", strerror(-rc));
    return rc;
}
