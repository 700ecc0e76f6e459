#!/bin/sh
# Builds the airlock guest kernel from Debian's linux-source-6.1, with
# guest/kernel-patches/*.patch applied in order and guest/kernel.config merged
# over `make tinyconfig`, once per (fragment, patches, this script, source
# package version), in a cache outside the repo.
#
#   guest/build-kernel.sh [OUTDIR]                build, or reuse the cache
#   guest/build-kernel.sh --config-only [OUTDIR]  only make and check .config
#   guest/build-kernel.sh --cache-dir             print the cache dir and stop
#
# OUTDIR (default build/guest) receives vmlinux, bzImage, System.map,
# kernel.config.final and gen_init_cpio (the kernel's own cpio writer, which
# guest/build-initramfs.sh uses). The cache is
#   ${AIRLOCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/airlock}/kernel-<sha256>
# and is only ever created by renaming a complete build (made in
# kernel-build.<hash>.<pid> beside it) into place, so an interrupted build
# never leaves a half cache. Delete it to force a rebuild.
set -eu

mode=build
case "${1:-}" in
--config-only) mode=config; shift ;;
--cache-dir) mode=print; shift ;;
-*) echo "usage: $0 [--config-only|--cache-dir] [OUTDIR]" >&2; exit 2 ;;
esac
out=${1:-build/guest}

here=$(cd "$(dirname "$0")" && pwd)
fragment=$here/kernel.config
self=$here/build-kernel.sh
tarball=/usr/src/linux-source-6.1.tar.xz
pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)
if [ -z "$pkgver" ] || [ ! -r "$tarball" ]; then
    echo "build-kernel: Debian package linux-source-6.1 is not installed (run scripts/install-deps)" >&2
    exit 1
fi

root=${AIRLOCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/airlock}
patches=$(ls "$here"/kernel-patches/*.patch 2>/dev/null || true)
# shellcheck disable=SC2086  # $patches: file names without spaces, one per word
hash=$( { cat "$fragment" "$self" $patches; echo "linux-source-6.1 $pkgver"; } | sha256sum | cut -d' ' -f1)
cache=$root/kernel-$hash
if [ "$mode" = print ]; then
    echo "$cache"
    exit 0
fi

# Fixed build identity: same inputs give the same vmlinux and bzImage.
export KBUILD_BUILD_TIMESTAMP='2023-01-01 00:00:00 UTC'
export KBUILD_BUILD_USER=airlock KBUILD_BUILD_HOST=airlock KBUILD_BUILD_VERSION=1
export LOCALVERSION=
export ARCH=x86_64        # with ARCH=x86, tinyconfig would pick 32-bit
# A kernel build of its own: no -j/jobserver or variables from a calling make.
unset MAKEFLAGS MFLAGS MAKEOVERRIDES MAKELEVEL
jobs=$(nproc)

artifacts="vmlinux bzImage System.map kernel.config.final gen_init_cpio"

copy_out() {
    mkdir -p "$out"
    for f in $artifacts; do
        cp -f "$1/$f" "$out/$f.tmp.$$"
        mv -f "$out/$f.tmp.$$" "$out/$f"
    done
}

if [ "$mode" = build ] && [ -f "$cache/vmlinux" ] && [ -f "$cache/bzImage" ]; then
    echo "build-kernel: using cached $cache" >&2
    copy_out "$cache"
    exit 0
fi

mkdir -p "$root"
# Work dirs are named after their pid; drop the ones whose builder is gone.
for d in "$root"/kernel-build.*; do
    [ -d "$d" ] || continue
    pid=${d##*.}
    kill -0 "$pid" 2>/dev/null || rm -rf "$d"
done
work=$root/kernel-build.$hash.$$
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
mkdir "$work"
src=$work/src
log=$work/build.log
mkdir "$src"

echo "build-kernel: unpacking linux-source-6.1 $pkgver into $work" >&2
tar -xJf "$tarball" -C "$src" --strip-components=1
for p in $patches; do
    echo "build-kernel: applying ${p#"$here"/}" >&2
    if ! patch -d "$src" -p1 --batch --quiet <"$p" >"$log" 2>&1; then
        cat "$log" >&2
        echo "build-kernel: ${p#"$here"/} does not apply to linux-source-6.1 $pkgver" >&2
        exit 1
    fi
done

# make tinyconfig, then merge the fragment in allnoconfig mode: symbols the
# fragment makes visible default to off instead of to their Kconfig default,
# so nothing rides in unasked (olddefconfig would turn on e.g. ETHTOOL_NETLINK).
echo "build-kernel: configuring (tinyconfig + guest/kernel.config)" >&2
if ! { make -C "$src" tinyconfig &&
       (cd "$src" && scripts/kconfig/merge_config.sh -n .config "$fragment"); } >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "build-kernel: configuration failed" >&2
    exit 1
fi

# Kconfig silently drops a value whose dependencies are not met; check that
# every line of the fragment made it into the final .config unchanged.
bad=0
while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
    CONFIG_*=*)
        sym=${line%%=*}
        if ! grep -qxF -- "$line" "$src/.config"; then
            got=$(grep -E "^($sym=|# $sym is not set)" "$src/.config" || echo "(absent)")
            echo "build-kernel: $sym: fragment wants '$line', .config has '$got'" >&2
            bad=1
        fi ;;
    "# CONFIG_"*" is not set")
        sym=${line#\# }; sym=${sym%% *}
        if got=$(grep -E "^$sym=" "$src/.config"); then
            echo "build-kernel: $sym: fragment wants it off, .config has '$got'" >&2
            bad=1
        fi ;;
    ""|"#"*) ;;
    *)
        echo "build-kernel: guest/kernel.config: cannot parse line: $line" >&2
        bad=1 ;;
    esac
done <"$fragment"
if [ "$bad" != 0 ]; then
    echo "build-kernel: the final .config differs from guest/kernel.config (see above)" >&2
    exit 1
fi

if [ "$mode" = config ]; then
    mkdir -p "$out"
    cp -f "$src/.config" "$out/kernel.config.final"
    echo "build-kernel: config OK, written to $out/kernel.config.final" >&2
    exit 0
fi

echo "build-kernel: building vmlinux + bzImage with -j$jobs (a few minutes; log: $log)" >&2
start=$(date +%s)
if ! make -C "$src" -j"$jobs" vmlinux bzImage >>"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "build-kernel: kernel build failed" >&2
    exit 1
fi

result=$work/result
mkdir "$result"
cp "$src/vmlinux" "$src/arch/x86/boot/bzImage" "$src/System.map" \
   "$src/usr/gen_init_cpio" "$log" "$result/"
cp "$src/.config" "$result/kernel.config.final"
# Publish atomically; if another builder won the race its result is as good.
mv -T "$result" "$cache" 2>/dev/null || [ -f "$cache/bzImage" ]
echo "build-kernel: built in $(($(date +%s) - start)) s, cached in $cache" >&2
copy_out "$cache"
