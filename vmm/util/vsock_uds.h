/* Firecracker's hybrid vsock naming, which `--vsock-uds PATH` follows: a
 * guest connection to host port P reaches the Unix socket "PATH_P".  Used
 * by the vsock backend (vmm/kvm/vsock_host.c) and, once the monitor is jailed
 * and cannot reach PATH itself, by the jail's parent that dials for it. */
#ifndef AIRLOCK_UTIL_VSOCK_UDS_H
#define AIRLOCK_UTIL_VSOCK_UDS_H

#include <stdint.h>

/* Connects to the Unix socket PATH_<port> (non-blocking).  fd or -errno. */
int vsock_uds_dial(const char *path, uint32_t port);

#endif
