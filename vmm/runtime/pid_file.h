/* The pid files create and exec write for their callers: the pid as bare
 * digits, written under a temporary name and renamed, so a caller polling
 * for it never reads part of one. */
#ifndef AIRLOCK_RUNTIME_PID_FILE_H
#define AIRLOCK_RUNTIME_PID_FILE_H

#include <sys/types.h>

/* 0 or -errno. */
int pid_file_write(const char *path, pid_t pid);

#endif
