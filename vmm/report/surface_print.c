/* `airlock surface`: the report as text for people and JSON for tools. */
#include <inttypes.h>
#include <linux/kvm.h>
#include <string.h>

#include "devices/virtio/blk.h"
#include "devices/virtio/virtio.h"
#include "vmm/report/surface.h"
#include "vmm/kvm/vcpu_exits.h"
#include "vmm/util/version.h"


#define METHOD                                                                                   \
    "GCC -fcallgraph-info call graphs of every monitor source (built at -O0, nothing inlined), " \
    "walked from the guest entry points (roots) along direct calls; each reached function "      \
    "counts its body's lines (Universal Ctags spans). Indirect calls are not followed: every "   \
    "callback handed out on a guest path is itself a root"

struct feature_name {
    uint32_t device_id; /* 0: any device */
    unsigned bit;
    const char *name;
};

#define F(dev, bit) {dev, bit, #bit}
static const struct feature_name feature_names[] = {
    F(VIRTIO_ID_BLOCK, VIRTIO_BLK_F_SIZE_MAX), F(VIRTIO_ID_BLOCK, VIRTIO_BLK_F_SEG_MAX),
    F(VIRTIO_ID_BLOCK, VIRTIO_BLK_F_RO),       F(VIRTIO_ID_BLOCK, VIRTIO_BLK_F_BLK_SIZE),
    F(VIRTIO_ID_BLOCK, VIRTIO_BLK_F_FLUSH),    F(VIRTIO_ID_BLOCK, VIRTIO_BLK_F_TOPOLOGY),
    F(VIRTIO_ID_BLOCK, VIRTIO_BLK_F_DISCARD),  F(VIRTIO_ID_BLOCK, VIRTIO_BLK_F_WRITE_ZEROES),
    {VIRTIO_ID_VSOCK, 0, "VIRTIO_VSOCK_F_SEQPACKET"}, /* §5.10.3; no macro: never offered */
    F(0, VIRTIO_F_INDIRECT_DESC), F(0, VIRTIO_F_EVENT_IDX), F(0, VIRTIO_F_VERSION_1),
};
#undef F

const char *surface_feature_name(uint32_t device_id, unsigned bit)
{
    for (size_t i = 0; i < sizeof(feature_names) / sizeof(feature_names[0]); i++)
        if (feature_names[i].bit == bit &&
            (feature_names[i].device_id == device_id || feature_names[i].device_id == 0))
            return feature_names[i].name;
    return NULL;
}

