/* EXEC's capability sets (AGENT_EXEC_F_CAPS, proto.h): an OCI process's
 * process.capabilities, applied in the order runc applies them.  The
 * bounding set is cut while the child is still root (dropping needs
 * CAP_SETPCAP), the permitted set is kept across setuid (PR_SET_KEEPCAPS),
 * and after the uid change the three sets are set and the ambient ones
 * the kernel allows raised, so a non-root process keeps what the config
 * gives it through execve.  Raw capset: the agent links no libcap, and the
 * version-3 ABI is the kernel's own. */
#include <errno.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest/agent/agent.h"

int agent_caps_bound(const struct agent_exec_req *r)
{
    if (!(r->flags & AGENT_EXEC_F_CAPS))
        return 0;
    /* PR_CAPBSET_READ fails past the kernel's last capability. */
    for (int c = 0; c < 64 && prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
        if (!(r->cap_bounding & (1ull << c)) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0))
            return errno;
    return prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) ? errno : 0;
}

int agent_caps_set(const struct agent_exec_req *r)
{
    if (!(r->flags & AGENT_EXEC_F_CAPS))
        return 0;
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2] = {
        {(uint32_t)r->cap_effective, (uint32_t)r->cap_permitted, (uint32_t)r->cap_inheritable},
        {(uint32_t)(r->cap_effective >> 32), (uint32_t)(r->cap_permitted >> 32),
         (uint32_t)(r->cap_inheritable >> 32)},
    };
    if (syscall(SYS_capset, &h, d))
        return errno;
    if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0))
        return errno;
    /* The kernel raises an ambient capability only when it is permitted
     * and inheritable too; `runc spec`'s config asks for ambient ones
     * without inheritable ones.  runc (1.1.5; it warns) and crun raise
     * what the kernel allows and run the process anyway: so do we. */
    for (int c = 0; c < 64; c++)
        if ((r->cap_ambient & (1ull << c)) &&
            prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) && errno != EPERM &&
            errno != EINVAL)
            return errno;
    return 0;
}
