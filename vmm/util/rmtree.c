#include "vmm/util/rmtree.h"

#include <ftw.h>
#include <stdio.h>
#include <unistd.h>

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 ? -1 : 0;
}

int rmtree(const char *path)
{
    return nftw(path, remove_one, 64, FTW_DEPTH | FTW_PHYS);
}
