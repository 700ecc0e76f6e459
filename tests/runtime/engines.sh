# shellcheck shell=bash disable=SC2034  # ENGINE_* are read by the tests
# tests/runtime/engines.sh: Podman, Docker (dockerd) and containerd (ctr),
# each with private, throw-away state, for the lab tests of an OCI runtime
# (tests/runtime/README.md).  Source it after tests/lib.sh, as root, where
# the engines may run: in L1 (tests/lab/run) or on a hardware-KVM host.
#
#   engines_init                 one tmpfs at $ENGINE_DIR for every engine's
#                                state (the cgroup $ENGINE_CG comes with the
#                                first engine); the EXIT trap, which keeps
#                                lib.sh's, tears everything down
#   engines_cgroup_check         0 if cgroup v2 is usable (mounted at
#                                /sys/fs/cgroup if nothing is there); else 1
#                                with the reason in $ENGINE_WHY
#   podman_setup / docker_setup / containerd_setup
#                                0 when that engine is ready; else 2 (it
#                                cannot run here: a missing tool, no root,
#                                no cgroup v2: the caller skips) or 1 (it
#                                failed), the reason in $ENGINE_WHY
#   make_busybox_image ENGINE... $ENGINE_IMAGE (a static busybox root) in
#                                each named engine (podman docker ctr); the
#                                tar is made once per run, each import once
#   containerd_cri_setup         a second containerd, with its CRI plugin on
#                                and the runtime handler airlock as
#                                docs/kubernetes.md configures it (kubelet's
#                                calls: tests/runtime/cri); eng-cri-ctr is
#                                ctr on it, in CRI's namespace k8s.io
#   containerd_cri_images        the busybox and pause images imported
#                                into it
#   eng_oci_tar NAME CMD TAR     the busybox root as an OCI layout tar of
#                                image NAME whose Cmd is CMD (a JSON array)
#
# Each setup writes a command into $ENGINE_DIR/bin (put first in PATH):
# programs, not functions, because tests/lib.sh's run bounds commands with
# timeout(1), and they work under script(1) too:
#   eng-podman ARGS...           podman on the private state (run and
#                                create get --cgroup-parent in our cgroup)
#   eng-docker ARGS...           the docker client (/usr/bin/docker) on the
#                                test's own dockerd
#   eng-ctr ARGS...              ctr on the test's own containerd
#   eng-ctr-run [OPTS] ID CMD... ctr run of $ENGINE_IMAGE with the runtime
#                                under test; OPTS as --opt or --opt=VALUE
#                                (--env=K=V, --cwd=/tmp), one word each
#
# The OCI runtime every engine uses is $AIRLOCK_ENGINE_RUNTIME (default
# /usr/bin/crun; later build/airlock-runtime; AIRLOCK_* variables pass
# into the lab): podman --runtime PATH, dockerd --add-runtime
# $ENGINE_RUNTIME_NAME=PATH with docker run --runtime=$ENGINE_RUNTIME_NAME,
# ctr run --runc-binary PATH.  PATH is $ENGINE_RT, a wrapper of the same
# name that appends each call (time, the calling process, argv) to
# $ENGINE_RUNTIME_LOG ($AIRLOCK_ENGINE_RUNTIME_LOG, default
# $ENGINE_DIR/runtime.log), keeps each bundle's config.json in
# $ENGINE_RUNTIME_LOG.d/, and execs the runtime: eng_runtime_calls counts
# the calls, so a test can tell the runtime under test was used.  (In the
# lab, a log under $LAB_SCRATCH with LAB_KEEP=1 outlives the run.)
#
# Nothing outside $ENGINE_DIR and $ENGINE_CG is used: no systemd (cgroupfs
# cgroup managers, file event logs), no network (podman and docker
# containers get none; dockerd makes no bridge and no iptables rules), no
# registry (images are imported from a tar made here).  Except on request:
# with ENGINE_DOCKER_NETWORK=bridge dockerd has Docker's default network
# (docker0, iptables, docker-proxy), and `eng-podman run --network bridge`
# gets Podman's (CNI): both change the host's network (engines-ports).

