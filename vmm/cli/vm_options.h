/* The flags that shape the VM and the monitor, shared by `airlock boot`,
 * `airlock run` and `airlock snapshot`: one table of names, one parser,
 * one error text per flag ("--mem 'lots': want ...").  Each command picks
 * which of them it takes (vm_longopts) and adds its own. */
#ifndef AIRLOCK_CLI_VM_OPTIONS_H
#define AIRLOCK_CLI_VM_OPTIONS_H

#include <getopt.h>
#include <stddef.h>

#include "vmm/cli/boot_options.h"

/* getopt codes of the shared flags (above any short option's). */
enum vm_opt {
    VMO_KERNEL = 0x100, VMO_INITRD, VMO_CMDLINE, VMO_MEM, VMO_CPUS, VMO_CONSOLE,
    VMO_CONSOLE_RATE, VMO_CONSOLE_MAX, VMO_ENTRY, VMO_KVM, VMO_ALLOW_PVM, VMO_DISK,
    VMO_VSOCK_UDS, VMO_CID, VMO_SECCOMP, VMO_TIMINGS,
    VMO_JAIL, /* .. VMO_JAIL + JAIL_NOPTS - 1: the jail's flags (vmm/jail/jail.h) */
    VMO_END = VMO_JAIL + JAIL_NOPTS,
};

/* Which commands take a flag. */
enum { VMO_FOR_BOOT = 1, VMO_FOR_RUN = 2 };

/* Fills out[] with the shared flags `command` (VMO_FOR_*) takes, then the
 * command's own `extra` (terminated by a zeroed entry), then the zeroed
 * end.  Returns how many were written, or -E2BIG past cap. */
int vm_longopts(unsigned command, const struct option *extra, struct option *out, size_t cap);

/* Applies one shared flag (VMO_KERNEL <= code < VMO_END) to o.  0, or
 * -EINVAL with err naming the flag and what it wants.  --disk fills
 * o->disks in order, at most LAYOUT_VIRTIO_SLOTS; the caller checks the
 * total against the devices it adds (vm_options_check_slots). */
int vm_option_set(struct boot_options *o, int code, const char *val, char *err, size_t errlen);

/* After parsing: the disks, `reserved` more disks of the command's own
 * (run's root image) and a vsock device when there is one must fit the
 * machine's virtio slots.  0 or -EINVAL with err. */
int vm_options_check_slots(const struct boot_options *o, unsigned reserved, char *err,
                           size_t errlen);

/* The name a getopt code stands for in `opts` ("--mem"; "-e" for a short
 * option), for messages about a flag given in the wrong place. */
void vm_option_name(const struct option *opts, int code, char *out, size_t cap);

#endif
