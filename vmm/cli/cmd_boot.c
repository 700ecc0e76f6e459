/* `airlock boot`: one linear sequence, in the order a reader would check it.
 * Everything that depends only on the user's input (options, files, the
 * kernel's headers, whether it fits in RAM) is checked before /dev/kvm is
 * touched, so a bad input is reported the same way on every host. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "vmm/memory/layout.h"
#include "boot/loader.h"
#include "devices/disk.h"
#include "devices/boot_timer.h"
#include "devices/i8042.h"
#include "devices/serial.h"
#include "devices/virtio/blk.h"
#include "devices/virtio/vsock.h"
#include "vmm/cli/boot_options.h"
#include "vmm/cli/session.h"
#include "vmm/cli/session_snapshot.h"
#include "vmm/cli/spare_disks.h"
#include "vmm/snapshot/snapshot_memory.h"
#include "vmm/cli/commands.h"
#include "vmm/jail/seccomp.h"
#include "vmm/kvm/console.h"
#include "vmm/jail/detach.h"
#include "vmm/egress/egress.h"
#include "vmm/kvm/evloop.h"
#include "vmm/audit/limits.h"
#include "vmm/util/exit_codes.h"
#include "vmm/jail/jail.h"
#include "vmm/kvm/machine.h"
#include "vmm/util/timings.h"
#include "vmm/memory/mapped_file.h"
#include "vmm/report/memstat.h"
#include "vmm/util/nbfd.h"
#include "vmm/kvm/virtio_devices.h"
#include "vmm/kvm/vm.h"
#include "vmm/kvm/vsock_host.h"

#define ERRLEN SESSION_ERRLEN
/* Tasks of the VM process (its RLIMIT_NPROC and pids.max): the event loop,
 * the vCPUs, the command's thread, the egress dispatcher and its relays,
 * and a few spare. */
/* -p's connection threads share the egress threads' room: both are
 * bounded by the vsock device's VSOCK_MAX_CONNS, and a thread that cannot
 * be made refuses its connection (audited).  The one more is -p's
 * accepting thread. */
#define SESSION_THREADS(cpus) ((cpus) + 4 + EGRESS_MAX_THREADS + 1)

static int report(const char *msg)
{
    fprintf(stderr, "airlock: %s\n", msg);
    return EXIT_AIRLOCK_ERROR;
}

/* Step 1: the disks, opened now so a bad one is reported before anything
 * else happens. */
static int open_disks(struct boot_session *s)
{
    struct boot_options *o = &s->opt;
    for (unsigned i = 0; i < o->ndisks; i++) {
        if (disk_open(o->disks[i], &s->disks[i], s->err, ERRLEN)) {
            /* disk_open names the option "--disk"; say the one used. */
            static const char prefix[] = "--disk ";
            if (o->disk_flags[i] && !strncmp(s->err, prefix, sizeof(prefix) - 1)) {
                char msg[ERRLEN];
                snprintf(msg, sizeof(msg), "%s %s", o->disk_flags[i],
                         s->err + sizeof(prefix) - 1);
                snprintf(s->err, ERRLEN, "%s", msg);
            }
            return report(s->err);
        }
        disk_set_on_full(s->disks[i], limits_disk_full, NULL);
        for (unsigned j = 0; j < i; j++) {
            if (disk_same_file(s->disks[j], s->disks[i])) {
                snprintf(s->err, ERRLEN,
                         "--disk %s and --disk %s are the same file, and one of them is "
                         "writable: the guest would see it change under its feet",
                         o->disks[j], o->disks[i]);
                return report(s->err);
            }
        }
    }
    return 0;
}

/* The most the disks' copy-on-write overlays can hold (their caps, never
 * more than the disk): on a tmpfs TMPDIR their pages are charged to the VM's cgroup like
 * guest RAM. */
static uint64_t overlay_bytes(const struct boot_session *s)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < s->opt.ndisks; i++)
        sum += disk_overlay_cap(s->disks[i]); /* 0 when not cow */
    return sum;
}

