#!/bin/sh
# Builds the guest's ext4 root disk from the shared root tree, without root
# and without loop mounts: mke2fs -d copies the tree in, debugfs then records
# every inode as owned by 0:0 (mke2fs keeps the builder's uid/gid).
#   guest/build-rootfs.sh [OUT]        OUT defaults to build/guest/rootfs.ext4
#   ROOTFS_SIZE_MB=64                  image size (sparse file)
set -eu
out=${1:-build/guest/rootfs.ext4}
size=${ROOTFS_SIZE_MB:-64}
here=$(cd "$(dirname "$0")" && pwd)
epoch=${SOURCE_DATE_EPOCH:-1672531200}
# Fixed UUID, hash seed and creation time: the same tree gives the same image.
uuid=4a1f0c3e-9b2d-4e57-8a6c-2d3b5e7f9a10
export E2FSPROGS_FAKE_TIME="$epoch"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/airlock-rootfs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
stage=$tmp/root
SOURCE_DATE_EPOCH=$epoch "$here/stage-root.sh" "$stage"

img=$tmp/rootfs.ext4
truncate -s "${size}M" "$img"
# 4 KiB blocks, not the 1 KiB mke2fs picks below 512 MiB: the guest's page
# size and the copy-on-write overlay's cluster (devices/disk.h), so a
# metadata write covers a whole cluster and needs no copy-up read.
mke2fs -q -F -t ext4 -b 4096 -L airlock-root -U "$uuid" \
    -E "root_owner=0:0,hash_seed=$uuid" -d "$stage" "$img" "${size}M"

# Also reset ctime: mke2fs copies it from the staging tree, where it is "now".
(cd "$stage" && find . -printf '/%P\n') | LC_ALL=C sort |
    awk -v t="$epoch" '{ printf "sif \"%s\" uid 0\nsif \"%s\" gid 0\nsif \"%s\" ctime @%s\n", $0, $0, $0, t }' \
    >"$tmp/chown.debugfs"
debugfs -w -f "$tmp/chown.debugfs" "$img" >"$tmp/debugfs.log" 2>&1
# debugfs exits 0 even when a command fails; its errors name the command.
if grep -v -e '^debugfs [0-9]' -e '^debugfs: sif ' "$tmp/debugfs.log" | grep -q .; then
    cat "$tmp/debugfs.log" >&2
    echo "build-rootfs: debugfs could not set owners" >&2
    exit 1
fi
e2fsck -fn "$img" >"$tmp/fsck.log" 2>&1 || { cat "$tmp/fsck.log" >&2; exit 1; }

mkdir -p "$(dirname "$out")"
mv -f "$img" "$out"
