#!/bin/sh
# Builds the agent-only initramfs (newc cpio, not compressed) that boots imported
# images: /init is the guest agent, and /dev/console is there for the
# kernel to open before it runs.  The agent mounts the image's disk and
# makes it the root (guest/agent/switch_root.c), so an image needs no
# agent, shell or libc of its own.  The kernel's usr/gen_init_cpio writes
# it (guest/build-kernel.sh leaves it beside vmlinux): 0:0 owners without
# root.  Stripped and not compressed: the guest kernel would otherwise
# inflate it at every boot, and copying 740 KB costs less.
#   guest/build-agent-initramfs.sh OUT AGENT [GEN_INIT_CPIO]
set -eu
[ $# -ge 2 ] || { echo "usage: $0 OUT AGENT [GEN_INIT_CPIO]" >&2; exit 2; }
out=$1
agent=$2
gen=${3:-$(dirname "$out")/gen_init_cpio}
epoch=${SOURCE_DATE_EPOCH:-1672531200}
for f in "$gen" "$agent"; do
    [ -x "$f" ] || { echo "build-agent-initramfs: $f not found" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/airlock-agent-initramfs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
strip -o "$tmp/agent" "$agent"
printf '%s\n' "dir /dev 0755 0 0" "nod /dev/console 0600 0 0 c 5 1" \
    "file /init $tmp/agent 0755 0 0" >"$tmp/list"
"$gen" -t "$epoch" "$tmp/list" >"$tmp/out.cpio"
mkdir -p "$(dirname "$out")"
mv -f "$tmp/out.cpio" "$out"
