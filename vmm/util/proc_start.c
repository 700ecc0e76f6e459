/* A process's start time; see proc_start.h. */
#include "vmm/util/proc_start.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t proc_start_time(pid_t pid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* "pid (comm) S ...": comm may hold spaces and parentheses, so the
     * fields start after the last ')'. */
    char *s = strrchr(buf, ')');
    if (!s || s[1] != ' ' || s[2] == 'Z' || s[2] == 'X')
        return 0;
    s += 2; /* field 3, the state */
    for (int field = 3; field < 22; field++) {
        s = strchr(s, ' ');
        if (!s)
            return 0;
        s++;
    }
    return strtoull(s, NULL, 10);
}