/* Steps 2-3: files, headers, guest RAM, boot layout. */
static int prepare_guest(struct boot_session *s)
{
    struct boot_options *o = &s->opt;
    /* Room for the user's line and one announcement per slot; the loader
     * then checks the total against what this kernel accepts. */
    size_t cap = strlen(o->cmdline) + 64 * LAYOUT_VIRTIO_SLOTS + 1;
    s->cmdline = malloc(cap);
    if (!s->cmdline)
        return report("out of memory");
    if (vdevs_cmdline(s->cmdline, cap, o->cmdline,
                      o->ndisks + o->spare_disks +
                          (o->vsock_uds || o->vsock_internal ? 1 : 0)))
        return report("--cmdline: no room for the virtio device announcements");
    if (mapped_file_open(&s->kernel_file, "--kernel", o->kernel, KERNEL_FILE_MAX, s->err, ERRLEN))
        return report(s->err);
    if (kernel_parse(s->kernel_file.data, s->kernel_file.size, &s->img)) {
        snprintf(s->err, ERRLEN, "--kernel %s: %s", o->kernel, s->img.error);
        return report(s->err);
    }
    if (o->initrd &&
        mapped_file_open(&s->initrd_file, "--initrd", o->initrd, LAYOUT_MMIO_GAP_START, s->err, ERRLEN))
        return report(s->err);
    timings_mark(TM_FILES);
    int e = gmem_init(&s->mem, o->mem_mib);
    if (e) {
        snprintf(s->err, ERRLEN, "--mem %llu: cannot map guest RAM: %s",
                 (unsigned long long)o->mem_mib, strerror(-e));
        return report(s->err);
    }
    timings_mark(TM_MEMORY);
    struct boot_request req = {
        .cmdline = s->cmdline, .initrd = s->initrd_file.data,
        .initrd_size = s->initrd_file.size, .entry = o->entry, .ncpus = o->cpus,
        .map_files = true, .kernel_fd = s->kernel_file.fd, .initrd_fd = s->initrd_file.fd,
    };
    e = loader_load(&s->img, &s->mem, &req, &s->plan);
    if (e == -E2BIG)
        snprintf(s->err, ERRLEN, "--cmdline: %s%s", s->plan.error,
                 o->ndisks ? " (counting the virtio_mmio.device= announcements airlock adds)" : "");
    else if (e == -ENOMEM)
        snprintf(s->err, ERRLEN, "--mem %llu is too small: %s", (unsigned long long)o->mem_mib,
                 s->plan.error);
    else if (e)
        snprintf(s->err, ERRLEN, "--entry: %s (%s)", s->plan.error, o->kernel);
    if (e)
        return report(s->err);
    /* Everything is in guest RAM now; the files are no longer needed. */
    mapped_file_close(&s->kernel_file);
    mapped_file_close(&s->initrd_file);
    timings_mark(TM_KERNEL);
    return 0;
}

/* Steps 1-3 for a restore: the disks must be the files the snapshot was
 * taken with; guest RAM comes from the memory file (mapped copy-on-write,
 * or inflated) instead of a kernel. */
static int restore_guest(struct boot_session *s)
{
    const struct snap_state *st = s->opt.restore;
    if (session_disks_check(s, st, s->err, ERRLEN))
        return report(s->err);
    s->cmdline = strdup(st->cmdline); /* for the record: the guest has booted */
    if (!s->cmdline)
        return report("out of memory");
    timings_mark(TM_FILES);
    int e = gmem_init(&s->mem, s->opt.mem_mib);
    if (e) {
        snprintf(s->err, ERRLEN, "--from-snapshot: cannot map %llu MiB of guest RAM: %s",
                 (unsigned long long)s->opt.mem_mib, strerror(-e));
        return report(s->err);
    }
    char why[256];
    if (snap_memory_read(&s->mem, s->opt.restore_memory_fd, st->memory_zlib, why, sizeof(why))) {
        snprintf(s->err, ERRLEN, "--from-snapshot: %s", why);
        return report(s->err);
    }
    timings_mark(TM_MEMORY);
    return 0;
}

/* Step 4: /dev/kvm, and whether this kernel can run on it. */
static int open_kvm(struct boot_session *s)
{
    struct boot_options *o = &s->opt;
    if (kvm_open(&s->kvm, o->kvm_path, s->err, ERRLEN))
        return report(s->err);
    if ((int)o->cpus > s->kvm.max_vcpus) {
        snprintf(s->err, ERRLEN, "--cpus %u: this KVM allows at most %d vCPUs", o->cpus,
                 s->kvm.max_vcpus);
        return report(s->err);
    }
    if (s->kvm.pvm && s->img.is_linux && !o->allow_pvm) {
        snprintf(s->err, ERRLEN,
                 "%s is kvm-pvm (paging-based, no VT-x/AMD-V): it emulates guest kernel code and "
                 "cannot boot a stock Linux kernel like %s; run it under tests/lab/run or on a "
                 "hardware-KVM host (--allow-pvm tries anyway, for PVM-aware kernels)",
                 o->kvm_path, o->kernel);
        return report(s->err);
    }
    return 0;
}

