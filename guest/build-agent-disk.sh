#!/bin/sh
# Builds the agent disk that boots imported images: a small read-only ext4
# whose /init is the guest agent (stripped), with the empty /dev, /proc
# and /newroot it needs.  The kernel mounts it as its root and runs
# /init; the agent mounts the image's disk and makes that the root
# (guest/agent/switch_root.c), so an image needs no agent, shell or libc
# of its own.  A disk rather than an initramfs because the kernel boots
# faster from it (docs/benchmarks.md, "Imported images in the lab").
# mke2fs -d writes it without root; every entry is 0:0.
#   guest/build-agent-disk.sh OUT AGENT
set -eu
[ $# = 2 ] || { echo "usage: $0 OUT AGENT" >&2; exit 2; }
out=$1
agent=$2
epoch=${SOURCE_DATE_EPOCH:-1672531200}
[ -x "$agent" ] || { echo "build-agent-disk: $agent not found" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/airlock-agent-disk.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$tmp/root/dev" "$tmp/root/proc" "$tmp/root/newroot"
strip -o "$tmp/root/init" "$agent"
chmod 0755 "$tmp/root/init" "$tmp/root/dev" "$tmp/root/proc" "$tmp/root/newroot"
find "$tmp/root" -exec touch -h -d "@$epoch" {} +
# 4 KiB blocks, as every ext4 disk airlock makes (guest/build-rootfs.sh).
E2FSPROGS_FAKE_TIME=$epoch mke2fs -q -F -t ext4 -b 4096 -d "$tmp/root" -E root_owner=0:0 \
    -U clear -m 0 "$tmp/out.ext4" 4M
mkdir -p "$(dirname "$out")"
mv -f "$tmp/out.ext4" "$out"
