/* The 44-byte virtio-vsock packet header (virtio 1.2 §5.10.6), little-endian
 * on the wire: read once into a local struct, written from one. */
#include "devices/virtio/vsock.h"

#include <string.h>

/* §5.10.6 struct virtio_vsock_hdr field offsets. */
enum {
    H_SRC_CID = 0, H_DST_CID = 8, H_SRC_PORT = 16, H_DST_PORT = 20, H_LEN = 24, H_TYPE = 28,
    H_OP = 30, H_FLAGS = 32, H_BUF_ALLOC = 36, H_FWD_CNT = 40,
};

void vsock_hdr_decode(const uint8_t raw[VSOCK_HDR_BYTES], struct vsock_hdr *h)
{
    h->src_cid = virtio_get_le(raw + H_SRC_CID, 8);
    h->dst_cid = virtio_get_le(raw + H_DST_CID, 8);
    h->src_port = (uint32_t)virtio_get_le(raw + H_SRC_PORT, 4);
    h->dst_port = (uint32_t)virtio_get_le(raw + H_DST_PORT, 4);
    h->len = (uint32_t)virtio_get_le(raw + H_LEN, 4);
    h->type = (uint16_t)virtio_get_le(raw + H_TYPE, 2);
    h->op = (uint16_t)virtio_get_le(raw + H_OP, 2);
    h->flags = (uint32_t)virtio_get_le(raw + H_FLAGS, 4);
    h->buf_alloc = (uint32_t)virtio_get_le(raw + H_BUF_ALLOC, 4);
    h->fwd_cnt = (uint32_t)virtio_get_le(raw + H_FWD_CNT, 4);
}

void vsock_hdr_encode(const struct vsock_hdr *h, uint8_t raw[VSOCK_HDR_BYTES])
{
    virtio_put_le(raw + H_SRC_CID, h->src_cid, 8);
    virtio_put_le(raw + H_DST_CID, h->dst_cid, 8);
    virtio_put_le(raw + H_SRC_PORT, h->src_port, 4);
    virtio_put_le(raw + H_DST_PORT, h->dst_port, 4);
    virtio_put_le(raw + H_LEN, h->len, 4);
    virtio_put_le(raw + H_TYPE, h->type, 2);
    virtio_put_le(raw + H_OP, h->op, 2);
    virtio_put_le(raw + H_FLAGS, h->flags, 4);
    virtio_put_le(raw + H_BUF_ALLOC, h->buf_alloc, 4);
    virtio_put_le(raw + H_FWD_CNT, h->fwd_cnt, 4);
}
