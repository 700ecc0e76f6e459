/* airlock-runtime's verbs, each `int cmd(const struct runtime_globals *g,
 * int argc, char **argv)` with argv[0] the verb, returning the exit
 * status: 0, 1 for a failure (runc's status), 125 for a bad command line
 * (airlock's), or a process's status for `exec` in the foreground. */
#ifndef AIRLOCK_RUNTIME_RUNTIME_CMDS_H
#define AIRLOCK_RUNTIME_RUNTIME_CMDS_H

#include <stdbool.h>

struct runtime_globals {
    const char *root;    /* --root: containers' folders */
    bool systemd_cgroup; /* --systemd-cgroup: cgroupsPath is slice:prefix:name */
};

int runtime_create(const struct runtime_globals *g, int argc, char **argv);
int runtime_start(const struct runtime_globals *g, int argc, char **argv);
int runtime_state(const struct runtime_globals *g, int argc, char **argv);
int runtime_kill(const struct runtime_globals *g, int argc, char **argv);
int runtime_delete(const struct runtime_globals *g, int argc, char **argv);
int runtime_exec(const struct runtime_globals *g, int argc, char **argv);
int runtime_ps(const struct runtime_globals *g, int argc, char **argv);
int runtime_pause(const struct runtime_globals *g, int argc, char **argv);
int runtime_list(const struct runtime_globals *g, int argc, char **argv);
int runtime_update(const struct runtime_globals *g, int argc, char **argv);
int runtime_features(const struct runtime_globals *g, int argc, char **argv);

/* A bad command line: the one-line error, status 125. */
int runtime_usage_error(const char *verb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