ENGINE_RUNTIME=${AIRLOCK_ENGINE_RUNTIME:-/usr/bin/crun}
ENGINE_RUNTIME_LOG=${AIRLOCK_ENGINE_RUNTIME_LOG:-}
ENGINE_RUNTIME_NAME=${ENGINE_RUNTIME_NAME:-under-test}
ENGINE_IMAGE=${ENGINE_IMAGE:-localhost/airlock-busybox:latest}
ENGINE_DOCKER=${ENGINE_DOCKER:-/usr/bin/docker}   # /usr/local/bin/docker is another client
ENGINE_DOCKER_NETWORK=${ENGINE_DOCKER_NETWORK:-none}  # none, or bridge (docker_setup)
ENGINE_DIR=
ENGINE_CG=
ENGINE_WHY=
ENGINE_RT=        # what the engines are given: $ENGINE_RUNTIME or its logging wrapper
_eng_dockerd_pid=
_eng_containerd_pid=
_eng_podman_ready=
_eng_docker_ready=
_eng_ctr_ready=
_eng_imported=" "

# _eng_ms: milliseconds since the epoch (for the timings the tests print).
_eng_ms() { echo $(($(date +%s%N) / 1000000)); }
_q() { printf %q "$1"; }

engines_init() {
    [ "$(id -u)" = 0 ] || { ENGINE_WHY="needs root"; return 2; }
    ENGINE_DIR=$(mktemp -d /tmp/airlock-engines.XXXXXX) || return 1
    trap 'engines_cleanup; rm -rf "$T_TMP"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    # The L1 root is an overlay (upper: tmpfs) over 9p; host /tmp and
    # $LAB_SCRATCH are 9p: none of them takes the overlay mounts (upper
    # dirs, whiteouts, xattrs) the storage drivers make.  A fresh tmpfs does.
    mount -t tmpfs -o mode=0700,size=1g airlock-engines "$ENGINE_DIR" || {
        ENGINE_WHY="cannot mount a tmpfs on $ENGINE_DIR"
        rmdir "$ENGINE_DIR"
        ENGINE_DIR=
        return 1
    }
    mkdir -p "$ENGINE_DIR"/{image,podman,docker,containerd,bin}
    PATH=$ENGINE_DIR/bin:$PATH
    # The engines call the runtime through a wrapper that logs each call
    # (so a test can tell the runtime under test was used) and execs it.
    # Named as the runtime is: podman picks a runtime's quirks by name.
    [ -n "$ENGINE_RUNTIME_LOG" ] || ENGINE_RUNTIME_LOG=$ENGINE_DIR/runtime.log
    mkdir -p "$ENGINE_DIR/trace" "$ENGINE_RUNTIME_LOG.d"
    : >>"$ENGINE_RUNTIME_LOG"
    ENGINE_RT=$ENGINE_DIR/trace/$(basename "$ENGINE_RUNTIME")
    cat >"$ENGINE_RT" <<EOF
#!/bin/bash
# Logs this invocation, keeps the bundle's config.json, execs the runtime
# (tests/runtime/engines.sh).
log=$(_q "$ENGINE_RUNTIME_LOG")
n=\$(date +%s.%N)
{ printf '%s %s(%s):' "\$n" "\$(cat /proc/\$PPID/comm 2>/dev/null)" "\$PPID"; printf ' %q' "\$@"; echo; } >>"\$log"
prev=
for a in "\$@"; do
    b=
    case \$prev in --bundle|-b) b=\$a ;; esac
    case \$a in --bundle=*) b=\${a#--bundle=} ;; esac
    [ -n "\$b" ] && [ -f "\$b/config.json" ] && cp "\$b/config.json" "\$log.d/\$n.config.json"
    prev=\$a
done
exec $(_q "$ENGINE_RUNTIME") "\$@"
EOF
    chmod 755 "$ENGINE_RT"
    return 0
}