static void kbd_reset(void *opaque)
{
    struct boot_session *s = opaque;
    if (atomic_load(&s->console.panicked))
        vm_stop(&s->vm, EXIT_AIRLOCK_ERROR, "guest kernel panicked: %s", s->console.panic_line);
    else
        vm_stop(&s->vm, 0, "guest reset");
}

static void serial_set_irq(void *opaque, int level)
{
    struct boot_session *s = opaque;
    struct kvm_irq_level irq = {.irq = LAYOUT_COM1_IRQ, .level = (uint32_t)level};
    if (ioctl(s->vm.fd, KVM_IRQ_LINE, &irq) < 0)
        vm_stop(&s->vm, EXIT_AIRLOCK_ERROR, "KVM_IRQ_LINE failed: %s", strerror(errno));
}

static void serial_tx(void *opaque, uint8_t byte)
{
    struct boot_session *s = opaque;
    console_tx(&s->console, byte);
}

static void serial_rx_ready(void *opaque)
{
    struct boot_session *s = opaque;
    console_rx_ready(&s->console);
}

/* The guest agent's milestones (devices/boot_timer.h), on a vCPU thread. */
static void on_boot_mark(void *opaque, enum boot_timer_mark what)
{
    struct boot_session *s = opaque;
    bool first = timings_mark(what == BOOT_TIMER_USERSPACE ? TM_USERSPACE : TM_AGENT_READY);
    if (first && what == BOOT_TIMER_AGENT_READY && s->hook && s->hook->agent_ready)
        s->hook->agent_ready(s->hook->opaque);
}

static const struct serial_ops serial_ops = {
    .tx = serial_tx, .set_irq = serial_set_irq, .rx_ready = serial_rx_ready,
};

/* Step 5: the devices the guest can reach (their ranges: vmm/kvm/machine.c). */
static int attach_devices(struct boot_session *s)
{
    struct machine_devices m = {.serial = &s->serial, .kbd = &s->kbd, .timer = &s->timer,
                                .nblks = s->opt.ndisks};
    serial_init(&s->serial, &serial_ops, s);
    s->timer = (struct boot_timer){.mark = on_boot_mark, .opaque = s};
    s->kbd = (struct i8042){.reset = kbd_reset, .opaque = s};
    for (unsigned i = 0; i < s->opt.ndisks; i++) {
        if (virtio_blk_create(s->disks[i], &s->blks[i])) {
            snprintf(s->err, ERRLEN, "--disk %s: out of memory", s->opt.disks[i]);
            return report(s->err);
        }
        m.blks[i] = s->blks[i];
    }
    if (spare_disks_create(s, &m))
        return report("--spare-disks: out of memory");
    if (s->opt.vsock_uds || s->opt.vsock_internal) {
        if (virtio_vsock_create(s->opt.cid, &vsock_host_ops, &s->vsock_host, &s->vsock))
            return report("--vsock-uds: cannot create the vsock device");
        m.vsock = s->vsock;
    }
    if (machine_register_devices(&s->vm.bus, &s->vm.mem, &s->vdevs, &m, s->err, ERRLEN) ||
        vdevs_wire(&s->vdevs, &s->vm, s->err, ERRLEN))
        return report(s->err);
    if (s->vsock)
        s->vsock_vdev = &s->vdevs.devs[s->vdevs.n - 1];
    return 0;
}

/* `airlock boot | head`: once head has what it wanted, the VM ends and
 * airlock exits 141 (128+SIGPIPE, what a writer killed by SIGPIPE gives),
 * with no error line, as `airlock run` does. */
static void on_console_reader_gone(void *opaque)
{
    struct boot_session *s = opaque;
    vm_stop(&s->vm, 128 + SIGPIPE, "%s", "");
}

static void on_vm_stopped(void *opaque, int fd, uint32_t events)
{
    struct boot_session *s = opaque;
    (void)fd;
    (void)events;
    console_stop(&s->console); /* a vCPU waiting for a slow stdout gives up */
    s->loop.quit = true;
}

