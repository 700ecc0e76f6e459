#include "vmm/util/timings.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

static const char *const names[TM_COUNT] = {
    [TM_START] = "start",           [TM_ARGS] = "args",
    [TM_FILES] = "files",           [TM_MEMORY] = "memory",
    [TM_KERNEL] = "kernel_load",    [TM_KVM] = "kvm_open",
    [TM_VM] = "vm_create",          [TM_DEVICES] = "devices",
    [TM_RESTORE] = "restore",       [TM_JAIL] = "jail",             [TM_VCPU_START] = "vcpu_start",
    [TM_USERSPACE] = "guest_kernel", [TM_AGENT_READY] = "agent_ready",
    [TM_CONNECTED] = "connect",     [TM_COMMAND_DONE] = "command",
    [TM_STATUS] = "status",         [TM_TEARDOWN] = "teardown",
};

static enum timings_format format;
static _Atomic uint64_t at_ns[TM_COUNT];     /* 0: not recorded */
static _Atomic uint64_t exits_at[TM_COUNT];  /* the exit count when recorded */
static atomic_uint_fast64_t exits;
static atomic_uint_fast64_t exits_by[TX_KINDS];
static const char *const exit_names[TX_KINDS] = {"serial", "pio", "mmio", "other"};
static uint64_t rss_peak_kib, rss_guest_kib, private_own_kib; /* 0: not measured */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int timings_parse(const char *arg, enum timings_format *out)
{
    if (!arg || !strcmp(arg, "text"))
        *out = TIMINGS_TEXT;
    else if (!strcmp(arg, "json"))
        *out = TIMINGS_JSON;
    else
        return -1;
    return 0;
}

void timings_enable(enum timings_format f)
{
    format = f;
}

bool timings_enabled(void)
{
    return format != TIMINGS_OFF;
}

bool timings_mark(enum timing_mark m)
{
    uint64_t zero = 0, t = now_ns();
    uint64_t n = atomic_load_explicit(&exits, memory_order_relaxed);
    if (m >= TM_COUNT || !atomic_compare_exchange_strong(&at_ns[m], &zero, t))
        return false;
    atomic_store(&exits_at[m], n);
    return true;
}

void timings_count_exit(enum timing_exit kind)
{
    atomic_fetch_add_explicit(&exits, 1, memory_order_relaxed);
    if (kind < TX_KINDS)
        atomic_fetch_add_explicit(&exits_by[kind], 1, memory_order_relaxed);
}

void timings_set_memory(uint64_t peak_kib, uint64_t guest_kib, uint64_t private_kib)
{
    rss_peak_kib = peak_kib;
    rss_guest_kib = guest_kib;
    private_own_kib = private_kib;
}

/* Peak RSS minus guest RAM touched: what the monitor itself costs. */
static uint64_t overhead_kib(void)
{
    return rss_peak_kib > rss_guest_kib ? rss_peak_kib - rss_guest_kib : 0;
}

void timings_print(FILE *f)
{
    uint64_t t0 = atomic_load(&at_ns[TM_START]);
    uint64_t prev_t = t0, prev_x = 0;
    bool json = format == TIMINGS_JSON;
    if (json)
        fprintf(f, "{\"airlock_timings\":1,\"unit\":\"ms\",\"phases\":[");
    else
        fprintf(f, "airlock timings (ms; monotonic clock from main(); a phase ends at its mark):\n"
                   "  %-14s %10s %10s %8s\n", "phase", "at", "took", "exits");
    bool first = true;
    for (unsigned m = TM_START + 1; m < TM_COUNT; m++) {
        uint64_t t = atomic_load(&at_ns[m]);
        if (!t)
            continue; /* not reached, or not this kind of run: no row */
        uint64_t x = atomic_load(&exits_at[m]);
        /* Marks from different threads can land out of phase order (our
         * dial can succeed between the agent's listen() and its "ready"
         * mark): such a phase took 0 and the next starts at the later. */
        if (t < prev_t)
            t = prev_t;
        if (x < prev_x)
            x = prev_x;
        double at = (double)(t - t0) / 1e6, took = (double)(t - prev_t) / 1e6;
        if (json)
            fprintf(f, "%s{\"name\":\"%s\",\"at\":%.3f,\"took\":%.3f,\"exits\":%llu}",
                    first ? "" : ",", names[m], at, took, (unsigned long long)(x - prev_x));
        else
            fprintf(f, "  %-14s %10.3f %10.3f %8llu\n", names[m], at, took,
                    (unsigned long long)(x - prev_x));
        first = false;
        prev_t = t;
        prev_x = x;
    }
    uint64_t total = atomic_load(&exits);
    if (json) {
        fprintf(f, "],\"total_ms\":%.3f,\"exits\":%llu", (double)(prev_t - t0) / 1e6,
                (unsigned long long)total);
        for (unsigned k = 0; k < TX_KINDS; k++)
            fprintf(f, "%s\"%s\":%llu", k ? "," : ",\"exits_by\":{", exit_names[k],
                    (unsigned long long)atomic_load(&exits_by[k]));
        fprintf(f, "}");
        if (rss_peak_kib)
            fprintf(f, ",\"rss_peak_kib\":%llu,\"guest_touched_kib\":%llu,\"overhead_kib\":%llu,"
                       "\"private_overhead_kib\":%llu",
                    (unsigned long long)rss_peak_kib, (unsigned long long)rss_guest_kib,
                    (unsigned long long)overhead_kib(), (unsigned long long)private_own_kib);
        fprintf(f, "}\n");
    } else {
        fprintf(f, "  %-14s %10.3f %10s %8llu\n", "total", (double)(prev_t - t0) / 1e6, "",
                (unsigned long long)total);
        fprintf(f, "  exits by kind:");
        for (unsigned k = 0; k < TX_KINDS; k++)
            fprintf(f, " %s %llu", exit_names[k], (unsigned long long)atomic_load(&exits_by[k]));
        fprintf(f, "\n");
        if (rss_peak_kib)
            fprintf(f, "  memory: peak RSS %llu KiB = guest RAM touched %llu KiB + airlock %llu KiB"
                       " (of which private, not shared with other processes: %llu KiB)\n",
                    (unsigned long long)rss_peak_kib, (unsigned long long)rss_guest_kib,
                    (unsigned long long)overhead_kib(), (unsigned long long)private_own_kib);
    }
    fflush(f);
}