# engines_cgroup_check: cgroup v2 at /sys/fs/cgroup (L1's /init mounts it;
# mounted here if nothing is), writable, and our own cgroup $ENGINE_CG in it.
engines_cgroup_check() {
    [ -n "$ENGINE_CG" ] && return 0
    local fs
    fs=$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)
    if [ "$fs" != cgroup2fs ]; then
        if mountpoint -q /sys/fs/cgroup; then
            ENGINE_WHY="/sys/fs/cgroup is $fs, not cgroup v2 (these tests set the engines up for v2 only)"
            return 2
        fi
        mount -t cgroup2 cgroup2 /sys/fs/cgroup || { ENGINE_WHY="cannot mount cgroup2 on /sys/fs/cgroup"; return 1; }
    fi
    local cg=/sys/fs/cgroup/airlock-engines.$$
    mkdir -p "$cg" || { ENGINE_WHY="cannot make the cgroup $cg"; return 1; }
    ENGINE_CG=$cg
    # Every controller the root offers, down to the engines' subtrees (a
    # cgroup that gives controllers to its children holds no processes
    # itself: the daemons live in the leaf $ENGINE_CG/daemons).
    local c ctl=""
    # shellcheck disable=SC2013  # words
    for c in $(cat /sys/fs/cgroup/cgroup.controllers); do ctl="$ctl +$c"; done
    echo "$ctl" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
    echo "$ctl" >"$cg/cgroup.subtree_control" 2>/dev/null
    mkdir -p "$cg/daemons" "$cg/podman" "$cg/docker" "$cg/ctr" "$cg/cri"
    return 0
}

# eng_runtime_calls [WORD]: how many runtime calls the log holds (with
# WORD among their arguments: create, start, exec, kill, delete...).
eng_runtime_calls() {
    if [ -n "${1:-}" ]; then
        grep -c -- " $1\( \|\$\)" "$ENGINE_RUNTIME_LOG"
    else
        grep -c . "$ENGINE_RUNTIME_LOG"
    fi
}

# eng_runtime_summary: the logged calls counted by subcommand, and by the
# program that made them (conmon, podman, containerd-shim...).
eng_runtime_summary() {
    awk '{
        caller = $2; sub(/\(.*/, "", caller); by[caller]++
        for (i = 3; i <= NF; i++)
            if ($i ~ /^(create|start|run|exec|kill|delete|state|features|ps|pause|resume|update|checkpoint|restore|events|spec|list|--version|version)$/) { sub_[$i]++; break }
    } END {
        printf "subcommands:"; for (k in sub_) printf " %s=%d", k, sub_[k]; printf "\n"
        printf "callers:"; for (k in by) printf " %s=%d", k, by[k]; printf "\n"
    }' "$ENGINE_RUNTIME_LOG"
}

# eng_cgroup_parent ENGINE: the cgroup (as the engines name it, from the
# cgroup root) under which that engine's containers go.
eng_cgroup_parent() { echo "/${ENGINE_CG#/sys/fs/cgroup/}/$1"; }

# _eng_in_cg CMD...: runs CMD in the background in $ENGINE_CG/daemons, so
# that cleanup finds it and everything it starts (shims, conmon).
_eng_in_cg() {
    (
        echo "$BASHPID" >"$ENGINE_CG/daemons/cgroup.procs"
        exec "$@"
    ) &
}

# _eng_daemon PIDVAR LOG SECONDS CLIENT CMD...: starts the daemon CMD in
# our cgroup (output into LOG, its pid into PIDVAR, for cleanup), then
# waits until `CLIENT version` answers.  1 with the reason if it does not.
_eng_daemon() {
    local pidvar=$1 log=$2 secs=$3 client=$4
    shift 4
    _eng_in_cg "$@" >"$log" 2>&1
    printf -v "$pidvar" %s "$!"
    _eng_wait "$secs" "$client" version && return 0
    ENGINE_WHY="$1 did not answer within $secs s: $(tail -n 3 "$log" | tr '\n' ' ')"
    return 1
}

