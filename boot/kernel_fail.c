#include "boot/kernel.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int kernel_fail(struct kernel_image *img, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(img->error, sizeof(img->error), fmt, ap);
    va_end(ap);
    return -EINVAL;
}
