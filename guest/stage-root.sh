#!/bin/sh
# Fills DIR with the guest's root tree, shared by both images
# (guest/build-initramfs.sh, guest/build-rootfs.sh):
#   /bin/busybox (Debian's busybox-static) and every applet as a symlink to it,
#   /sbin/init (guest/init), /sbin/airlock-agent (when built),
#   /usr/bin and /usr/sbin -> /bin (for #!/usr/bin/env),
#   empty mount points, a root user. Ownership is the images' business: both
#   record every file as 0:0, whoever builds them.
#   guest/stage-root.sh DIR
set -eu
[ $# = 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
busybox=${BUSYBOX:-/bin/busybox}
# Same timestamp on every entry, so the images are reproducible.
epoch=${SOURCE_DATE_EPOCH:-1672531200}

if [ ! -x "$busybox" ]; then
    echo "stage-root: $busybox not found (Debian package busybox-static; run scripts/install-deps)" >&2
    exit 1
fi
# The guest has no dynamic loader or libc: a dynamic busybox would not run.
if readelf -l "$busybox" | grep -q 'program interpreter'; then
    echo "stage-root: $busybox is dynamically linked; install busybox-static" >&2
    exit 1
fi

rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
mkdir bin sbin etc dev proc sys tmp root usr
chmod 0755 bin sbin etc dev proc sys usr
chmod 1777 tmp
chmod 0700 root
cp "$busybox" bin/busybox
chmod 0755 bin/busybox
for applet in $("$busybox" --list); do
    [ "$applet" = busybox ] || ln -s busybox "bin/$applet"
done
ln -s ../bin usr/bin
ln -s ../bin usr/sbin
cp "$here/init" sbin/init
chmod 0755 sbin/init
# The guest agent (guest/agent/), PID 1 for `airlock run`, when built.
agent=${AIRLOCK_AGENT:-$here/../build/guest/agent}
if [ -x "$agent" ]; then
    cp "$agent" sbin/airlock-agent
    chmod 0755 sbin/airlock-agent
fi
echo 'root:x:0:0:root:/root:/bin/sh' >etc/passwd
echo 'root:x:0:' >etc/group
chmod 0644 etc/passwd etc/group
find . -exec touch -h -d "@$epoch" {} +