_eng_need() {   # _eng_need TOOL...: 0, or 1 naming the first missing one
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null 2>&1 || { ENGINE_WHY="$t not found"; return 2; }
    done
}

_eng_wait() {   # _eng_wait SECONDS CMD...: until CMD succeeds, or 1
    local end=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.2
    done
}

# --- podman ---------------------------------------------------------------

podman_setup() {
    [ -n "$_eng_podman_ready" ] && return 0
    _eng_need podman conmon "$ENGINE_RUNTIME" || return
    engines_cgroup_check || return
    local d=$ENGINE_DIR/podman
    mkdir -p "$d"/{root,runroot,tmp,net,volumes}
    # Also keeps podman off /etc/containers, /var/lib/containers, /run/libpod
    # and /dev/shm (file locks, not shm ones).  The runtime's own state is
    # where it keeps it by default (crun: /run/crun): podman passes no
    # --root, and --runtime-flag root=DIR would not do, because the
    # `podman container cleanup` that conmon runs when a container exits
    # drops it (its `delete --force` then looks in the default place).
    cat >"$d/containers.conf" <<EOF
[containers]
netns = "none"
log_driver = "k8s-file"
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$d/events.log"
tmp_dir = "$d/tmp"
static_dir = "$d/root/libpod"
volume_path = "$d/volumes"
lock_type = "file"
[network]
network_config_dir = "$d/net"
EOF
    cat >"$d/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$d/root"
runroot = "$d/runroot"
EOF
    cat >"$d/registries.conf" <<EOF
unqualified-search-registries = []
short-name-mode = "disabled"
EOF
    cat >"$ENGINE_DIR/bin/eng-podman" <<EOF
#!/bin/sh
# podman on private state (tests/runtime/engines.sh)
case \$1 in
    run|create) sub=\$1; shift; set -- "\$sub" --cgroup-parent $(_q "$(eng_cgroup_parent podman)") "\$@" ;;
esac
CONTAINERS_CONF=$(_q "$d/containers.conf") CONTAINERS_STORAGE_CONF=$(_q "$d/storage.conf") \\
CONTAINERS_REGISTRIES_CONF=$(_q "$d/registries.conf") \\
exec podman --root $(_q "$d/root") --runroot $(_q "$d/runroot") --storage-driver overlay \\
    --cgroup-manager cgroupfs --events-backend file --tmpdir $(_q "$d/tmp") \\
    --runtime $(_q "$ENGINE_RT") "\$@"
EOF
    chmod 755 "$ENGINE_DIR/bin/eng-podman"
    _eng_podman_ready=1
    # The first call makes the store and the database.
    eng-podman info >"$d/info.out" 2>&1 || {
        ENGINE_WHY="podman info failed: $(tail -n 3 "$d/info.out" | tr '\n' ' ')"
        return 1
    }
}

# --- docker ---------------------------------------------------------------

