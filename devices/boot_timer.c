#include "devices/boot_timer.h"

#include <string.h>

void boot_timer_io(void *opaque, uint64_t offset, uint8_t *data, unsigned len, bool is_write)
{
    struct boot_timer *t = opaque;
    (void)offset;
    if (!is_write) {
        memset(data, 0xff, len);
        return;
    }
    /* Only the documented one-byte writes: a wider access is not the
     * agent's, and its upper bytes would need a meaning we do not give. */
    if (len != 1 || !t->mark)
        return;
    if (data[0] == BOOT_TIMER_USERSPACE || data[0] == BOOT_TIMER_AGENT_READY)
        t->mark(t->opaque, (enum boot_timer_mark)data[0]);
}