static const char *or(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

static const struct surface_reach *reach(void)
{
    return &surface_reach_data; /* NULL when the generated file is not linked */
}

static unsigned exits(const struct vcpu_exit **out, unsigned max)
{
    unsigned n = vcpu_exit_list(out, max);
    return n < max ? n : max;
}

/* ---- text ---- */

void surface_print_text(FILE *f, const struct surface_report *r)
{
    fprintf(f, "airlock %s: escape surface\n\n", AIRLOCK_VERSION);
    fprintf(f, "I/O ranges the guest can reach (vmm/kvm/machine.c machine_register_devices, read back"
               " off the bus):\n  %-6s %-5s %-23s %-22s %s\n", "set", "space", "range", "device",
            "handler");
    for (unsigned i = 0; i < r->nranges; i++) {
        const struct surface_range *x = &r->ranges[i];
        char range[40];
        if (x->len == 1)
            snprintf(range, sizeof(range), "%#" PRIx64, x->base);
        else
            snprintf(range, sizeof(range), "%#" PRIx64 "-%#" PRIx64, x->base, x->base + x->len - 1);
        fprintf(f, "  %-6s %-5s %-23s %-22s %s\n", x->set, x->space == BUS_PIO ? "PIO" : "MMIO",
                range, x->device, or(x->handler, "unknown (no symbols)"));
    }
    fprintf(f, "  anything else is unclaimed: reads see all-ones, writes are dropped.\n"
               "  boot: one more virtio slot per --disk, and one for --vsock-uds; run: one per"
               " --disk after the root image.\n\n");

    fprintf(f, "virtio features offered (DeviceFeatures, as the guest reads it):\n");
    for (unsigned i = 0; i < r->ndevices; i++) {
        const struct surface_device *d = &r->devices[i];
        fprintf(f, "  %s %s%s%s%s: device id %u, %u queue(s) of %u\n   ", d->set, d->name,
                d->disk_kind ? " (" : "", d->disk_kind ? d->disk_kind : "",
                d->disk_kind ? " disk)" : "", d->device_id, d->num_queues, d->queue_max);
        for (unsigned b = 0; b < 64; b++)
            if ((d->features >> b) & 1)
                fprintf(f, " %u %s", b, or(surface_feature_name(d->device_id, b), "(unnamed)"));
        fprintf(f, "\n    callbacks:");
        for (unsigned k = 0; k < 4; k++)
            fprintf(f, " %s=%s", surface_cb_names[k], or(d->cb[k], "none"));
        fprintf(f, "\n");
    }
    fprintf(f, "  monitor callbacks on guest paths:");
    for (unsigned k = 0; k < SURFACE_HOST_CBS; k++)
        fprintf(f, "%s %s=%s", k == 3 ? "\n   " : "", surface_host_cb_names[k],
                or(r->host_cb[k], "unknown"));
    fprintf(f, "\n\n");

    const struct vcpu_exit *ex[64];
    unsigned n = exits(ex, 64);
    fprintf(f, "KVM exits handled (vmm/kvm/vcpu_exits.c; any other reason stops the VM):\n");
    for (unsigned i = 0; i < n; i++)
        fprintf(f, "  %-24s %-20s %s\n", ex[i]->name, ex[i]->handler, ex[i]->what);
    fprintf(f, "hypercalls: %s\n\n",
            vcpu_exit_find(KVM_EXIT_HYPERCALL) ? "KVM_EXIT_HYPERCALL handled (see above)"
                                               : "none (KVM_EXIT_HYPERCALL stops the VM)");

    const struct seccomp_list *sl = seccomp_lists();
    for (unsigned i = 0; i < SECCOMP_KINDS; i++) {
        fprintf(f, "seccomp allowlist %s: %u syscalls\n", sl[i].thread, sl[i].ncalls);
        for (unsigned j = 0; j < sl[i].ncalls; j++)
            fprintf(f, "  %-20s %s\n", sl[i].calls[j].name, sl[i].calls[j].reason);
    }
    fprintf(f, "\n");

    const struct surface_reach *g = reach();
    if (!g) {
        fprintf(f, "reachable C: unknown (this binary was built without the call graph)\n");
        return;
    }
    fprintf(f, "reachable C: %d lines in %d functions (of %d lines in %d functions)\n", g->lines,
            g->nfns, g->all_lines, g->all_fns);
    fprintf(f, "  method: %s.\n  %d indirect call sites in reached code; %d reached functions"
               " without a span; roots (%d):", METHOD, g->indirect_sites, g->unspanned, g->nroots);
    for (int i = 0; i < g->nroots; i++)
        fprintf(f, " %s", g->roots[i]);
    fprintf(f, "\n");
    if (g->nmissing) {
        fprintf(f, "  MISSING roots (in no call graph, so not counted):");
        for (int i = 0; i < g->nmissing; i++)
            fprintf(f, " %s", g->missing[i]);
        fprintf(f, "\n");
    }
    fprintf(f, "  calls out of the monitor:");
    for (int i = 0; i < g->next; i++)
        fprintf(f, " %s", g->ext[i]);
    fprintf(f, "\n  (every reached function: airlock surface --json)\n");
}

/* ---- JSON ---- */

static void jstr(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void jstrs(FILE *f, const char *const *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        fputs(i ? ", " : "", f);
        jstr(f, v[i]);
    }
    fputc(']', f);
}

static void json_devices(FILE *f, const struct surface_report *r)
{
    fputs(",\n \"devices\": [", f);
    for (unsigned i = 0; i < r->ndevices; i++) {
        const struct surface_device *d = &r->devices[i];
        fprintf(f, "%s\n  {\"set\": ", i ? "," : "");
        jstr(f, d->set);
        fputs(", \"name\": ", f);
        jstr(f, d->name);
        fputs(", \"disk_kind\": ", f);
        jstr(f, d->disk_kind);
        fprintf(f, ", \"device_id\": %u, \"queues\": %u, \"queue_max\": %u, \"features\": [",
                d->device_id, d->num_queues, d->queue_max);
        for (unsigned b = 0, k = 0; b < 64; b++) {
            if (!((d->features >> b) & 1))
                continue;
            fprintf(f, "%s{\"bit\": %u, \"name\": ", k++ ? ", " : "", b);
            jstr(f, surface_feature_name(d->device_id, b));
            fputc('}', f);
        }
        fputs("], \"callbacks\": {", f);
        for (unsigned k = 0; k < 4; k++) {
            fprintf(f, "%s\"%s\": ", k ? ", " : "", surface_cb_names[k]);
            jstr(f, d->cb[k]);
        }
        fputs("}}", f);
    }
    fputs("],\n \"monitor_callbacks\": {", f);
    for (unsigned k = 0; k < SURFACE_HOST_CBS; k++) {
        fprintf(f, "%s\"%s\": ", k ? ", " : "", surface_host_cb_names[k]);
        jstr(f, r->host_cb[k]);
    }
    fputc('}', f);
}

static void json_rest(FILE *f)
{
    const struct vcpu_exit *ex[64];
    unsigned n = exits(ex, 64);
    fputs(",\n \"exits\": [", f);
    for (unsigned i = 0; i < n; i++) {
        fprintf(f, "%s\n  {\"reason\": %u, \"name\": ", i ? "," : "", ex[i]->reason);
        jstr(f, ex[i]->name);
        fputs(", \"handler\": ", f);
        jstr(f, ex[i]->handler);
        fputs(", \"what\": ", f);
        jstr(f, ex[i]->what);
        fputc('}', f);
    }
    fprintf(f, "],\n \"hypercalls\": [%s]", vcpu_exit_find(KVM_EXIT_HYPERCALL) ? "\"KVM_EXIT_HYPERCALL\"" : "");
    const struct seccomp_list *sl = seccomp_lists();
    fprintf(f, ",\n \"seccomp\": {\"allowlists\": [");
    for (unsigned i = 0; i < SECCOMP_KINDS; i++) {
        fprintf(f, "%s\n  {\"thread\": ", i ? "," : "");
        jstr(f, sl[i].thread);
        fputs(", \"syscalls\": [", f);
        for (unsigned j = 0; j < sl[i].ncalls; j++) {
            fputs(j ? ", {\"name\": " : "{\"name\": ", f);
            jstr(f, sl[i].calls[j].name);
            fputs(", \"reason\": ", f);
            jstr(f, sl[i].calls[j].reason);
            fputc('}', f);
        }
        fputs("]}", f);
    }
    fputs("]}", f);
    const struct surface_reach *g = reach();
    if (!g) {
        fputs(",\n \"reachable\": \"unknown\"\n}\n", f);
        return;
    }
    fprintf(f, ",\n \"reachable\": {\"lines\": %d, \"functions\": %d, \"all_lines\": %d, "
               "\"all_functions\": %d, \"indirect_sites\": %d, \"unspanned\": %d, \"method\": ",
            g->lines, g->nfns, g->all_lines, g->all_fns, g->indirect_sites, g->unspanned);
    jstr(f, METHOD);
    fputs(",\n  \"roots\": ", f);
    jstrs(f, g->roots, g->nroots);
    fputs(",\n  \"missing_roots\": ", f);
    jstrs(f, g->missing, g->nmissing);
    fputs(",\n  \"external_calls\": ", f);
    jstrs(f, g->ext, g->next);
    fputs(",\n  \"reached\": [", f);
    for (int i = 0; i < g->nfns; i++) {
        fprintf(f, "%s\n   {\"name\": ", i ? "," : "");
        jstr(f, g->fns[i].name);
        fputs(", \"file\": ", f);
        jstr(f, g->fns[i].file);
        fprintf(f, ", \"first\": %d, \"lines\": %d}", g->fns[i].first, g->fns[i].lines);
    }
    fputs("]}\n}\n", f);
}

void surface_print_json(FILE *f, const struct surface_report *r)
{
    fputs("{\"airlock\": ", f);
    jstr(f, AIRLOCK_VERSION);
    fprintf(f, ", \"symbols\": %s,\n \"ranges\": [", r->symbols ? "true" : "false");
    for (unsigned i = 0; i < r->nranges; i++) {
        const struct surface_range *x = &r->ranges[i];
        fprintf(f, "%s\n  {\"set\": ", i ? "," : "");
        jstr(f, x->set);
        fprintf(f, ", \"space\": \"%s\", \"base\": %" PRIu64 ", \"len\": %" PRIu64
                   ", \"range\": \"%#" PRIx64 "-%#" PRIx64 "\", \"device\": ",
                x->space == BUS_PIO ? "pio" : "mmio", x->base, x->len, x->base,
                x->base + x->len - 1);
        jstr(f, x->device);
        fputs(", \"handler\": ", f);
        jstr(f, x->handler);
        fputc('}', f);
    }
    fputc(']', f);
    json_devices(f, r);
    json_rest(f);
}
