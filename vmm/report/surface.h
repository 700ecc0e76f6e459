/* `airlock surface`: the escape surface of the running build, read off the
 * real registrations.  The ranges come from machine_register_devices() on
 * a bus with no VM (the same call boot makes), the handler names from this
 * binary's symbol table, the virtio features from each device's transport
 * registers (read the way a guest reads them), the exit reasons from the
 * vCPU's exit table, and the reachable-code figure from a call graph GCC
 * wrote at build time (vmm/report/surface.mk). */
#ifndef AIRLOCK_REPORT_SURFACE_H
#define AIRLOCK_REPORT_SURFACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "devices/bus.h"
#include "vmm/jail/seccomp.h"

/* --- generated at build time ($(BUILD)/gen/surface_reach.c) --- */

struct surface_fn {
    const char *name, *file;
    int first, lines; /* body span; lines 0 when ctags found no span */
};

struct surface_reach {
    int lines, all_lines;   /* reachable / every function's lines */
    int unspanned;          /* reached functions with no span */
    int indirect_sites;     /* indirect calls in reached code (not followed) */
    const struct surface_fn *fns;
    int nfns, all_fns;
    const char *const *roots;
    int nroots;
    const char *const *missing; /* roots no call graph defines */
    int nmissing;
    const char *const *ext;     /* functions outside the monitor it calls */
    int next;
};

/* Weak: a binary linked without the generated file (the unit tests) sees
 * &surface_reach_data == NULL and reports "unknown". */
extern const struct surface_reach surface_reach_data __attribute__((weak));

/* --- the report --- */

#define SURFACE_MAX_RANGES (2 * BUS_MAX_RANGES)
#define SURFACE_MAX_DEVICES 8

struct surface_range {
    const char *set;     /* which device set: "boot" or "run" */
    enum bus_space space;
    uint64_t base, len;
    const char *device;  /* the bus range's name */
    const char *handler; /* its function, NULL when the binary has no symbols */
};

struct surface_device {
    const char *set, *name, *disk_kind; /* disk_kind: "raw", "ro", "cow" or NULL */
    uint32_t device_id;
    unsigned num_queues, queue_max;
    uint64_t features; /* as the guest reads DeviceFeatures */
    const char *cb[4]; /* features, config_read, queue_notify, reset (NULL: none) */
};

#define SURFACE_HOST_CBS 7 /* the callbacks device code makes into the monitor */

struct surface_report {
    struct surface_range ranges[SURFACE_MAX_RANGES];
    unsigned nranges;
    struct surface_device devices[SURFACE_MAX_DEVICES];
    unsigned ndevices;
    const char *host_cb[SURFACE_HOST_CBS]; /* interrupt, kick, queue notify,
                                            * vsock connect/watch/fd event/cap */
    bool symbols;           /* handler names were found */
    char strs[4096];        /* copies of every name above: the report outlives the devices */
    size_t strs_used;
};

extern const char *const surface_cb_names[4];
extern const char *const surface_host_cb_names[SURFACE_HOST_CBS];

/* Builds the device sets of `airlock boot` (defaults) and `airlock run`
 * on buses with no VM and fills r.  -errno with err explaining. */
int surface_collect(struct surface_report *r, char *err, size_t errlen);

/* The name of feature `bit` of virtio device `device_id`, or NULL. */
const char *surface_feature_name(uint32_t device_id, unsigned bit);

void surface_print_text(FILE *f, const struct surface_report *r);
void surface_print_json(FILE *f, const struct surface_report *r);

/* airlock surface [--json]: argv[0] is "surface". */
int cmd_surface(int argc, char **argv);

#endif
