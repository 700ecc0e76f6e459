/* The links every Linux /dev has (udev's, runc's), for the agent's /dev
 * at boot and for a container's own /dev (pidns.c): `cat /dev/stdin`,
 * bash's <(...), and /dev/ptmx naming the devpts instance at /dev/pts
 * (mounted with ptmxmode=0666) rather than devtmpfs's node. */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/agent.h"

int agent_dev_links(void)
{
    static const char *const links[][2] = {
        {"/proc/self/fd", "/dev/fd"},       {"/proc/self/fd/0", "/dev/stdin"},
        {"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"},
    };
    for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
        if (symlink(links[i][0], links[i][1]) && errno != EEXIST)
            return errno;
    /* Only where a devpts is there to point at; a link already there stays. */
    struct stat st;
    if (access("/dev/pts/ptmx", F_OK))
        return 0;
    if (lstat("/dev/ptmx", &st) == 0) {
        if (!S_ISCHR(st.st_mode))
            return 0; /* a link (or whatever the image put there) stays */
        if (unlink("/dev/ptmx"))
            return errno;
    }
    return symlink("pts/ptmx", "/dev/ptmx") ? errno : 0;
}
