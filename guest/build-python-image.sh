#!/bin/sh
# Builds the python3 guest disk from Debian's own packages:
#   debootstrap --variant=minbase --include=python3,ca-certificates,curl,sudo bookworm (from the mirror
#   this machine's apt uses), stripped of what a guest never reads, cached
#   outside the repo, then copied into an ext4 image with mke2fs -d (no loop
#   mount). Boots with the same init as the busybox images (guest/init, run by
#   Debian's busybox-static at /bin/busybox); build/guest/agent, if it exists,
#   is installed as /sbin/airlock-agent.
#
#   guest/build-python-image.sh [OUT]      OUT defaults to build/guest/python.ext4
#   guest/build-python-image.sh --cache-dir   print the cache dir and stop
#   guest/build-python-image.sh --smoke [IMAGE]   boot IMAGE (default
#       build/guest/python.ext4) with vmlinux beside it under QEMU microvm
#       (TCG, no KVM needed), type python3 -c 'print(6*7)' at the shell and
#       check for 42; the console is kept in IMAGE's dir as smoke-python.log
#
# The tree is cached in
#   ${AIRLOCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/airlock}/python-image-<sha256>/rootfs
# where the hash covers this script, scripts/packages/python-image.list and the
# mirror's identity (its URI, the suite and the apt sources file naming it,
# whose snapshot comment pins the archive date). A build happens in
# python-image-build.<hash>.<pid>/ beside it and is renamed into place only
# when complete; leftovers of a killed builder are removed by the next run.
# Delete the directory to force a rebuild.
#
#   AIRLOCK_DEBIAN_MIRROR=URI   mirror (default: apt's source for bookworm main)
#   PYTHON_IMAGE_HEADROOM=30    free space in the image, % of the content
#   PYTHON_IMAGE_MIN_MB=64      smallest image
#   AIRLOCK_AGENT=PATH          agent to install (default build/guest/agent)
#
# Needs root: debootstrap chroots, and the tree holds root-only files
# (/etc/shadow) that the image step must read. The image step itself uses no
# privilege (mke2fs -d writes a plain file; owners come from the tree).
set -eu

# Boots the image with airlock.shell=1 and drives the console through a fifo:
# input is typed only once the shell's prompt is out, since what is sent
# before the guest opens its tty is lost.
smoke() {
    img=$1
    kernel=${KERNEL:-$(dirname "$img")/vmlinux}
    log=$(dirname "$img")/smoke-python.log
    sd=$(mktemp -d "${TMPDIR:-/tmp}/airlock-pysmoke.XXXXXX")
    trap 'rm -rf "$sd"' EXIT
    mkfifo "$sd/in"
    : >"$log"
    exec 3<>"$sd/in"   # read-write: never blocks, and QEMU sees no EOF
    t0=$(date +%s.%N)
    timeout 300 qemu-system-x86_64 -M microvm,acpi=off -accel tcg -cpu max -m 512 \
        -nographic -no-reboot -device i8042 -kernel "$kernel" \
        -drive "id=d,file=$img,format=raw,if=none,snapshot=on" \
        -device virtio-blk-device,drive=d \
        -append 'console=ttyS0 reboot=k panic=-1 quiet root=/dev/vda rw airlock.shell=1' \
        <&3 >"$log" 2>&1 &
    qpid=$!
    # until PATTERN [SECONDS]: wait for a console line matching PATTERN
    until_seen() {
        n=0
        while ! tr -d '\r' <"$log" | grep -q -- "$1"; do
            kill -0 "$qpid" 2>/dev/null || return 1
            n=$((n + 1)); [ "$n" -lt $((${2:-120} * 10)) ] || return 1
            sleep 0.1
        done
    }
    ok=1 up="" py=""
    if until_seen 'AIRLOCK-GUEST-UP cpus=' && up=$(date +%s.%N) && until_seen '# '; then
        printf "python3 -c 'print(6*7)'\n" >&3
        if until_seen '^42$' 60; then py=$(date +%s.%N); else ok=0; fi
        printf 'exit\n' >&3
    else
        ok=0
    fi
    rc=0
    wait "$qpid" || rc=$?
    exec 3>&-
    t1=$(date +%s.%N)
    if [ "$ok" = 1 ] && [ "$rc" = 0 ]; then
        printf 'ok   python-image  up %.1f s, 42 at %.1f s, exit 0 at %.1f s\n' \
            "$(echo "$up - $t0" | bc)" "$(echo "$py - $t0" | bc)" "$(echo "$t1 - $t0" | bc)"
    else
        printf 'FAIL python-image  QEMU exit %s, marker: %s, 42: %s (console: %s)\n' "$rc" \
            "$(tr -d '\r' <"$log" | grep -a AIRLOCK-GUEST-UP || echo none)" \
            "$(tr -d '\r' <"$log" | grep -qx 42 && echo yes || echo no)" "$log"
        return 1
    fi
}

