#include "vmm/cli/vm_options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "boot/loader.h"
#include "vmm/jail/seccomp.h"
#include "vmm/kvm/console.h"
#include "vmm/memory/layout.h"
#include "vmm/util/parse.h"
#include "vmm/util/timings.h"

static const struct {
    struct option opt;
    unsigned commands;
} shared[] = {
    {{"kernel", required_argument, NULL, VMO_KERNEL}, VMO_FOR_BOOT | VMO_FOR_RUN},
    {{"initrd", required_argument, NULL, VMO_INITRD}, VMO_FOR_BOOT},
    {{"cmdline", required_argument, NULL, VMO_CMDLINE}, VMO_FOR_BOOT},
    {{"mem", required_argument, NULL, VMO_MEM}, VMO_FOR_BOOT | VMO_FOR_RUN},
    {{"cpus", required_argument, NULL, VMO_CPUS}, VMO_FOR_BOOT | VMO_FOR_RUN},
    {{"console", required_argument, NULL, VMO_CONSOLE}, VMO_FOR_BOOT | VMO_FOR_RUN},
    {{"console-rate", required_argument, NULL, VMO_CONSOLE_RATE}, VMO_FOR_BOOT | VMO_FOR_RUN},
    {{"console-max", required_argument, NULL, VMO_CONSOLE_MAX}, VMO_FOR_BOOT | VMO_FOR_RUN},
    {{"entry", required_argument, NULL, VMO_ENTRY}, VMO_FOR_BOOT},
    {{"kvm", required_argument, NULL, VMO_KVM}, VMO_FOR_BOOT},
    {{"allow-pvm", no_argument, NULL, VMO_ALLOW_PVM}, VMO_FOR_BOOT},
    {{"disk", required_argument, NULL, VMO_DISK}, VMO_FOR_BOOT | VMO_FOR_RUN},
    {{"vsock-uds", required_argument, NULL, VMO_VSOCK_UDS}, VMO_FOR_BOOT | VMO_FOR_RUN},
    {{"cid", required_argument, NULL, VMO_CID}, VMO_FOR_BOOT},
    {{"seccomp", required_argument, NULL, VMO_SECCOMP}, VMO_FOR_BOOT | VMO_FOR_RUN},
    {{"timings", optional_argument, NULL, VMO_TIMINGS}, VMO_FOR_BOOT | VMO_FOR_RUN},
};

int vm_longopts(unsigned command, const struct option *extra, struct option *out, size_t cap)
{
    static const struct option jail[] = {JAIL_LONGOPTS(VMO_JAIL)};
    size_t n = 0;
    for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++) {
        if (!(shared[i].commands & command))
            continue;
        if (n + 1 >= cap)
            return -E2BIG;
        out[n++] = shared[i].opt;
    }
    for (size_t i = 0; i < sizeof(jail) / sizeof(jail[0]); i++) {
        if (n + 1 >= cap)
            return -E2BIG;
        out[n++] = jail[i];
    }
    for (; extra && extra->name; extra++) {
        if (n + 1 >= cap)
            return -E2BIG;
        out[n++] = *extra;
    }
    out[n] = (struct option){0};
    return (int)n;
}

static int parse_entry(const char *s, enum kernel_entry *out)
{
    if (!strcmp(s, "auto"))
        *out = ENTRY_AUTO;
    else if (!strcmp(s, "pvh"))
        *out = ENTRY_PVH;
    else if (!strcmp(s, "linux64"))
        *out = ENTRY_LINUX64;
    else
        return -EINVAL;
    return 0;
}

/* "--cpus '0': want a whole number from 1 to 254". */
static int want(char *err, size_t errlen, const char *flag, const char *val, const char *what)
{
    snprintf(err, errlen, "%s '%.64s': want %s", flag, val, what);
    return -EINVAL;
}

/* A whole number in [min, max] into *out, or the flag's one error line. */
static int number(const char *flag, const char *val, uint64_t min, uint64_t max,
                  const char *unit, uint64_t *out, char *err, size_t errlen)
{
    uint64_t v;
    if (parse_uint(val, max, &v) || v < min) {
        char what[96];
        snprintf(what, sizeof(what), "a whole number %sfrom %llu to %llu", unit,
                 (unsigned long long)min, (unsigned long long)max);
        return want(err, errlen, flag, val, what);
    }
    *out = v;
    return 0;
}