static void on_signal(void *opaque, int fd, uint32_t events)
{
    struct boot_session *s = opaque;
    struct signalfd_siginfo si;
    (void)fd;
    (void)events;
    if (read(s->signal_fd, &si, sizeof(si)) == sizeof(si))
        vm_stop(&s->vm, 128 + (int)si.ssi_signo, "stopped by signal %s", strsignal((int)si.ssi_signo));
}

/* Signals that end airlock arrive as events; the kick signal is only for
 * vCPU threads.  Blocked here, before any thread exists, so all inherit it. */
static int block_signals(struct boot_session *s)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    sigdelset(&set, SIGUSR1);
    s->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    signal(SIGPIPE, SIG_IGN);
    return s->signal_fd < 0 ? -errno : 0;
}

/* Steps 6-7: run until something ends the VM, report how it ended. */
static int run_vm(struct boot_session *s)
{
    int e;
    s->console.reader_gone = on_console_reader_gone;
    s->console.reader_gone_opaque = s;
    if ((e = evloop_init(&s->loop)) || (e = block_signals(s)) ||
        (e = evloop_add(&s->loop, s->vm.stop_efd, EPOLLIN, on_vm_stopped, s)) ||
        (e = evloop_add(&s->loop, s->signal_fd, EPOLLIN, on_signal, s)) ||
        (e = console_attach(&s->console, &s->loop, &s->serial)) ||
        (e = vdevs_attach(&s->vdevs, &s->loop)) ||
        (s->vsock && (e = vsock_host_attach(&s->vsock_host, &s->loop, s->vsock_vdev, s->vsock)))) {
        snprintf(s->err, ERRLEN, "setting up the event loop: %s", strerror(-e));
        return vsock_host_close(&s->vsock_host), report(s->err);
    }
    if (vm_start(&s->vm, s->err, ERRLEN))
        return vsock_host_close(&s->vsock_host), report(s->err);
    timings_mark(TM_VCPU_START);
    if (s->hook && s->hook->started(s->hook->opaque, s, &s->vm, s->vsock, s->vsock_vdev))
        vm_stop(&s->vm, EXIT_AIRLOCK_ERROR, "cannot start the command's thread");
    if ((e = seccomp_apply(SECCOMP_LOOP)))
        vm_stop(&s->vm, EXIT_AIRLOCK_ERROR, "cannot install the seccomp filter: %s", strerror(-e));
    else
        e = evloop_run(&s->loop);
    if (e)
        vm_stop(&s->vm, EXIT_AIRLOCK_ERROR, "event loop failed: %s", strerror(-e));
    console_stop(&s->console);
    vm_join(&s->vm); /* no more console output after this */
    console_close(&s->console);
    vsock_host_close(&s->vsock_host); /* its socket file is gone before we report */
    /* A command's own status comes with no reason: nothing to say. */
    if (s->vm.exit_status != 0 && s->vm.exit_reason[0]) {
        char line[sizeof(s->vm.exit_reason) + 16];
        int n = snprintf(line, sizeof(line), "airlock: %s\n", s->vm.exit_reason);
        fflush(stderr); /* what stdio still holds goes first */
        nbfd_say(s->err_fd, line, (size_t)n);
    }
    timings_mark(TM_STATUS);
    if (timings_enabled()) {
        struct memstat_figures mf;
        memstat_read(&s->memstat, &s->vm.mem, &mf);
        timings_set_memory(mf.peak, mf.guest, mf.private_own);
        memstat_close(&s->memstat);
    }
    /* The caller has its status now and teardown runs after it, unless
     * --timings asked to see teardown too. */
    if (!timings_enabled())
        detach_report(s->vm.exit_status);
    vm_destroy(&s->vm);
    if (s->vsock)
        virtio_vsock_destroy(s->vsock);
    vdevs_destroy(&s->vdevs);
    for (unsigned i = 0; i < s->opt.ndisks; i++) {
        virtio_blk_destroy(s->blks[i]);
        disk_close(s->disks[i]);
    }
    spare_disks_destroy(s);
    if (timings_mark(TM_TEARDOWN) && timings_enabled()) {
        timings_print(stderr);
        detach_report(s->vm.exit_status);
    }
    return s->vm.exit_status;
}

int cmd_boot(int argc, char **argv)
{
    struct boot_options opt;
    char err[ERRLEN];
    int r = boot_options_parse(&opt, argc, argv, err, ERRLEN);
    if (r)
        return r > 0 ? 0 : report(err);
    return vm_session(&opt, NULL);
}

