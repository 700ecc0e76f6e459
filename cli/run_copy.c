/* Parsing --copy-in / --copy-out; see run_copy.h. */
#include "cli/run_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int run_copy_parse(char *arg, bool in, struct run_copy *c)
{
    char *colon = strchr(arg, ':');
    c->arg = strdup(arg);
    if (!colon || colon == arg || !colon[1] || !c->arg)
        return -EINVAL;
    *colon = 0;
    c->host = in ? arg : colon + 1;
    c->guest = in ? colon + 1 : arg;
    if (c->guest[0] != '/')
        return -EINVAL;
    c->fd = open(c->host, in ? O_RDONLY | O_CLOEXEC : O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (c->fd < 0)
        return -errno;
    if (fstat(c->fd, &c->st) < 0)
        return -errno;
    return S_ISREG(c->st.st_mode) ? 0 : -EINVAL;
}
