/* A 16550A UART (8250 family) on one PIO window of 8 ports: the guest's
 * console.  Transmit is immediate (the host sink never pushes back on the
 * guest); receive goes through a FIFO filled from the host side.  Interrupts
 * are level-tracked: the line is raised while IIR reports a cause and
 * lowered when none is left, which gives the edge the ISA IOAPIC pin wants. */
#ifndef AIRLOCK_DEVICES_SERIAL_H
#define AIRLOCK_DEVICES_SERIAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SERIAL_PORTS     8
#define SERIAL_RX_FIFO   64

struct serial_ops {
    void (*tx)(void *opaque, uint8_t byte);        /* a byte the guest sent */
    void (*set_irq)(void *opaque, int level);      /* raise (1) / lower (0) */
    void (*rx_ready)(void *opaque);                /* can take input again */
};

struct serial {
    pthread_mutex_t lock;
    const struct serial_ops *ops;
    void *opaque;
    uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
    bool thri_pending; /* THR-empty interrupt armed and not yet read from IIR */
    int irq_level;
    uint8_t rx[SERIAL_RX_FIFO];
    unsigned rx_head, rx_count;
};

void serial_init(struct serial *s, const struct serial_ops *ops, void *opaque);

/* Bus handler (offset 0..7 from the base port). */
void serial_io(void *opaque, uint64_t offset, uint8_t *data, unsigned len, bool is_write);

/* Queues host input for the guest; returns how many bytes it took (the
 * rest must be offered again after rx_ready).  Input is taken only while
 * the guest has the receive interrupt enabled: a guest that is not
 * listening yet (still booting, or between two opens of the tty, which
 * clear the FIFO) would otherwise lose it. */
size_t serial_receive(struct serial *s, const uint8_t *buf, size_t len);

/* Snapshots: the registers a guest can set (every byte value is one a
 * guest could write, so a load needs no checks beyond the flag's), and the
 * interrupt line recomputed from them.  Queued input is not kept. */
struct snap_serial {
    uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
    uint8_t thri_pending;          /* 0 or 1 */
};

void serial_save(struct serial *s, struct snap_serial *st);
int serial_load(struct serial *s, const struct snap_serial *st);

#endif