docker_setup() {
    [ -n "$_eng_docker_ready" ] && return 0
    _eng_need dockerd containerd containerd-shim-runc-v2 "$ENGINE_DOCKER" "$ENGINE_RUNTIME" || return
    engines_cgroup_check || return
    local d=$ENGINE_DIR/docker
    mkdir -p "$d"/{data,exec,client}
    echo '{}' >"$d/daemon.json"
    cat >"$ENGINE_DIR/bin/eng-docker" <<EOF
#!/bin/sh
# the docker client on the test's own dockerd (tests/runtime/engines.sh)
DOCKER_HOST=unix://$(_q "$d/docker.sock") DOCKER_CONFIG=$(_q "$d/client") \\
exec $(_q "$ENGINE_DOCKER") "\$@"
EOF
    chmod 755 "$ENGINE_DIR/bin/eng-docker"
    # dockerd starts its own containerd (state under --exec-root, data
    # under --data-root).  No bridge, no iptables: our VMs have no NIC;
    # with ENGINE_DOCKER_NETWORK=bridge, Docker's defaults (a docker0
    # bridge, iptables DNAT and docker-proxy for -p), which change the
    # host's network: L1's, in the tests that ask for them.
    local net=(--iptables=false --ip-masq=false --ip-forward=false --bridge=none
               --userland-proxy=false)
    [ "$ENGINE_DOCKER_NETWORK" = bridge ] && net=(--iptables=true --userland-proxy=true)
    _eng_daemon _eng_dockerd_pid "$d/dockerd.log" 120 eng-docker \
        dockerd --config-file "$d/daemon.json" --data-root "$d/data" \
        --exec-root "$d/exec" --pidfile "$d/dockerd.pid" -H "unix://$d/docker.sock" \
        "${net[@]}" --storage-driver overlay2 \
        --exec-opt native.cgroupdriver=cgroupfs --cgroup-parent "$(eng_cgroup_parent docker)" \
        --add-runtime "$ENGINE_RUNTIME_NAME=$ENGINE_RT" || return 1
    _eng_docker_ready=1
}

# --- containerd -----------------------------------------------------------

