# A pod's named containers (protocol 15), sourced by tests/agent/run-tests:
# what runs without a VM.  The agent runs in a mount namespace of its own
# with a tmpfs on /run, so its records and the pod's volumes never touch
# this host's; a container here stays on the agent's root (serial ""),
# since root disks by serial need the VM (tests/boot/linux-pod).
if ! unshare --mount --pid --fork true 2>/dev/null; then
    skip "pod containers" "unshare --mount/--pid (root) does not work here"
elif cred_agent "mount -t tmpfs -o mode=0755 tmpfs /run"; then
    # The single container's path (no name), its /dev and /sys as before.
    run -u 0 --pidns new -- sh -c 'echo "pid=$$"; grep -E " /(dev|dev/pts|sys|proc) " /proc/mounts; ls /dev'
    check "an unnamed NEW: PID 1, its /proc, a tmpfs /dev with devpts, /sys read-only" \
        eval '[ "$rc" = 0 ] && grep -q "^pid=1$" "$T/out" && grep -q "^proc /proc proc " "$T/out" &&
              grep -q "^tmpfs /dev tmpfs " "$T/out" && grep -q " /dev/pts devpts " "$T/out" &&
              grep -q " /sys sysfs ro," "$T/out" && grep -q "^urandom$" "$T/out" && grep -q "^ptmx$" "$T/out"'
    expect_rc "an unnamed JOIN once its PID 1 ended: ESRCH" 126 -u 0 --pidns join -- true
    P=/run/airlock/pod/volumes/v
    timeout 60 "$CLIENT" "$S" -u 0 --pidns new --ctr p1 --bind "$P:$W/pv" -- \
        sh -c 'echo "pid=$$"; echo from-p1 >'"$W"'/pv/f; echo READY; exec sleep 50' >"$T/p1" 2>&1 &
    p1=$!
    for _ in $(seq 100); do grep -q READY "$T/p1" && break; sleep 0.05; done
    check "NEW names a container: PID 1 of its namespace, a missing bind source made ($(head -c 200 "$T/p1"))" \
        grep -q '^pid=1$' "$T/p1"
    run -u 0 --pidns join --ctr p1 -- sh -c 'cat '"$W"'/pv/f; ls /proc | grep -c "^[0-9]"; cat /proc/1/cmdline'
    check "JOIN p1: its bind and its PID namespace ($(tr '\n\0' '  ' <"$T/out"))" \
        eval '[ "$rc" = 0 ] && grep -q "^from-p1$" "$T/out" && grep -q "sleep" "$T/out"'
    run -u 0 -- sh -c "cat $P/f; stat -c %a $P; ls /run/airlock/containers; cat /run/airlock/containers/p1/pid"
    check "the volume is the agent's folder (0777), the record names p1's PID 1 and namespace" \
        eval '[ "$rc" = 0 ] && grep -q "^from-p1$" "$T/out" && grep -q "^777$" "$T/out" &&
              grep -q "^p1$" "$T/out" && grep -Eq "^[0-9]+ [0-9]+$" "$T/out"'
    expect_rc "a second NEW of p1 is EEXIST" 126 -u 0 --pidns new --ctr p1 -- true
    grep -q "File exists (step 10)" "$T/err" || nok "EEXIST's message" "$(cat "$T/err")"
    expect_rc "JOIN of an unknown container is ESRCH" 126 -u 0 --pidns join --ctr nosuch -- true
    expect_rc "a bind target under /proc never leaves the client" 125 -u 0 --pidns new --ctr p2 \
        --bind "$P:/proc/x" -- true
    # Links that would steer a bind: a source through one (ELOOP), a
    # target an image's link leads into /proc (EPERM); neither leaves a
    # record behind.
    ln -s /proc/sys/kernel "$W/evil"
    run -u 0 -- ln -s /tmp /run/airlock/pod/volumes/link
    expect_rc "a bind source through a link is refused" 126 -u 0 --pidns new --ctr p3 \
        --bind /run/airlock/pod/volumes/link:"$W/x" -- true
    grep -q "Too many levels of symbolic links (step 10)" "$T/err" || nok "ELOOP's message" "$(cat "$T/err")"
    expect_rc "a bind target that a link leads into /proc is refused" 126 -u 0 --pidns new --ctr p3 \
        --bind "$P:$W/evil" -- true
    grep -q "Operation not permitted (step 10)" "$T/err" || nok "EPERM's message" "$(cat "$T/err")"
    run -u 0 -- ls /run/airlock/containers
    check "... and neither left a record" eval '[ "$rc" = 0 ] && [ "$(cat "$T/out")" = p1 ]'
    expect_rc "CONTAINER_END p1" 0 --end p1
    wait "$p1"
    check "... its PID 1 is killed (exit $?)" test "$?" = 137
    run -u 0 -- ls -A /run/airlock/containers
    check "... and its record removed" eval '[ "$rc" = 0 ] && [ ! -s "$T/out" ]'
    expect_rc "a JOIN after CONTAINER_END is ESRCH" 126 -u 0 --pidns join --ctr p1 -- true
    expect_rc "CONTAINER_END of an unknown container is ESRCH" 125 --end p1
    grep -q "could not end container p1: No such process" "$T/err" || nok "ESRCH's message" "$(cat "$T/err")"
    # raw: a CONTAINER_END whose name is not one, then the agent serves on
    printf 'ARLK'"$(printf '\\x%02x' "$((16#$V))")"'\0\x18\0\x04\0\0\0a/b\0' |
        timeout 10 "$CLIENT" "$S" --raw >"$T/raw" 2>/dev/null
    check "a CONTAINER_END naming a/b: READY, ERROR (EPROTO, op PROTO), close" \
        test "$(od -An -tx1 "$T/raw" | tr -d ' \n')" = "${READY_HEX}4c4b${V}008600080000004700000000000000"
    expect_rc "the agent still serves" 0 -- true
    stop_agent
else
    nok "pod containers: an agent in a mount namespace" "$(tail -3 "$T/agent.log")"
fi