mode=build
case ${1:-} in
--cache-dir) mode=print; shift ;;
--smoke) mode=smoke; shift ;;
-*) echo "usage: $0 [--cache-dir|--smoke] [OUT]" >&2; exit 2 ;;
esac
out=${1:-build/guest/python.ext4}
if [ "$mode" = smoke ]; then
    smoke "$out"
    exit
fi
here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")
list=$here/../scripts/packages/python-image.list
suite=bookworm
include=python3,ca-certificates,curl,sudo
agent=${AIRLOCK_AGENT:-$(dirname "$out")/agent}
headroom=${PYTHON_IMAGE_HEADROOM:-30}
min_mb=${PYTHON_IMAGE_MIN_MB:-64}
epoch=${SOURCE_DATE_EPOCH:-1672531200}
# Fixed UUID and hash seed: the same tree gives the same filesystem layout.
uuid=6c0e8f52-3a7d-4b19-9e24-5f1a8d3c7b60
export E2FSPROGS_FAKE_TIME="$epoch"

# The mirror: what apt on this machine uses for bookworm main.
mirror=$("$here/../scripts/debian-mirror" "$suite")
# Its snapshot identity: the apt sources entries naming it (the snapshot
# comment changes when the archive date does).
sources=$(grep -ls -e "$mirror\$" -e "$mirror/\$" -e "$mirror " \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
    /etc/apt/sources.list.d/*.sources 2>/dev/null || true)

root=${AIRLOCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/airlock}
hash=$( {
    cat "$self" "$list"
    echo "mirror $mirror suite $suite include $include"
    for f in $sources; do echo "== $f"; cat "$f"; done
} | sha256sum | cut -d' ' -f1)
cache=$root/python-image-$hash
if [ "$mode" = print ]; then
    echo "$cache"
    exit 0
fi

if [ "$(id -u)" != 0 ]; then
    echo "build-python-image: needs root (debootstrap, and the tree's root-only files); run as root or with sudo" >&2
    exit 1
fi
for tool in debootstrap mke2fs e2fsck debugfs dumpe2fs; do
    command -v "$tool" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
    command -v "$tool" >/dev/null 2>&1 || {
        echo "build-python-image: $tool not found (scripts/packages/python-image.list; run scripts/install-deps)" >&2
        exit 1
    }
done
busybox=${BUSYBOX:-/bin/busybox}
if [ ! -x "$busybox" ] || readelf -l "$busybox" | grep -q 'program interpreter'; then
    echo "build-python-image: $busybox is missing or dynamically linked (Debian package busybox-static)" >&2
    exit 1
fi

mb() { du -s --block-size=1M "$1" | cut -f1; }
now() { date +%s.%N; }
secs() { printf '%.1f' "$(echo "$(now) - $1" | bc)"; }

work=""
scratch=""
trap 'rm -rf "$work" "$scratch"' EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$root"

# --- the cached tree ---------------------------------------------------------
if [ -d "$cache/rootfs" ] && [ -f "$cache/sizes" ]; then
    echo "build-python-image: using cached $cache" >&2
else
    for d in "$root"/python-image-build.*; do
        [ -d "$d" ] || continue
        pid=${d##*.}
        kill -0 "$pid" 2>/dev/null || rm -rf "$d"
    done
    work=$root/python-image-build.$hash.$$
    rm -rf "$work"
    mkdir -p "$work"
    tree=$work/rootfs
    log=$work/build.log
    echo "build-python-image: debootstrap --variant=minbase --include=$include $suite from $mirror (about a minute; log: $log)" >&2
    t=$(now)
    if ! debootstrap --variant=minbase --include="$include" "$suite" "$tree" "$mirror" >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        echo "build-python-image: debootstrap failed (log above)" >&2
        exit 1
    fi
    t_boot=$(secs "$t")
    before=$(mb "$tree")

    # Strip what a guest image never reads.
    t=$(now)
    [ ! -L "$tree/var" ] || { echo "build-python-image: $tree/var is a symlink" >&2; exit 1; }
    rm -rf "$tree"/var/cache/apt/*.bin "$tree"/var/cache/apt/archives/*.deb \
        "$tree"/var/cache/apt/archives/partial/* \
        "$tree"/var/lib/apt/lists/*_* "$tree"/var/lib/apt/lists/partial/* \
        "$tree"/var/cache/debconf/*-old "$tree"/var/lib/dpkg/*-old \
        "$tree"/usr/share/doc/* "$tree"/usr/share/man/* "$tree"/usr/share/info/* \
        "$tree"/usr/share/locale/* "$tree"/usr/share/i18n \
        "$tree"/usr/share/lintian "$tree"/usr/share/linda
    # Compiled locales: only C.UTF-8 (glibc's built-in C needs nothing).
    for l in "$tree"/usr/lib/locale/*; do
        case ${l##*/} in C.utf8|C.UTF-8) ;; *) rm -rf "$l" ;; esac
    done
    # Logs of the bootstrap itself; the host's name and resolver.
    find "$tree/var/log" -type f -delete
    rm -f "$tree/etc/resolv.conf"
    echo airlock >"$tree/etc/hostname"
    # An unprivileged account as E2B's templates have ("user", uid 1000,
    # /home/user): the E2B layer's default user (docs/e2b.md), and a
    # non-root user for anyone's commands ("user": "1000").
    chroot "$tree" useradd --create-home --uid 1000 --user-group --shell /bin/bash user
    # ... who may become root without a password, as there: the VM is the
    # boundary, and root in it is what /v1's commands run as anyway.
    echo 'user ALL=(ALL:ALL) NOPASSWD: ALL' >"$tree/etc/sudoers.d/user"
    chmod 440 "$tree/etc/sudoers.d/user"
    # Keep them out if someone apt-installs into the image later.
    mkdir -p "$tree/etc/dpkg/dpkg.cfg.d"
    cat >"$tree/etc/dpkg/dpkg.cfg.d/airlock-nodoc" <<'EOF'
