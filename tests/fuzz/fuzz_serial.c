/* libFuzzer target: a guest driving the 8250 with arbitrary register
 * accesses (any offset, width, value) interleaved with host input.  The
 * UART must never crash, its interrupt line must be up exactly while an
 * interrupt cause is pending, and it must never hold more than its FIFO. */
#include <stdint.h>
#include <stdlib.h>

#include "devices/serial.h"

static int irq_level;

static void on_tx(void *opaque, uint8_t byte) { (void)opaque; (void)byte; }
static void on_irq(void *opaque, int level) { (void)opaque; irq_level = level; }
static void on_ready(void *opaque) { (void)opaque; }

static const struct serial_ops ops = {.tx = on_tx, .set_irq = on_irq, .rx_ready = on_ready};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct serial s;
    irq_level = 0;
    serial_init(&s, &ops, NULL);
    /* Each step: 1 op byte (offset, width, direction) + 1 value byte. */
    for (size_t i = 0; i + 1 < size; i += 2) {
        uint8_t op = data[i], val = data[i + 1];
        if ((op & 0xc0) == 0xc0) {
            uint8_t buf[8] = {val, val, val, val, val, val, val, val};
            serial_receive(&s, buf, 1 + (op & 7));
        } else {
            uint8_t buf[8] = {val};
            unsigned width = 1u << ((op >> 3) & 3); /* 1, 2, 4, 8 */
            serial_io(&s, op & 7, buf, width, op & 0x20);
        }
        /* The line must be up exactly while a cause is pending. */
        int pending = ((s.ier & 0x01) && s.rx_count) || ((s.ier & 0x02) && s.thri_pending);
        if (irq_level != pending)
            abort();
        if (s.rx_count > SERIAL_RX_FIFO)
            abort();
    }
    pthread_mutex_destroy(&s.lock);
    return 0;
}