int vm_option_set(struct boot_options *o, int code, const char *val, char *err, size_t errlen)
{
    uint64_t v;
    if (code >= VMO_JAIL && code < VMO_END)
        return jail_parse_flag(&o->jail, code - VMO_JAIL, val, err, errlen) ? -EINVAL : 0;
    switch (code) {
    case VMO_KERNEL: o->kernel = val; return 0;
    case VMO_INITRD: o->initrd = val; return 0;
    case VMO_CMDLINE: o->cmdline = val; return 0;
    case VMO_CONSOLE: o->console = val; return 0;
    case VMO_KVM: o->kvm_path = val; return 0;
    case VMO_ALLOW_PVM: o->allow_pvm = true; return 0;
    case VMO_VSOCK_UDS: o->vsock_uds = val; return 0;
    case VMO_CONSOLE_RATE:
    case VMO_CONSOLE_MAX: {
        bool rate = code == VMO_CONSOLE_RATE;
        return console_parse_limit(rate ? "--console-rate" : "--console-max", val,
                                   rate ? &o->console_rate_kib : &o->console_max_mib, err,
                                   errlen) ? -EINVAL : 0;
    }
    case VMO_MEM:
        if (number("--mem", val, LAYOUT_MEM_MIN_MIB, LAYOUT_MEM_MAX_MIB, "of MiB ", &v, err,
                   errlen))
            return -EINVAL;
        o->mem_mib = v;
        return 0;
    case VMO_CPUS:
        if (number("--cpus", val, 1, MPTABLE_MAX_CPUS, "", &v, err, errlen))
            return -EINVAL;
        o->cpus = (unsigned)v;
        return 0;
    case VMO_CID:
        if (number("--cid", val, VSOCK_HOST_CID + 1, 0xfffffffeULL, "", &v, err, errlen))
            return -EINVAL;
        o->cid = v;
        return 0;
    case VMO_DISK:
        if (o->ndisks == LAYOUT_VIRTIO_SLOTS) {
            snprintf(err, errlen, "--disk %s: at most %d disks", val, LAYOUT_VIRTIO_SLOTS);
            return -EINVAL;
        }
        o->disks[o->ndisks++] = val;
        return 0;
    case VMO_ENTRY:
        return parse_entry(val, &o->entry) ? want(err, errlen, "--entry", val,
                                                  "auto, pvh or linux64") : 0;
    case VMO_SECCOMP: {
        enum seccomp_mode m;
        if (seccomp_parse_mode(val, &m))
            return want(err, errlen, "--seccomp", val, "kill, trap or off");
        seccomp_set_mode(m);
        return 0;
    }
    case VMO_TIMINGS: {
        enum timings_format f;
        if (timings_parse(val, &f))
            return want(err, errlen, "--timings", val, "--timings or --timings=json");
        timings_enable(f);
        return 0;
    }
    }
    snprintf(err, errlen, "internal error: option code %d is not a VM option", code);
    return -EINVAL;
}

int vm_options_check_slots(const struct boot_options *o, unsigned reserved, char *err,
                           size_t errlen)
{
    bool vsock = o->vsock_uds || o->vsock_internal;
    if (o->ndisks + reserved + o->spare_disks + (vsock ? 1 : 0) <= LAYOUT_VIRTIO_SLOTS)
        return 0;
    snprintf(err, errlen, "%s: at most %d virtio devices in all (%u disks%s%s given)",
             vsock ? "--disk and the vsock device" : "--disk", LAYOUT_VIRTIO_SLOTS,
             o->ndisks + reserved, reserved ? " with the root image" : "",
             vsock ? " and a vsock device" : "");
    return -EINVAL;
}

void vm_option_name(const struct option *opts, int code, char *out, size_t cap)
{
    if (code > 0 && code < 0x80) {
        snprintf(out, cap, "-%c", code);
        return;
    }
    snprintf(out, cap, "an option");
    for (const struct option *lo = opts; lo->name; lo++)
        if (lo->val == code)
            snprintf(out, cap, "--%s", lo->name);
}
