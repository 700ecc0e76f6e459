/* libFuzzer target: the VM's parser of DISK-FILL / DISK-EMPTY requests
 * (vmm/snapshot/disk_control.c), which reads bytes the control socket's
 * other end chose.  Byte 0's low 2 bits are how many fds came with the
 * request; the rest is its text.  An accepted request must be one the
 * daemon's side could have sent: a slot in range, a serial of 1..20
 * printable bytes, the right fd count, and its text written again the
 * way vm_control_disk_fill writes it parses to the same request. */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "vmm/snapshot/disk_control.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned nfds = data[0] & 3;
    const char *text = (const char *)data + 1;
    size_t n = size - 1;
    struct disk_control_req r, again;
    char why[256];
    if (disk_control_parse(text, n, nfds, &r, why, sizeof(why))) {
        assert(memchr(why, '\0', sizeof(why)) && why[0]);
        return 0;
    }
    assert(n <= DISK_CONTROL_MSG_MAX && r.slot <= 255);
    char out[DISK_CONTROL_MSG_MAX + 1];
    int len;
    if (r.op == DISK_CONTROL_FILL) {
        size_t sl = strlen(r.serial);
        assert(nfds == 2 && sl >= 1 && sl <= DISK_SERIAL_MAX);
        for (size_t i = 0; i < sl; i++)
            assert(r.serial[i] >= 0x20 && r.serial[i] <= 0x7e);
        len = snprintf(out, sizeof(out), "DISK-FILL %u %s %llu", r.slot, r.serial,
                       (unsigned long long)r.cow_cap);
    } else {
        assert(r.op == DISK_CONTROL_EMPTY && nfds == 0);
        len = snprintf(out, sizeof(out), "DISK-EMPTY %u", r.slot);
    }
    assert(len > 0 && (size_t)len < sizeof(out));
    assert(disk_control_parse(out, (size_t)len, nfds, &again, why, sizeof(why)) == 0);
    assert(again.op == r.op && again.slot == r.slot && again.cow_cap == r.cow_cap &&
           !strcmp(again.serial, r.serial));
    return 0;
}
