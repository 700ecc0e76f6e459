/* Writes that never wait on a reader who stopped reading.  Our stdout and
 * stderr are usually shared with the shell (one open file description), so
 * setting O_NONBLOCK on them would change the caller's terminal or pipe
 * too, and would outlive us if we were killed.  Instead a pipe, FIFO or
 * terminal is opened a second time through /proc/self/fd: the same pipe or
 * tty, its own O_NONBLOCK.  Opened before the jail and the seccomp filters
 * (neither lets a thread open files later). */
#ifndef AIRLOCK_UTIL_NBFD_H
#define AIRLOCK_UTIL_NBFD_H

#include <stddef.h>

/* A non-blocking, close-on-exec, write-only twin of fd, or -ENOTSUP when
 * fd is not a pipe, FIFO or terminal (a regular file never stalls; a
 * socket cannot be reopened), or -errno. */
int nbfd_twin(int fd);

/* Writes one short message (an error line) through `fd` if it takes it
 * now, else drops it: said when airlock ends, it must not wait for a
 * stalled reader.  The whole message or nothing is not guaranteed. */
void nbfd_say(int fd, const char *msg, size_t len);

#endif
