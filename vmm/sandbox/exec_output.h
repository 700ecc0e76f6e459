/* A command's output as the API gives it: chunks cut where UTF-8 allows,
 * each a JSON line, and the final exit record.  Shared by commands that
 * stream to their caller (exec_stream.h) and background commands that
 * are buffered for later (background.h).
 *   {"type":"stdout","data":"..."}      (or "data_b64" when not UTF-8)
 *   {"type":"stderr","data":"..."}
 *   {"type":"exit","exit_code":N,"signal":N|null,"timed_out":B,
 *    "output_truncated":B,"duration_ms":N,"error":null|"..."}
 * exit_code is what `airlock run` would exit with: the command's code,
 * 128+N for signal N, 124 on timeout, 127 not found, 126 cannot run. */
#ifndef AIRLOCK_SANDBOX_EXEC_OUTPUT_H
#define AIRLOCK_SANDBOX_EXEC_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "vmm/agent_client/agent_client.h"

#define EXEC_OUTPUT_CHUNK (64 * 1024)

/* One of a command's two output pipes, read in chunks that end on a
 * UTF-8 character boundary when the text allows: a sequence cut by the
 * read is held back for the next chunk. */
struct exec_output {
    int fd;           /* -1 once at EOF (then closed) */
    const char *type; /* "stdout" or "stderr" */
    char buf[EXEC_OUTPUT_CHUNK + 4];
    size_t held;      /* bytes of a cut sequence from the last read */
};

/* Called with each chunk (len >= 1). */
typedef void exec_output_sink(void *ctx, const struct exec_output *o, const char *p, size_t len);

/* Reads o->fd once and hands what is whole to sink.  false at EOF or on
 * an error (a held sequence then goes out as it is, and fd is closed). */
bool exec_output_pump(struct exec_output *o, exec_output_sink *sink, void *ctx);

/* {"type": type, "data": text} when the bytes are UTF-8, else
 * {"type": type, "data_b64": base64}. */
json_t *exec_output_line(const char *type, const char *p, size_t len);

/* The exit record: rc is agent_exec's (non-zero: the agent was lost, exit
 * code 125), res its result, ms the command's duration. */
json_t *exec_exit_record(int rc, const struct agent_exec_result *res, int64_t ms);

#endif
