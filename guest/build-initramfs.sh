#!/bin/sh
# Builds the guest initramfs (newc cpio, gzip) from the shared root tree, with
# the kernel's own usr/gen_init_cpio (guest/build-kernel.sh leaves it beside
# vmlinux): it writes 0:0 owners and a /dev/console node without root.
#   guest/build-initramfs.sh [OUT [GEN_INIT_CPIO]]
# OUT defaults to build/guest/initramfs.cpio.gz.
set -eu
out=${1:-build/guest/initramfs.cpio.gz}
gen=${2:-$(dirname "$out")/gen_init_cpio}
here=$(cd "$(dirname "$0")" && pwd)
epoch=${SOURCE_DATE_EPOCH:-1672531200}

if [ ! -x "$gen" ]; then
    echo "build-initramfs: $gen not found (guest/build-kernel.sh makes it)" >&2
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/airlock-initramfs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
stage=$tmp/root
SOURCE_DATE_EPOCH=$epoch "$here/stage-root.sh" "$stage"

# gen_init_cpio's input list (usr/gen_init_cpio.c usage): one line per entry,
# parents before children (find's pre-order, kept by sorting on the path).
{
    # The kernel opens /dev/console before /init runs (and before devtmpfs).
    echo "dir /dev 0755 0 0"
    echo "nod /dev/console 0600 0 0 c 5 1"
    echo "file /init $stage/sbin/init 0755 0 0"
    (cd "$stage" && find . -mindepth 1 -printf '%P\t%y\t%m\t%l\n') | LC_ALL=C sort |
    while IFS="$(printf '\t')" read -r path type mode target; do
        case "$type" in
        d) [ "$path" = dev ] || echo "dir /$path $mode 0 0" ;;
        f) echo "file /$path $stage/$path $mode 0 0" ;;
        l) echo "slink /$path $target 0777 0 0" ;;
        *) echo "build-initramfs: unexpected file type $type: $path" >&2; exit 1 ;;
        esac
    done
} >"$tmp/list"

"$gen" -t "$epoch" "$tmp/list" | gzip -9 -n >"$tmp/out.cpio.gz"
mkdir -p "$(dirname "$out")"
mv -f "$tmp/out.cpio.gz" "$out"
