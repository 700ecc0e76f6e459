/* One VM's session: everything `airlock boot`/`run` builds for it, in
 * one place so the steps in cmd_boot.c and the snapshot code
 * (session_snapshot.c) see the same parts. */
#ifndef AIRLOCK_CLI_SESSION_H
#define AIRLOCK_CLI_SESSION_H

#include "boot/kernel.h"
#include "vmm/memory/layout.h"
#include "boot/loader.h"
#include "devices/boot_timer.h"
#include "devices/disk.h"
#include "devices/i8042.h"
#include "devices/serial.h"
#include "vmm/cli/boot_options.h"
#include "vmm/cli/commands.h"
#include "vmm/kvm/console.h"
#include "vmm/kvm/evloop.h"
#include "vmm/memory/gmem.h"
#include "vmm/jail/jail.h"
#include "vmm/kvm/kvm.h"
#include "vmm/memory/mapped_file.h"
#include "vmm/report/memstat.h"
#include "vmm/kvm/virtio_devices.h"
#include "vmm/kvm/vm.h"
#include "vmm/kvm/vsock_host.h"

#define SESSION_ERRLEN 384

struct virtio_blk;
struct virtio_vsock;

struct boot_session {
    struct boot_options opt;
    struct mapped_file kernel_file, initrd_file;
    struct kernel_image img;
    struct gmem mem;
    struct boot_plan plan;
    struct kvm kvm;
    struct vm vm;
    struct serial serial;
    struct i8042 kbd;
    struct boot_timer timer;
    struct console console;
    struct evloop loop;
    int signal_fd;
    /* The last words (why the VM stopped) go here: stderr's non-blocking
     * twin when stderr is a pipe or tty (vmm/util/nbfd.h), so a reader who
     * stopped reading cannot hold up the exit; else stderr. */
    int err_fd;
    struct disk *disks[LAYOUT_VIRTIO_SLOTS];
    struct virtio_blk *blks[LAYOUT_VIRTIO_SLOTS];
    struct vdevs vdevs;
    const struct session_hook *hook;
    struct vsock_host vsock_host;
    struct virtio_vsock *vsock;
    struct vdev *vsock_vdev;
    char *cmdline; /* the user's command line plus our device announcements */
    struct jail jail;
    struct memstat memstat; /* --timings only */
    char err[SESSION_ERRLEN];
};

#endif
