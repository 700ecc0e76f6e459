#include "vmm/kvm/machine.h"

#include <stdio.h>
#include <string.h>

#include "devices/virtio/blk.h"
#include "devices/virtio/vsock.h"

int machine_register_devices(struct bus *bus, const struct gmem *mem, struct vdevs *vs,
                             const struct machine_devices *m, char *err, size_t errlen)
{
    int e = bus_register(bus, BUS_PIO, LAYOUT_COM1_PORT, SERIAL_PORTS, "serial-8250 (COM1)",
                         serial_io, m->serial);
    if (!e)
        e = bus_register(bus, BUS_PIO, LAYOUT_I8042_DATA_PORT, 1, "i8042 data", i8042_data_io,
                         m->kbd);
    if (!e)
        e = bus_register(bus, BUS_PIO, LAYOUT_I8042_CMD_PORT, 1, "i8042 command", i8042_cmd_io,
                         m->kbd);
    if (!e)
        e = bus_register(bus, BUS_PIO, LAYOUT_BOOT_TIMER_PORT, 1, "boot timer", boot_timer_io,
                         m->timer);
    if (e) {
        snprintf(err, errlen, "registering devices: %s", strerror(-e));
        return e;
    }
    /* The first disk is /dev/vda: slots follow --disk order. */
    for (unsigned i = 0; i < m->nblks && !e; i++)
        e = vdevs_register(vs, bus, mem, &virtio_blk_ops, m->blks[i], err, errlen);
    if (!e && m->vsock)
        e = vdevs_register(vs, bus, mem, &virtio_vsock_ops, m->vsock, err, errlen);
    return e;
}