# airlock guest image: no docs, manuals or translations
path-exclude /usr/share/doc/*
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
EOF
    t_strip=$(secs "$t")
    after=$(mb "$tree")
    pyver=$(chroot "$tree" python3 --version 2>&1 || echo "python3: not runnable")
    {
        echo "debootstrap_s=$t_boot"
        echo "strip_s=$t_strip"
        echo "before_mb=$before"
        echo "after_mb=$after"
        echo "python=$pyver"
        echo "mirror=$mirror"
    } >"$work/sizes"
    echo "build-python-image: debootstrap $t_boot s ($before MB), strip $t_strip s ($after MB), $pyver" >&2
    # Another builder may have won the race: keep its tree.
    mv -T "$work" "$cache" 2>/dev/null || [ -f "$cache/sizes" ]
fi

# --- the image ---------------------------------------------------------------
# A private copy to add init, busybox and the agent to: hard links into the
# cache when it can (same filesystem), so nothing is copied; every file added
# below is new (rm first), so the cached tree is never written through a link.
t=$(now)
for d in "$root"/python-image-stage.*; do
    [ -d "$d" ] || continue
    kill -0 "${d##*.}" 2>/dev/null || rm -rf "$d"
done
scratch=$root/python-image-stage.$$
rm -rf "$scratch"
mkdir -p "$scratch"
stage=$scratch/rootfs
cp -al "$cache/rootfs" "$stage" 2>/dev/null || { rm -rf "$stage"; cp -a "$cache/rootfs" "$stage"; }

# Host-side path of a guest path, following the tree's own symlinks (merged
# /usr: /bin -> usr/bin) inside the tree, never out to the host.
inside() {
    case $1 in
    /bin/*|/sbin/*|/lib/*)
        top=${1#/}; top=${top%%/*}
        if [ -L "$stage/$top" ]; then
            l=$(readlink "$stage/$top")
            echo "$stage/${l#/}/${1#/$top/}"
            return
        fi ;;
    esac
    echo "$stage$1"
}
put() {  # put SRC GUEST-PATH MODE
    p=$(inside "$2")
    mkdir -p "$(dirname "$p")"
    rm -f "$p"
    cp "$1" "$p"
    chown 0:0 "$p"
    chmod "$3" "$p"
    touch -h -d "@$epoch" "$p" "$(dirname "$p")"
}
put "$busybox" /bin/busybox 0755
# guest/init under busybox's own sh: its applets (mount, cttyhack, reboot, ...)
# win over $PATH, so it behaves as in the busybox images, while python3 and
# the rest of Debian are found on $PATH.
sed '1s|^#!.*|#!/bin/busybox sh|' "$here/init" >"$scratch/init"
put "$scratch/init" /sbin/init 0755
touch -h -d "@$epoch" "$stage"
if [ -f "$agent" ]; then
    put "$agent" /sbin/airlock-agent 0755
    echo "build-python-image: installed $agent as /sbin/airlock-agent" >&2
fi

content_kb=$(du -sk "$stage" | cut -f1)
files=$(find "$stage" | wc -l)
# Inodes: the files plus the headroom, at least one per 16 KiB of content.
inodes=$(( files * (100 + headroom) / 100 + 1024 ))
[ "$inodes" -ge $((content_kb / 16)) ] || inodes=$((content_kb / 16))
# Size: the content, $headroom% of it free for the guest to write, and ext4's
# own overhead (a 4 MiB journal, 256 bytes of inode table per inode, bitmaps
# and descriptors), rounded up to a MiB. No blocks reserved for root: the
# guest is root. mke2fs's free count is checked below; the estimate is grown
# by any shortfall.
want_free_kb=$(( content_kb * headroom / 100 ))
size_mb=$(( ((content_kb + want_free_kb + 4096 + inodes / 4) * 102 / 100 + 1023) / 1024 ))
[ "$size_mb" -ge "$min_mb" ] || size_mb=$min_mb
t_stage=$(secs "$t")
mkdir -p "$(dirname "$out")"
img=$out.tmp.$$
trap 'rm -rf "$work" "$scratch" "$img"' EXIT
tm=$(now)
tries=0
while :; do
    rm -f "$img"
    truncate -s "${size_mb}M" "$img"
    mke2fs -q -F -t ext4 -b 4096 -N "$inodes" -m 0 -J size=4 -L airlock-python -U "$uuid" \
        -E "root_owner=0:0,hash_seed=$uuid" -d "$stage" "$img" "${size_mb}M"
    free_kb=$(( $(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Free blocks: *//p') * 4 ))
    [ "$free_kb" -lt "$want_free_kb" ] || break
    tries=$((tries + 1))
    [ "$tries" -lt 3 ] || { echo "build-python-image: $size_mb MiB leaves only $((free_kb / 1024)) MiB free" >&2; exit 1; }
    size_mb=$(( size_mb + (want_free_kb - free_kb + 1023) / 1024 ))
