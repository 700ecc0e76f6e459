#include "vmm/util/guest_paths.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void guest_default_path(char *out, size_t cap, const char *name)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[n > 0 ? n : 0] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    const char *dir = slash ? self : ".";
    char installed[4096 + 64];
    snprintf(installed, sizeof(installed), "%s/../lib/airlock/%s", dir, name);
    if (snprintf(out, cap, "%s/guest/%s", dir, name) >= (int)cap)
        snprintf(out, cap, "guest/%s", name); /* absurdly deep: relative is all we can do */
    else if (access(out, F_OK) != 0 && access(installed, F_OK) == 0 && strlen(installed) < cap)
        snprintf(out, cap, "%s", installed);
}

void guest_default_kernel(char *out, size_t cap, unsigned cpus)
{
    if (cpus == 1) {
        guest_default_path(out, cap, "vmlinux-up");
        if (access(out, F_OK) == 0)
            return;
    }
    guest_default_path(out, cap, "vmlinux");
}
