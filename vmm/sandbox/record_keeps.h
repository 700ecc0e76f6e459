/* What a paused sandbox's record (vmm/sandbox/sandbox_record.h) keeps
 * beyond its shape, so a daemon started anew on the same state folder
 * gives it back: its published ports (as bound) and its background
 * commands' records (what re-attaching a running one needs).
 *
 * Pure codec, no threads, no registry: written from what the daemon has,
 * read from a file anyone with the state folder could have written, so
 * every member is checked (types, ranges, a bounded count, no member
 * this code does not write) and the first bad one is named. */
#ifndef AIRLOCK_SANDBOX_RECORD_KEEPS_H
#define AIRLOCK_SANDBOX_RECORD_KEEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "vmm/forward/forward.h"
#include "vmm/sandbox/background.h"

/* [{"guest_port", "host_ip", "host_port"}...]: the ports as bound. */
json_t *record_ports_json(const struct forward_info *ports, size_t n);

/* The record's "ports" (NULL: an older record without them: none) into
 * out[FORWARD_MAX_PORTS]: 0 with *n, or -1 with err naming the entry and
 * its member ("ports[2].host_port: 0 is not a port, want 1..65535"). */
int record_ports_parse(json_t *a, struct forward_spec *out, size_t *n, char *err, size_t cap);

/* One background command's record, as kept. */
struct bg_saved {
    char id[BG_ID_MAX];    /* decimal, as bg_start numbers them */
    json_t *info;          /* what GET .../commands/{cid} shows of the request
                            * (argv or cmd, env, cwd, tag, pty, started_ms, pid,
                            * output_lost); borrowed */
    json_t *exit;          /* its exit record, NULL while it ran; borrowed */
    uint64_t output_bytes; /* output seen so far: offsets go on from here */
    uint32_t pid;          /* its guest pid (the agent keeps it under it), 0:
                            * it had not started */
    bool tty;              /* on a terminal (resize) */
    bool stdin_open;       /* its stdin was still open for writes */
    uint32_t timeout_ms;   /* its own timeout (0: none) */
    uint64_t max_output;   /* its output cap, bytes */
    uint32_t buffer;       /* its replay buffer, bytes */
};

/* [{"id", "info", "exit", "output_bytes", "pid", "tty", "stdin_open",
 *   "timeout_ms", "max_output", "buffer"}...] */
json_t *record_commands_json(const struct bg_saved *cmds, size_t n);

/* The record's "commands" (NULL: none) into out[BG_MAX], info and exit
 * borrowed from `a`: 0 with *n, or -1 with err naming the entry. */
int record_commands_parse(json_t *a, struct bg_saved *out, size_t *n, char *err, size_t cap);

#endif