int vm_session(const struct boot_options *opt, const struct session_hook *hook)
{
    static struct boot_session s; /* large; one per process */
    int r;
    s.signal_fd = -1;
    s.memstat = (struct memstat){-1, -1};
    s.opt = *opt;
    s.hook = hook;
    timings_mark(TM_ARGS);
    if (jail_prepare(&s.jail, &s.opt.jail, s.opt.vsock_uds, s.err, ERRLEN))
        return report(s.err);
    if (hook && hook->parent_finish) {
        s.jail.helper.finish = hook->parent_finish;
        s.jail.helper.finish_opaque = hook->opaque;
        s.jail.helper.finish_unpacks = hook->parent_unpacks;
        s.jail.helper.start = hook->parent_start;
        s.jail.helper.winch = hook->parent_winch;
    }
    if (detach_start(&s.jail.helper) < 0 && (s.jail.active || s.jail.helper.finish)) {
        /* Unjailed, we could run here (the caller then waits for the
         * teardown too); the jail, and a finish step, need the parent. */
        return report("cannot fork the VM process");
    }
    if ((r = open_disks(&s)))
        return r;
    /* Checked now, created last (below). */
    if (s.opt.vsock_uds && vsock_host_check(s.opt.vsock_uds, s.err, ERRLEN))
        return report(s.err);
    /* Before guest RAM is touched, so all of it is charged to the cgroup. */
    jail_limit(&s.jail, s.opt.mem_mib << 20, overlay_bytes(&s), SESSION_THREADS(s.opt.cpus));
    /* --cold-boot: the snapshot's disks as the guest had written them;
     * the overlays are the disks' own, loaded before any device runs. */
    if (s.opt.overlays && (session_disks_check(&s, s.opt.overlays, s.err, ERRLEN) ||
                           session_overlays_load(&s, s.opt.overlays, s.opt.restore_overlay_fd,
                                                 s.err, ERRLEN)))
        return report(s.err);
    if ((r = s.opt.restore ? restore_guest(&s) : prepare_guest(&s)) || (r = open_kvm(&s)))
        return r;
    timings_mark(TM_KVM);
    if (console_open(&s.console, s.opt.console, s.err, ERRLEN))
        return report(s.err);
    s.err_fd = nbfd_twin(STDERR_FILENO);
    if (s.err_fd < 0)
        s.err_fd = STDERR_FILENO;
    s.console.msg_fd = s.err_fd;
    limits_set_err_fd(s.err_fd);
    console_set_limits(&s.console, s.opt.console_rate_kib, s.opt.console_max_mib);
    /* The vsock socket file is the one thing airlock creates that outlives
     * it if left behind: made last, removed on every path from here. */
    vsock_host_init(&s.vsock_host);
    if (s.opt.vsock_uds && vsock_host_open(&s.vsock_host, s.opt.vsock_uds, s.err, ERRLEN))
        return report(s.err);
    if (hook && hook->serve_port) {
        s.vsock_host.serve_port = hook->serve_port;
        s.vsock_host.serve_opaque = hook->opaque;
    }
    if (vm_create(&s.vm, &s.kvm, &s.mem, s.err, ERRLEN) ||
        vm_create_vcpus(&s.vm, s.opt.cpus, s.opt.restore ? NULL : &s.plan, s.err, ERRLEN))
        r = report(s.err);
    else {
        timings_mark(TM_VM);
        if (!(r = attach_devices(&s)))
            timings_mark(TM_DEVICES);
        if (!r && s.opt.restore &&
            session_snapshot_restore(&s, s.opt.restore, s.opt.restore_overlay_fd, s.err, ERRLEN))
            r = report(s.err);
        if (!r && s.opt.restore)
            timings_mark(TM_RESTORE);
    }
    if (!r && hook && hook->before_jail && hook->before_jail(hook->opaque, &s, s.err, ERRLEN))
        r = report(s.err);
    /* Opened now: neither the jail nor the seccomp filter lets us later. */
    if (!r && timings_enabled() && memstat_open(&s.memstat))
        fprintf(stderr, "airlock: --timings: cannot read /proc/self: no memory figures\n");
    /* Everything is open and no thread runs yet (vm_start makes them). */
    if (!r && jail_enter(&s.jail, SESSION_THREADS(s.opt.cpus), &s.vsock_host.dial_sock, s.err,
                         ERRLEN))
        r = report(s.err);
    if (r) {
        vsock_host_close(&s.vsock_host);
        return r;
    }
    timings_mark(TM_JAIL);
    return run_vm(&s);
}