containerd_setup() {
    [ -n "$_eng_ctr_ready" ] && return 0
    _eng_need containerd ctr containerd-shim-runc-v2 "$ENGINE_RUNTIME" || return
    engines_cgroup_check || return
    local d=$ENGINE_DIR/containerd
    mkdir -p "$d"/{root,state,opt,fifo,runc}
    cat >"$d/config.toml" <<EOF
version = 2
root = "$d/root"
state = "$d/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$d/containerd.sock"
[ttrpc]
  address = "$d/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/opt"
EOF
    cat >"$ENGINE_DIR/bin/eng-ctr" <<EOF
#!/bin/sh
# ctr on the test's own containerd (tests/runtime/engines.sh)
exec ctr --address $(_q "$d/containerd.sock") --namespace airlock-test "\$@"
EOF
    # The runtime's state goes under our own --runc-root (the shim's
    # default is /run/containerd/runc), the container in a cgroup of ours.
    cat >"$ENGINE_DIR/bin/eng-ctr-run" <<EOF
#!/bin/bash
# eng-ctr-run [CTR-RUN-OPTS...] ID CMD...: options first, one word each
# (--env=K=V); the first word not starting with '-' is the container's ID
# (tests/runtime/engines.sh)
opts=()
while [ \$# -gt 0 ] && [ "\${1#-}" != "\$1" ]; do opts+=("\$1"); shift; done
id=\$1
shift
exec $(_q "$ENGINE_DIR/bin/eng-ctr") run --runc-binary $(_q "$ENGINE_RT") \\
    --runc-root $(_q "$d/runc") --fifo-dir $(_q "$d/fifo") \\
    --cgroup $(_q "$(eng_cgroup_parent ctr)")/"\$id" \\
    "\${opts[@]}" $(_q "$ENGINE_IMAGE") "\$id" "\$@"
EOF
    chmod 755 "$ENGINE_DIR/bin/eng-ctr" "$ENGINE_DIR/bin/eng-ctr-run"
    _eng_daemon _eng_containerd_pid "$d/containerd.log" 60 eng-ctr \
        containerd --config "$d/config.toml" || return 1
    _eng_ctr_ready=1
}

# --- containerd's CRI plugin (kubelet's side) -----------------------------

# containerd_cri_setup: a containerd of its own (state under
# $ENGINE_DIR/cri) with the CRI plugin on, its socket $ENGINE_CRI_SOCK.
# The runtime handler $ENGINE_CRI_HANDLER is configured exactly as
# docs/kubernetes.md tells users to: runtime_type io.containerd.runc.v2,
# options BinaryName = $ENGINE_RUNTIME (the runtime itself, not the logging
# wrapper: the shim then keeps the runtime's state in its default place,
# /run/containerd/runc/k8s.io).  runc is the default handler, as on a node
# (CRI serves nothing without one).  The sandbox image ("pause") is
# $ENGINE_CRI_PAUSE, made here and imported by the test, so nothing is
# pulled; streaming (exec, attach, port-forward) on 127.0.0.1, a free port.
# CNI: the plugins in $ENGINE_CNI_BIN; a network (a bridge
# $ENGINE_CRI_BRIDGE, host-local addresses) only with ENGINE_CRI_CNI=1,
# which changes the host's network (the bridge goes at cleanup).
ENGINE_CRI_HANDLER=${ENGINE_CRI_HANDLER:-airlock}
ENGINE_CRI_PAUSE=${ENGINE_CRI_PAUSE:-localhost/airlock-pause:cri}
ENGINE_CRI_CNI=${ENGINE_CRI_CNI:-0}
ENGINE_CRI_BRIDGE=airlockcri0
ENGINE_CNI_BIN=${ENGINE_CNI_BIN:-/usr/lib/cni}
ENGINE_CRI_SOCK=
_eng_cri_pid=
_eng_cri_ready=
_eng_cri_bridge=
containerd_cri_setup() {
    [ -n "$_eng_cri_ready" ] && return 0
    _eng_need containerd ctr containerd-shim-runc-v2 runc "$ENGINE_RUNTIME" || return
    engines_cgroup_check || return
    local d=$ENGINE_DIR/cri
    mkdir -p "$d"/{root,state,opt,net.d,ipam}
    ENGINE_CRI_SOCK=$d/containerd.sock
    if [ "$ENGINE_CRI_CNI" = 1 ]; then
        [ -x "$ENGINE_CNI_BIN/bridge" ] && [ -x "$ENGINE_CNI_BIN/host-local" ] && [ -x "$ENGINE_CNI_BIN/loopback" ] ||
            { ENGINE_WHY="no CNI bridge, host-local and loopback plugins in $ENGINE_CNI_BIN (containernetworking-plugins)"; return 2; }
        cat >"$d/net.d/10-airlock-cri.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "airlock-cri", "plugins": [
  {"type": "bridge", "bridge": "$ENGINE_CRI_BRIDGE", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "dataDir": "$d/ipam",
            "ranges": [[{"subnet": "10.213.77.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
EOF
        _eng_cri_bridge=1
    fi
    cat >"$d/config.toml" <<EOF
version = 2
root = "$d/root"
state = "$d/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$ENGINE_CRI_SOCK"
[ttrpc]
  address = "$ENGINE_CRI_SOCK.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$ENGINE_CRI_PAUSE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.$ENGINE_CRI_HANDLER]
      runtime_type = "io.containerd.runc.v2"
      pod_annotations = ["io.airlock.*"]
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.$ENGINE_CRI_HANDLER.options]
        BinaryName = "$ENGINE_RUNTIME"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$ENGINE_CNI_BIN"
    conf_dir = "$d/net.d"
EOF
    cat >"$ENGINE_DIR/bin/eng-cri-ctr" <<EOF
#!/bin/sh
# ctr on the test's CRI containerd, in CRI's namespace (tests/runtime/engines.sh)
exec ctr --address $(_q "$ENGINE_CRI_SOCK") --namespace k8s.io "\$@"
EOF
    chmod 755 "$ENGINE_DIR/bin/eng-cri-ctr"
    _eng_daemon _eng_cri_pid "$d/containerd.log" 60 eng-cri-ctr \
        containerd --config "$d/config.toml" || return 1
    _eng_cri_ready=1
}

# containerd_cri_images: the busybox image and the pause image made here
# (the sandbox image: its process waits to be killed, as
# registry.k8s.io/pause does), imported into k8s.io; nothing is pulled.
containerd_cri_images() {
    local out pause='["sh","-c","trap \"exit 0\" TERM; while :; do sleep 3600; done"]'
    eng_oci_tar "$ENGINE_IMAGE" '["sh"]' "$ENGINE_DIR/image/busybox.tar" &&
        eng_oci_tar "$ENGINE_CRI_PAUSE" "$pause" "$ENGINE_DIR/image/pause.tar" || return 1
    out=$(eng-cri-ctr images import --snapshotter overlayfs "$ENGINE_DIR/image/busybox.tar" 2>&1 &&
          eng-cri-ctr images import --snapshotter overlayfs "$ENGINE_DIR/image/pause.tar" 2>&1) ||
        { ENGINE_WHY="ctr images import: $(tail -n 2 <<<"$out" | tr '\n' ' ')"; return 1; }
}

# --- the image ------------------------------------------------------------

# The root: /bin/busybox (static) and its applets as links, /etc/passwd and
# group (root, nobody, user 1000), and the usual empty mount points.
_eng_rootfs_tar() {
    local r=$ENGINE_DIR/image/root t=$ENGINE_DIR/image/rootfs.tar
    [ -s "$t" ] && return 0
    # Debian's busybox-static: the image has no libc.
    [ -x /bin/busybox ] || { ENGINE_WHY="/bin/busybox not found (busybox-static)"; return 2; }
    mkdir -p "$r"/{bin,etc,proc,sys,dev,tmp,root,home/user,run,var}
    chmod 1777 "$r/tmp"
    # busybox --install links every applet to the path it runs from
    # (/usr/bin/busybox on a merged-/usr host), in one process, not one ln
    # per applet (forks are slow in L1): the copy goes at that same path.
    local exe
    exe=$(readlink -f /bin/busybox)
    mkdir -p "$r$(dirname "$exe")"
    cp /bin/busybox "$r$exe"
    /bin/busybox --install -s "$r/bin" || { ENGINE_WHY="busybox --install failed"; return 1; }
    [ -e "$r/bin/busybox" ] || ln -s "$exe" "$r/bin/busybox"
    printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
    printf 'root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n' >"$r/etc/group"
    chown 1000:1000 "$r/home/user"
    tar -C "$r" --numeric-owner --sort=name --mtime=@0 -cf "$t.new" . && mv "$t.new" "$t"
}

# _eng_oci_tar: the same root as an OCI image layout in a tar (what ctr
# images import takes), named $ENGINE_IMAGE.
_eng_oci_tar() { eng_oci_tar "$ENGINE_IMAGE" '["sh"]' "$ENGINE_DIR/image/oci.tar"; }

# eng_oci_tar NAME CMD TAR: the busybox root as the OCI layout tar TAR of
# the image NAME, its config's Cmd the JSON array CMD (once per run).
eng_oci_tar() {
    local name=$1 cmd=$2 t=$3 o
    [ -s "$t" ] && return 0
    _eng_rootfs_tar || return 1
    o=$(mktemp -d "$ENGINE_DIR/image/oci.XXXXXX") || return 1
    mkdir -p "$o/blobs/sha256"
    local l c m ls cs ms
    l=$(sha256sum "$ENGINE_DIR/image/rootfs.tar" | cut -d' ' -f1)
    ls=$(stat -c %s "$ENGINE_DIR/image/rootfs.tar")
    cp "$ENGINE_DIR/image/rootfs.tar" "$o/blobs/sha256/$l"
    printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":%s},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$cmd" "$l" >"$o/config"
    c=$(sha256sum "$o/config" | cut -d' ' -f1) cs=$(stat -c %s "$o/config")
    mv "$o/config" "$o/blobs/sha256/$c"
    printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' "$c" "$cs" "$l" "$ls" >"$o/manifest"
    m=$(sha256sum "$o/manifest" | cut -d' ' -f1) ms=$(stat -c %s "$o/manifest")
    mv "$o/manifest" "$o/blobs/sha256/$m"
    printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' "$m" "$ms" "$name" "${name##*:}" >"$o/index.json"
    echo '{"imageLayoutVersion":"1.0.0"}' >"$o/oci-layout"
    tar -C "$o" -cf "$t.new" oci-layout index.json blobs && mv "$t.new" "$t" && rm -rf "$o"
}

# make_busybox_image ENGINE...: $ENGINE_IMAGE in each engine (podman,
# docker, ctr; set up first).  0, or 2 (no busybox) or 1 (an import
# failed) with the reason in $ENGINE_WHY.
make_busybox_image() {
    local e out
    _eng_rootfs_tar || return
    for e in "$@"; do
        case $_eng_imported in *" $e "*) continue ;; esac
        case $e in
            podman) out=$(eng-podman import --quiet "$ENGINE_DIR/image/rootfs.tar" "$ENGINE_IMAGE" 2>&1) ;;
            docker) out=$(eng-docker import "$ENGINE_DIR/image/rootfs.tar" "$ENGINE_IMAGE" 2>&1) ;;
            ctr) _eng_oci_tar || return 1
                 out=$(eng-ctr images import "$ENGINE_DIR/image/oci.tar" 2>&1) &&
                     out=$(eng-ctr images ls -q 2>&1) && [[ $'\n'$out$'\n' == *$'\n'$ENGINE_IMAGE$'\n'* ]] ;;
            *) ENGINE_WHY="make_busybox_image: unknown engine $e"; return 1 ;;
        esac || { ENGINE_WHY="$e could not import the image: $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"; return 1; }
        _eng_imported="$_eng_imported$e "
    done
}

