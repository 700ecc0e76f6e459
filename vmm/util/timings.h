/* --timings: when each phase of an airlock process ended, on the monotonic
 * clock, with the VM exits taken in it.  Marks are recorded from any
 * thread (the vCPU thread records the guest's boot-timer marks); the
 * first mark of each kind wins, so a guest writing the boot timer again
 * cannot move one. */
#ifndef AIRLOCK_UTIL_TIMINGS_H
#define AIRLOCK_UTIL_TIMINGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* In the order they happen; a phase runs from the previous recorded mark
 * to its own. */
enum timing_mark {
    TM_START,        /* main() entered (the clock's zero) */
    TM_ARGS,         /* options parsed, files named by them opened */
    TM_FILES,        /* disks opened, the kernel mapped and its headers checked */
    TM_MEMORY,       /* guest RAM reserved (pages come when first touched) */
    TM_KERNEL,       /* kernel and initrd copied in, boot structures written */
    TM_KVM,          /* /dev/kvm opened and its limits checked */
    TM_VM,           /* the VM (irqchip, PIT, memory slot) and its vCPUs exist */
    TM_DEVICES,      /* devices registered on the bus, irqfds wired */
    TM_RESTORE,      /* --from-snapshot: vCPU, irqchip, device and disk state loaded */
    TM_JAIL,         /* jail entered (a no-op when not jailed) */
    TM_VCPU_START,   /* event loop set up, vCPU threads started */
    TM_USERSPACE,    /* the guest agent's first instructions (boot timer) */
    TM_AGENT_READY,  /* the agent listens on vsock (boot timer) */
    TM_CONNECTED,    /* airlock's connection to the agent is up (copy-ins done) */
    TM_COMMAND_DONE, /* the command's status arrived, its output all written */
    TM_STATUS,       /* copy-outs done, vCPUs joined: airlock's exit status is known */
    TM_TEARDOWN,     /* VM, devices and guest RAM released */
    TM_COUNT
};

enum timings_format { TIMINGS_OFF, TIMINGS_TEXT, TIMINGS_JSON };

/* The flag's line in `boot --help` and `run --help`. */
#define TIMINGS_USAGE                                                                    \
    "  --timings[=json]  print when each phase ended and its VM exits on stderr at the\n" \
    "                    end (airlock then exits after teardown, to time it too)\n"

/* --timings / --timings=json; returns -1 for any other value. */
int timings_parse(const char *optarg_or_null, enum timings_format *out);

void timings_enable(enum timings_format f);
bool timings_enabled(void);

/* Records `m` now unless it was recorded before; true if this call did. */
bool timings_mark(enum timing_mark m);

/* What an exit was, for the report's totals by kind. */
enum timing_exit { TX_SERIAL, TX_PIO, TX_MMIO, TX_OTHER, TX_KINDS };

/* One VM exit (called by every vCPU thread, so it must stay cheap). */
void timings_count_exit(enum timing_exit kind);

/* The monitor's peak RSS and the guest RAM resident in it (KiB), for the
 * report's memory line (vmm/report/memstat.h). */
void timings_set_memory(uint64_t peak_kib, uint64_t guest_kib, uint64_t private_kib);

/* The report (table or one JSON object), one per process, at the end. */
void timings_print(FILE *f);

#endif
