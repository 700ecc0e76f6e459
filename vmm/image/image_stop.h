/* A signal that ends an import, and the import's cleanup before it does.
 *
 * `airlock image import` catches SIGTERM, SIGINT and SIGHUP
 * (image_stop_catch): the handler only notes the signal and kills the
 * e2fsprogs child that is running (image_stop_child), since removing the
 * staging is no work for a signal handler.  The import sees the note
 * (image_stopped) between archive entries and when its child ends, fails
 * like any failed import (its staging goes), and the caller then dies of
 * the signal (image_stop_die).  A child is also killed by the kernel when
 * its parent dies (PR_SET_PDEATHSIG): a kill -9 leaves no mke2fs behind. */
#ifndef AIRLOCK_IMAGE_IMAGE_STOP_H
#define AIRLOCK_IMAGE_IMAGE_STOP_H

#include <sys/types.h>

/* Installs the handlers (SA_RESTART: a restarted call reaches the next
 * check). */
void image_stop_catch(void);
/* The signal that asked the import to stop, or 0. */
int image_stopped(void);
/* The child a signal kills (0: none); after setting it, the caller kills
 * it itself if image_stopped() already says so. */
void image_stop_child(pid_t pid);
/* If a caught signal asked to stop: its default action, now (the exit
 * status says the signal, as it would without the handler). */
void image_stop_die(void);

#endif
