#!/bin/sh
# Boots the guest under QEMU's microvm with software emulation (TCG), which
# works on any host: vmlinux (PVH entry) and bzImage with the initramfs, then
# vmlinux with the ext4 root on virtio-blk (virtio-mmio). Each boot must print
# "AIRLOCK-GUEST-UP cpus=$SMP" and end in a reset (QEMU exits: -no-reboot).
#   guest/qemu-smoke.sh [DIR]      DIR defaults to build/guest
#   SMP=2 MACHINE=microvm,acpi=off vCPUs and the -M argument
# Two differences from a bare `-M microvm`, both to look like airlock's own
# machine: acpi=off, because with ACPI QEMU announces virtio-mmio only in the
# DSDT, which a kernel without ACPI cannot read (acpi=off puts
# virtio_mmio.device= on the command line instead); and -device i8042, because
# microvm has no keyboard controller, so reboot=k falls through to a jump into
# the firmware, which restarts the bzImage in a loop (vmlinux happens to end
# in a triple fault there) instead of a reset that makes QEMU exit.
# Each console is kept in DIR/smoke-*.log.
set -eu
dir=${1:-build/guest}
smp=${SMP:-2}
machine=${MACHINE:-microvm,acpi=off}
want="AIRLOCK-GUEST-UP cpus=$smp"
fail=0

boot() {
    name=$1; shift
    log=$dir/smoke-$name.log
    start=$(date +%s.%N)
    rc=0
    timeout 120 qemu-system-x86_64 -M "$machine" -accel tcg -cpu max -m 256 \
        -smp "$smp" -nographic -no-reboot -device i8042 "$@" </dev/null >"$log" 2>&1 || rc=$?
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    marker=$(grep -a 'AIRLOCK-GUEST-UP' "$log" | tr -d '\r' || true)
    if [ "$rc" = 0 ] && [ "$marker" = "$want" ]; then
        printf 'ok   %-16s %5.1f s  %s\n' "$name" "$secs" "$marker"
    else
        printf 'FAIL %-16s %5.1f s  exit %s, marker: %s (console: %s)\n' \
            "$name" "$secs" "$rc" "${marker:-none}" "$log"
        fail=1
    fi
}

append='console=ttyS0 reboot=k panic=-1'
boot vmlinux-initrd -kernel "$dir/vmlinux" -initrd "$dir/initramfs.cpio.gz" -append "$append"
boot bzImage-initrd -kernel "$dir/bzImage" -initrd "$dir/initramfs.cpio.gz" -append "$append"
boot vmlinux-ext4 -kernel "$dir/vmlinux" \
    -drive "id=d,file=$dir/rootfs.ext4,format=raw,if=none,snapshot=on" \
    -device virtio-blk-device,drive=d -append "$append root=/dev/vda rw"
exit "$fail"