done
t_mke2fs=$(secs "$tm")
tm=$(now)
# mke2fs copies atime and ctime from the staging tree, where they are "when
# it was built or last read": reset both, so the same tree gives the same
# image byte for byte (as guest/build-rootfs.sh does for ctime).
(cd "$stage" && find . -printf '/%P\n') | LC_ALL=C sort |
    awk -v t="$epoch" '{ printf "sif \"%s\" ctime @%s\nsif \"%s\" atime @%s\n", $0, t, $0, t }' \
    >"$scratch/times.debugfs"
debugfs -w -f "$scratch/times.debugfs" "$img" >"$scratch/debugfs.log" 2>&1
# debugfs exits 0 even when a command fails; its errors name the command.
if grep -v -e '^debugfs [0-9]' -e '^debugfs: sif ' "$scratch/debugfs.log" | grep -q .; then
    head -n 20 "$scratch/debugfs.log" >&2
    echo "build-python-image: debugfs could not reset times" >&2
    exit 1
fi
e2fsck -fn "$img" >"$scratch/fsck.log" 2>&1 || { cat "$scratch/fsck.log" >&2; exit 1; }
# Owners come from the tree (debootstrap ran as root); check they arrived.
for f in /usr/bin/python3 /sbin/init /bin/busybox; do
    o=$(debugfs -R "stat $(echo "$f" | sed 's|^/bin/|/usr/bin/|; s|^/sbin/|/usr/sbin/|')" "$img" 2>/dev/null |
        sed -n 's/.*User: *\([0-9]*\) *Group: *\([0-9]*\).*/\1:\2/p')
    [ "$o" = 0:0 ] || { echo "build-python-image: $f in the image is owned by '${o:-?}', not 0:0" >&2; exit 1; }
done
t_check=$(secs "$tm")
mv -f "$img" "$out"
echo "build-python-image: $out: $size_mb MiB for $((content_kb / 1024)) MB in $files files + $((free_kb / 1024)) MiB free; stage $t_stage s, mke2fs $t_mke2fs s, check $t_check s, image step $(secs "$t") s" >&2
