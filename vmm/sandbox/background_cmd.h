/* Private to background.c and background_follow.c: a sandbox's table of
 * background commands and one command's record, its output buffer
 * included (the table's lock guards both). */
#ifndef AIRLOCK_SANDBOX_BACKGROUND_CMD_H
#define AIRLOCK_SANDBOX_BACKGROUND_CMD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/sandbox/background.h"

struct bg_chunk {
    struct bg_chunk *next;
    uint64_t offset;
    uint32_t len;
    bool err; /* stderr, else stdout */
    char data[];
};

struct bg_table {
    pthread_mutex_t lock; /* the records, and every record's output */
    pthread_cond_t more;  /* output came, or a command ended */
    struct bg_cmd *cmds[BG_MAX]; /* listed records, oldest first */
    unsigned seq;
    uint64_t buffered;    /* buffer sizes of records not yet freed */
};

struct bg_cmd {
    struct bg_table *t;
    unsigned refs;        /* the listing, the runner, each reader */
    bool listed;
    char id[BG_ID_MAX];
    json_t *info;
    int64_t t0;
    /* The request, owned: the runner sends it after bg_start returned. */
    struct agent_exec_req req;
    char **strs;          /* argv, then env, then cwd */
    size_t nstrs;
    int agent, in_fd, sig_r, sig_w;
    uint64_t max_output;
    pthread_mutex_t stdin_lock;
    int stdin_w;          /* our end of its stdin (stdin_open), -1 closed */
    /* output, under t->lock */
    size_t cap, kept;
    uint64_t total, start;
    struct bg_chunk *head, *tail;
    bool done;
    uint32_t pid;         /* its guest pid once it started, else 0 */
    json_t *exit;
    struct registry *reg;
    struct sandbox *sb;
    /* Restored from a paused sandbox's record by a daemon started anew
     * (background_keep.c): the runner does not EXEC but ATTACHes, with
     * `kept` as the earlier conversations left it, once the sandbox's
     * VM generation is past `gen`. */
    bool restored;
    unsigned gen;
    struct agent_exec_result res0;
};

/* Shared by background.c and background_keep.c. */
/* sb's table (made when `make`), or NULL. */
struct bg_table *bg_table_of(struct registry *reg, struct sandbox *sb, bool make);
/* A record not yet listed: its fds -1, its buffer of `buffer` bytes
 * (not yet counted in t->buffered); NULL without memory. */
struct bg_cmd *bg_cmd_new(struct bg_table *t, struct registry *reg, struct sandbox *sb,
                          size_t buffer, uint64_t max_output);
/* Under t->lock: a record that was never listed goes, its fds closed. */
void bg_cmd_discard(struct bg_cmd *cmd);
/* cmd's stdin a pipe that bg_write_stdin writes (stdin_w, non-blocking)
 * and the runner reads (in_fd): 0 or -errno. */
int bg_stdin_pipe(struct bg_cmd *cmd);
/* cmd->req's host-side hooks (its pid, its re-attach) and AGENT_EXEC_F_KEEP. */
void bg_req_hooks(struct bg_cmd *cmd);
/* Under t->lock, with a free slot and cmd's id and info set: lists cmd
 * and, when `run`, starts its runner (which takes a reference to the
 * sandbox).  false when the runner could not start: the record ended,
 * and the caller drops that reference once t->lock is released. */
bool bg_launch(struct bg_cmd *cmd, bool run);

#endif
