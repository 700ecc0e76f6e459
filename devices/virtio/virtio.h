/* Constants of the virtio 1.2 specification shared by the transport, the
 * queue and the devices. */
#ifndef AIRLOCK_DEVICES_VIRTIO_VIRTIO_H
#define AIRLOCK_DEVICES_VIRTIO_VIRTIO_H

/* §2.1 Device status field. */
#define VIRTIO_STATUS_ACKNOWLEDGE        1u
#define VIRTIO_STATUS_DRIVER             2u
#define VIRTIO_STATUS_DRIVER_OK          4u
#define VIRTIO_STATUS_FEATURES_OK        8u
#define VIRTIO_STATUS_DEVICE_NEEDS_RESET 64u
#define VIRTIO_STATUS_FAILED             128u

/* §6 Reserved feature bits. */
#define VIRTIO_F_INDIRECT_DESC   28 /* never offered */
#define VIRTIO_F_EVENT_IDX       29
#define VIRTIO_F_VERSION_1       32 /* required */

/* §5 Device IDs. */
#define VIRTIO_ID_BLOCK  2
#define VIRTIO_ID_VSOCK  19

/* §4.2.2 InterruptStatus bits. */
#define VIRTIO_MMIO_INT_VRING  1u
#define VIRTIO_MMIO_INT_CONFIG 2u

#define VIRTIO_BIT(n) (1ULL << (n))

#include <stdint.h>

/* Virtio structures are little-endian (§1.4); these read and write an
 * n-byte field (n <= 8) byte by byte, so alignment never matters. */
static inline void virtio_put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t virtio_get_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

#endif
