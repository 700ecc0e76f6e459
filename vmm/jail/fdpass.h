/* Passing one fd with a small message over a Unix socket (SCM_RIGHTS):
 * how the processes outside the jail (the egress broker, airlock's parent)
 * hand sockets to the VM process, which may not create them itself. */
#ifndef AIRLOCK_JAIL_FDPASS_H
#define AIRLOCK_JAIL_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/* Sends buf (one message) and, when fd >= 0, a copy of fd.  0, or
 * -errno (sendmsg's; -EIO when only part of buf went). */
int fdpass_send(int sock, const void *buf, size_t len, int fd);

/* One message and at most one fd (*fd, else -1); any other fds that came
 * along are closed (a sender cannot make us hold descriptors).  Bytes
 * read, or -errno (-EMSGSIZE when the message or its fds were cut). */
ssize_t fdpass_recv(int sock, void *buf, size_t len, int *fd);

/* The same with up to FDPASS_MAX_FDS fds (fds[0, nfds); more: -EINVAL):
 * a snapshot request's, the most (vmm/snapshot/snapshot_control.h). */
#define FDPASS_MAX_FDS 10
int fdpass_sendv(int sock, const void *buf, size_t len, const int *fds, unsigned nfds);
/* ... and up to max of them into fds (the rest -1, *nfds how many came;
 * more than max are closed; room for FDPASS_MAX_FDS + 2, more cut the
 * message: -EMSGSIZE). */
ssize_t fdpass_recvv(int sock, void *buf, size_t len, int *fds, unsigned max, unsigned *nfds);

#endif
