/* Just enough of the PC keyboard controller for a guest to reset the
 * machine: Linux's reboot=k writes command 0xfe to port 0x64 after waiting
 * for the input buffer to drain (arch/x86/kernel/reboot.c).  There is no
 * keyboard: the status register always reads "empty". */
#ifndef AIRLOCK_DEVICES_I8042_H
#define AIRLOCK_DEVICES_I8042_H

#include <stdbool.h>
#include <stdint.h>

struct i8042 {
    void (*reset)(void *opaque); /* called on the reset command */
    void *opaque;
};

#define I8042_CMD_RESET 0xfe

/* Bus handlers for the data port (0x60) and command/status port (0x64). */
void i8042_data_io(void *opaque, uint64_t offset, uint8_t *data, unsigned len, bool is_write);
void i8042_cmd_io(void *opaque, uint64_t offset, uint8_t *data, unsigned len, bool is_write);

#endif
