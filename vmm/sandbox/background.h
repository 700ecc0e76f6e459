/* Background commands of a sandbox: started by one request, they run on
 * their own (a thread each, with its own agent connection) while other
 * requests read their output, write their stdin and signal them.
 *
 * Output goes into a bounded replay buffer per command: stdout and
 * stderr as one sequence of chunks, each at a byte offset (the count of
 * output bytes, both streams together, before it).  When the buffer is
 * full the oldest chunks go, so a command that floods output never
 * stalls and never costs the daemon more than its buffer; a reader that
 * asks for an offset already gone is told how many bytes it missed.
 *
 * A command record stays after the command ended (its output and exit
 * record readable) until it is removed, or evicted to make room for a new
 * one, or its sandbox goes. */
#ifndef AIRLOCK_SANDBOX_BACKGROUND_H
#define AIRLOCK_SANDBOX_BACKGROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/sandbox/api_http.h"
#include "vmm/sandbox/exec_stream.h"

struct registry;
struct sandbox;
struct bg_table;
struct bg_cmd;

#define BG_MAX            32          /* command records per sandbox */
#define BG_BUFFER_MIN     (64u << 10) /* one chunk always fits */
#define BG_BUFFER_DEFAULT (1u << 20)
#define BG_BUFFER_MAX     (16u << 20)
#define BG_BUFFER_BUDGET  (64u << 20) /* all of one sandbox's buffers */
#define BG_STDIN_WAIT_MS  30000       /* a write to a stdin nobody reads */

struct bg_spec {
    const struct agent_exec_req *req; /* copied: the caller may free it on return */
    const struct exec_input *in;      /* stdin's bytes without stdin_open (may be NULL) */
    bool stdin_open;     /* stdin stays open for bg_write_stdin; else it
                          * ends after `in` (or is /dev/null) */
    size_t buffer;       /* replay buffer bytes, BG_BUFFER_MIN..BG_BUFFER_MAX */
    uint64_t max_output; /* as agent_exec's */
    json_t *describe;    /* copied into the record's JSON (argv or cmd) */
};

/* Frees a sandbox's table once nothing uses the sandbox any more (no
 * command runs, nobody follows one). */
void bg_table_free(struct bg_table *t);

/* Starts a background command in sb (the caller holds a reference; the
 * command takes its own until it ended).  0 with *id set (the record's
 * id, BG_ID_MAX bytes), -ENOSPC when BG_MAX records run and none ended,
 * -ENOMEM when the buffer would pass BG_BUFFER_BUDGET, -errno when the
 * agent cannot be reached. */
#define BG_ID_MAX 16
int bg_start(struct registry *reg, struct sandbox *sb, const struct bg_spec *spec,
             char id[BG_ID_MAX]);

/* The record `id` of sb, with a reference (bg_put), or NULL. */
struct bg_cmd *bg_find(struct registry *reg, struct sandbox *sb, const char *id);
void bg_put(struct bg_cmd *cmd);
/* The record whose command has guest pid `pid`, with a reference, or NULL. */
struct bg_cmd *bg_find_pid(struct registry *reg, struct sandbox *sb, uint32_t pid);
/* Its guest pid, waiting at most wait_ms for the command to start: 0
 * when it never started (its exit record says why) or not in time. */
uint32_t bg_pid(struct bg_cmd *cmd, unsigned wait_ms);
/* Whether it still runs. */
bool bg_running(struct bg_cmd *cmd);

/* {"id", "pid" (once started), "argv"|"cmd", "env", "cwd", "tag", "pty", "started_ms", "running", "output_bytes",
 *  "buffer_start", "exit": exit record or null} */
json_t *bg_json(struct bg_cmd *cmd);
/* {"commands": [bg_json...]} of sb, oldest first. */
json_t *bg_list(struct registry *reg, struct sandbox *sb);

/* Answers with the output from byte `offset` as JSON lines
 * (exec_output.h, each with its "offset"; a {"type":"skipped",
 * "offset":N,"bytes":N} line first when part of it is gone), then the exit
 * record once the command ended.  follow: waits for more output until
 * the command ends or the client goes; else only what is there now. */
void bg_follow(struct api_conn *c, struct bg_cmd *cmd, uint64_t offset, bool follow);

/* What a follower does with a command's output (bg_follow_with), each
 * called without the table's lock; a false answer stops the following. */
struct bg_sink {
    /* `bytes` of output from `offset` on are gone from the buffer */
    bool (*skipped)(void *ctx, uint64_t offset, uint64_t bytes);
    /* a piece of stdout (or stderr: err) at byte `offset` */
    bool (*chunk)(void *ctx, bool err, const char *p, size_t n, uint64_t offset);
    /* the command ended and all its output was given: its exit record */
    void (*exit)(void *ctx, json_t *exit);
    /* about once a second while nothing comes (follow): go on waiting? */
    bool (*waiting)(void *ctx);
};

/* The output from byte `offset`, then the exit once the command ended,
 * into the sink; follow: waits for more until the command ends or the
 * sink says stop, else only what is there now. */
void bg_follow_with(struct bg_cmd *cmd, uint64_t offset, bool follow, const struct bg_sink *sink,
                    void *ctx);

/* Writes to the command's stdin (waiting at most BG_STDIN_WAIT_MS for
 * the command to read), then closes it when eof.  0; -EBADF when its
 * stdin is not open (not stdin_open, or closed already); -EPIPE when the
 * command no longer reads it (ended); -ETIMEDOUT with *written short. */
int bg_write_stdin(struct bg_cmd *cmd, const void *data, size_t len, bool eof, size_t *written);

/* Sends signal signo (1..64) to the command's process group: 0, or
 * -ESRCH when it ended. */
int bg_signal(struct bg_cmd *cmd, int signo);

/* Gives the command's terminal a new size: 0; -ENOTTY when it was not
 * started on one; -ESRCH when it ended; -EAGAIN when 64 KiB of signals
 * and sizes wait for the runner already. */
int bg_resize(struct bg_cmd *cmd, uint16_t rows, uint16_t cols);

/* Forgets the record (SIGKILL first when the command still runs). */
void bg_remove(struct bg_cmd *cmd);

#endif
