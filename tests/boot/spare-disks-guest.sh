#!/bin/sh
# The guest's half of tests/boot/linux-spare-disks, run as PID 1 from a
# read-only disk: find each container disk by its serial once its size
# turns non-zero (there is no uevent from or to a size of 0), mount it,
# read the host's file, write one, unmount, and wait for the next.  Every
# step prints a T- line on the console that the host's driver waits for.
mount -t proc proc /proc 2>/dev/null
mount -t sysfs sysfs /sys 2>/dev/null
mount -t devtmpfs dev /dev 2>/dev/null
find_dev() { # $1 serial: prints vdX once that disk has a size
    for d in /sys/block/vd*; do
        if [ "$(cat "$d/serial" 2>/dev/null)" = "$1" ] && [ "$(cat "$d/size")" != 0 ]; then
            echo "${d##*/}"
            return 0
        fi
    done
    return 1
}
wait_dev() {
    i=0
    until dev=$(find_dev "$1"); do
        i=$((i + 1))
        [ $i -gt 3000 ] && echo "T-TIMEOUT waiting for $1" && reboot -f
        sleep 0.1
    done
}
line="T-SPARES"
for d in /sys/block/vd*; do
    line="$line ${d##*/}=$(cat "$d/serial")/$(cat "$d/size")"
done
echo "$line"
mkdir -p /m
echo T-READY

wait_dev ctr-one
echo "T-FOUND1 $dev size=$(cat /sys/block/$dev/size)"
mount -t ext4 "/dev/$dev" /m && echo "T-READ1 $(cat /m/hello.txt)"
echo guest-wrote >/m/new.txt && sync && echo "T-WROTE $(cat /m/new.txt)"
umount /m && echo T-UMOUNT1
echo T-STEP1-DONE

i=0
while [ "$(cat /sys/block/$dev/size)" != 0 ]; do
    i=$((i + 1))
    [ $i -gt 3000 ] && echo "T-TIMEOUT waiting for the empty" && reboot -f
    sleep 0.1
done
# A device of size 0 reads as empty (end of device), not as an error.
n=$(dd if="/dev/$dev" bs=512 count=1 2>/dev/null | wc -c)
echo "T-EMPTY $dev serial=$(cat /sys/block/$dev/serial) read-bytes=$n"

wait_dev ctr-two
echo "T-FOUND2 $dev size=$(cat /sys/block/$dev/size)"
mount -t ext4 "/dev/$dev" /m && echo "T-READ2 $(cat /m/hello.txt)"
if [ -e /m/new.txt ]; then echo T-STALE-FILE; else echo T-NO-STALE-FILE; fi
umount /m
echo T-DONE
reboot -f
