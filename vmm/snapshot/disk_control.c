#include "vmm/snapshot/disk_control.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define FILL "DISK-FILL "
#define EMPTY "DISK-EMPTY "
#define WANT_FILL "want DISK-FILL <slot> <serial> <cow_cap_bytes>"
#define WANT_EMPTY "want DISK-EMPTY <slot>"
/* A slot number beyond this is "out of range" without reading on: the VM
 * has at most LAYOUT_VIRTIO_SLOTS (8) devices in all. */
#define SLOT_MAX 255u

/* Decimal digits only (no sign, no space, at least one), up to `max`. */
static int parse_num(const char *s, size_t n, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (max - d) / 10)
            return -ERANGE;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int fail(char *why, size_t cap, const char *text)
{
    snprintf(why, cap, "%s", text);
    return -EINVAL;
}

/* The slot: digits up to the first space (or the end). */
static int parse_slot(const char *s, size_t n, unsigned *slot, char *why, size_t cap)
{
    uint64_t v = 0;
    int e = parse_num(s, n, UINT64_MAX, &v);
    if (e == -EINVAL)
        return fail(why, cap, "bad request: the slot is not a number");
    if (e || v > SLOT_MAX) {
        snprintf(why, cap, "slot out of range (the spares are numbered from 0, at most %u)",
                 SLOT_MAX);
        return -EINVAL;
    }
    *slot = (unsigned)v;
    return 0;
}

/* "<slot> <serial> <cap>": the serial is what lies between the first and
 * the last space, so it may hold spaces of its own. */
static int parse_fill(const char *s, size_t n, struct disk_control_req *r, char *why, size_t cap)
{
    const char *sp1 = memchr(s, ' ', n);
    const char *sp2 = NULL;
    for (size_t i = n; i-- > 0;)
        if (s[i] == ' ') {
            sp2 = s + i;
            break;
        }
    if (!sp1 || sp2 == sp1)
        return fail(why, cap, "bad request: " WANT_FILL);
    int e = parse_slot(s, (size_t)(sp1 - s), &r->slot, why, cap);
    if (e)
        return e;
    const char *ser = sp1 + 1;
    size_t slen = (size_t)(sp2 - ser);
    if (slen == 0 || slen > DISK_SERIAL_MAX)
        return fail(why, cap, "bad serial: want 1 to 20 printable ASCII bytes");
    for (size_t i = 0; i < slen; i++)
        if (ser[i] < 0x20 || ser[i] > 0x7e)
            return fail(why, cap, "bad serial: want 1 to 20 printable ASCII bytes");
    memcpy(r->serial, ser, slen);
    r->serial[slen] = '\0';
    const char *num = sp2 + 1;
    if (parse_num(num, (size_t)(s + n - num), UINT64_MAX, &r->cow_cap))
        return fail(why, cap, "bad request: the cow cap is not a number of bytes");
    return 0;
}

int disk_control_parse(const char *data, size_t n, unsigned nfds, struct disk_control_req *r,
                       char *why, size_t cap)
{
    memset(r, 0, sizeof(*r));
    if (n > DISK_CONTROL_MSG_MAX)
        return fail(why, cap, "bad request: too long");
    if (n >= sizeof(FILL) - 1 && !memcmp(data, FILL, sizeof(FILL) - 1)) {
        r->op = DISK_CONTROL_FILL;
        int e = parse_fill(data + sizeof(FILL) - 1, n - (sizeof(FILL) - 1), r, why, cap);
        if (!e && nfds != 2) {
            snprintf(why, cap, "bad fds: DISK-FILL takes 2 (the base image, the overlay), got %u",
                     nfds);
            e = -EINVAL;
        }
        return e;
    }
    if (n >= sizeof(EMPTY) - 1 && !memcmp(data, EMPTY, sizeof(EMPTY) - 1)) {
        r->op = DISK_CONTROL_EMPTY;
        const char *s = data + sizeof(EMPTY) - 1;
        size_t len = n - (sizeof(EMPTY) - 1);
        if (memchr(s, ' ', len))
            return fail(why, cap, "bad request: " WANT_EMPTY);
        int e = parse_slot(s, len, &r->slot, why, cap);
        if (!e && nfds) {
            snprintf(why, cap, "bad fds: DISK-EMPTY takes none, got %u", nfds);
            e = -EINVAL;
        }
        return e;
    }
    return fail(why, cap, "bad request: " WANT_FILL " or " WANT_EMPTY);
}

int vm_control_disk_fill(int sock, unsigned slot, const char *serial, int base_fd, int overlay_fd,
                         uint64_t cow_cap, unsigned timeout_ms, char *msg, size_t cap)
{
    size_t slen = serial ? strlen(serial) : 0;
    if (slen == 0 || slen > DISK_SERIAL_MAX)
        return snprintf(msg, cap, "bad serial: want 1 to 20 printable ASCII bytes"), -EINVAL;
    for (size_t i = 0; i < slen; i++)
        if (serial[i] < 0x20 || serial[i] > 0x7e)
            return snprintf(msg, cap, "bad serial: want 1 to 20 printable ASCII bytes"), -EINVAL;
    if (base_fd < 0 || overlay_fd < 0)
        return snprintf(msg, cap, "bad fds: a negative descriptor"), -EBADF;
    char text[DISK_CONTROL_MSG_MAX + 1];
    int len = snprintf(text, sizeof(text), FILL "%u %s %llu", slot, serial,
                       (unsigned long long)cow_cap);
    int fds[2] = {base_fd, overlay_fd};
    int e = snap_control_send(sock, text, (size_t)len, fds, 2);
    return e ? e : snap_control_answer_wait(sock, timeout_ms, msg, cap);
}

int vm_control_disk_empty(int sock, unsigned slot, unsigned timeout_ms, char *msg, size_t cap)
{
    char text[DISK_CONTROL_MSG_MAX + 1];
    int len = snprintf(text, sizeof(text), EMPTY "%u", slot);
    int e = snap_control_send(sock, text, (size_t)len, NULL, 0);
    return e ? e : snap_control_answer_wait(sock, timeout_ms, msg, cap);
}
