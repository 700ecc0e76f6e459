/* airlock's boot timer: one write-only I/O port (LAYOUT_BOOT_TIMER_PORT)
 * where the guest agent marks its milestones, in the spirit of
 * Firecracker's boot-timer device.  A one-byte `outb` is the cheapest
 * signal a guest can give (one exit, no queue, no interrupt), so airlock
 * can time "guest kernel until userspace" and stop polling for the agent.
 *
 *   value 1  the agent's first instructions (PID 1 runs: the kernel is done)
 *   value 2  the agent listens on vsock (commands can be sent now)
 *
 * Any other value or access size is ignored; reads see all-ones, like an
 * empty port.  The guest may write as often as it likes: each mark is
 * passed on, and the receiver keeps the first of each (vmm/util/timings.c). */
#ifndef AIRLOCK_DEVICES_BOOT_TIMER_H
#define AIRLOCK_DEVICES_BOOT_TIMER_H

#include <stdbool.h>
#include <stdint.h>

enum boot_timer_mark {
    BOOT_TIMER_USERSPACE = 1,
    BOOT_TIMER_AGENT_READY = 2,
};

struct boot_timer {
    void (*mark)(void *opaque, enum boot_timer_mark what); /* may be NULL */
    void *opaque;
};

/* The bus handler (offset is always 0: the range is one port). */
void boot_timer_io(void *opaque, uint64_t offset, uint8_t *data, unsigned len, bool is_write);

#endif