# --- cleanup --------------------------------------------------------------

_eng_stop() {   # _eng_stop PID SECONDS: TERM, wait, KILL
    local pid=$1 end=$((SECONDS + $2))
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

# _eng_cg_kill DIR: every process in DIR and below killed, the cgroups removed.
_eng_cg_kill() {
    local cg=$1 sub p
    [ -d "$cg" ] || return 0
    for sub in "$cg"/*/; do
        [ -d "$sub" ] && _eng_cg_kill "${sub%/}"
    done
    for _ in $(seq 50); do
        if [ -e "$cg/cgroup.kill" ]; then
            echo 1 >"$cg/cgroup.kill" 2>/dev/null
        else
            # shellcheck disable=SC2013  # words
            for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
        fi
        [ -z "$(cat "$cg/cgroup.procs" 2>/dev/null)" ] && break
        sleep 0.1
    done
    rmdir "$cg" 2>/dev/null || echo "engines: could not remove the cgroup $cg" >&2
}

engines_cleanup() {
    [ -n "$ENGINE_DIR" ] || return 0
    local m
    if [ -n "$_eng_podman_ready" ]; then
        timeout 60 eng-podman rm --all --force --time 0 >/dev/null 2>&1
    fi
    # dockerd stops its containers and its own containerd.
    _eng_stop "$_eng_dockerd_pid" 30
    _eng_stop "$_eng_containerd_pid" 15
    _eng_stop "$_eng_cri_pid" 15
    # What is left (conmon, shims, container processes) dies with the cgroup.
    [ -n "$ENGINE_CG" ] && _eng_cg_kill "$ENGINE_CG"
    # The storage drivers' overlays, shm and the like, deepest first.
    # shellcheck disable=SC2013  # mount points have no spaces here
    for m in $(awk -v d="$ENGINE_DIR" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null ||
            echo "engines: could not unmount $m" >&2
    done
    rmdir "$ENGINE_DIR" 2>/dev/null || echo "engines: could not remove $ENGINE_DIR" >&2
    # The CRI network's bridge (CNI removes each pod's veth, not it).
    if [ -n "$_eng_cri_bridge" ] && ip link show "$ENGINE_CRI_BRIDGE" >/dev/null 2>&1; then
        ip link del "$ENGINE_CRI_BRIDGE" || echo "engines: could not remove the bridge $ENGINE_CRI_BRIDGE" >&2
    fi
    ENGINE_DIR='' ENGINE_CG=''
}
