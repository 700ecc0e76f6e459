/* One command in a sandbox, its output streamed to the API client as JSON
 * lines as it comes (vmm/sandbox/exec_output.h), the exit record last. */
#ifndef AIRLOCK_SANDBOX_EXEC_STREAM_H
#define AIRLOCK_SANDBOX_EXEC_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/sandbox/api_http.h"
#include "vmm/sandbox/exec_output.h"

struct exec_input {
    const char *data; /* stdin bytes (NULL: none; the command reads EOF) */
    size_t len;
};

/* A memfd holding in's bytes, at offset 0: -1 when in has none, else
 * the fd or -errno. */
int exec_input_fd(const struct exec_input *in);

/* Runs req on a new agent connection through `sock` and streams it to c.
 * The answer is always 200 once the command could be asked for: a
 * command that fails is data.  A client that goes away, seen by a failed
 * write or by its hang-up (a command may print nothing), ends the command:
 * its agent connection closes, the agent kills its process group, and the
 * outcome is output_closed.
 * Returns 0 with *done filled, or -errno when the agent could not be
 * reached (nothing was sent to c then). */
/* What came of it, for the audit records. */
struct exec_outcome {
    int rc;                      /* agent_exec's */
    struct agent_exec_result res;
    int64_t ms;
};
int exec_stream_run(struct api_conn *c, const char *sock, const struct agent_exec_req *req,
                    const struct exec_input *in, uint64_t max_output, struct exec_outcome *done);

#endif
