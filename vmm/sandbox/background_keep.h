/* A sandbox's background commands across a daemon's restart: their
 * records written into its paused record (vmm/sandbox/record_keeps.h)
 * and listed again by the daemon that loads it.  A command that still
 * ran is re-attached (ATTACH, by its guest pid) once the sandbox resumes,
 * as after a pause within one daemon: its output goes on at the offset
 * it had.  The replay buffer was the old daemon's memory: a reader asking
 * for bytes before the restart is told they are gone ("skipped"), and
 * output the agent no longer had counts in output_lost. */
#ifndef AIRLOCK_SANDBOX_BACKGROUND_KEEP_H
#define AIRLOCK_SANDBOX_BACKGROUND_KEEP_H

#include <jansson.h>

#include "vmm/sandbox/record_keeps.h"

struct registry;
struct sandbox;

/* sb's command records as the record keeps them (record_commands_json). */
json_t *bg_save(struct registry *reg, struct sandbox *sb);

/* Lists the n saved records in sb (paused, its commands' table empty):
 * ended ones as they were, running ones waiting for its resume, and one
 * that had not started yet as ended (its exit says why).  0, or -ENOMEM
 * (those listed so far stay). */
int bg_restore(struct registry *reg, struct sandbox *sb, const struct bg_saved *s, size_t n);

#endif
