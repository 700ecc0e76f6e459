/* How airlock-runtime reports errors: one line on stderr, and with
 * `--log FILE` the same appended there; with `--log-format json` each as a
 * JSON line {"level":"error","msg":...,"time":...}, which is what
 * containerd's shim and conmon read back (they show the last one). */
#ifndef AIRLOCK_RUNTIME_RUNTIME_LOG_H
#define AIRLOCK_RUNTIME_RUNTIME_LOG_H

#include <stdbool.h>

void runtime_log_setup(const char *path, bool json);

/* Reports msg (printf-style) as an error; returns 1, the exit status runc
 * gives its errors. */
int runtime_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A warning: the log only (a caller's stderr is often its output). */
void runtime_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
