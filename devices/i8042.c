#include "devices/i8042.h"

#include <string.h>

void i8042_data_io(void *opaque, uint64_t offset, uint8_t *data, unsigned len, bool is_write)
{
    (void)opaque;
    (void)offset;
    if (!is_write)
        memset(data, 0, len); /* no key, no reply */
}

void i8042_cmd_io(void *opaque, uint64_t offset, uint8_t *data, unsigned len, bool is_write)
{
    struct i8042 *kbd = opaque;
    (void)offset;
    if (!is_write) {
        memset(data, 0, len); /* status: output and input buffers empty */
        return;
    }
    if (data[0] == I8042_CMD_RESET && kbd->reset)
        kbd->reset(kbd->opaque);
}
