# WATCH (protocol 10) against the real agent on this host's inotify:
# sourced by tests/agent/run-tests while its agent serves $S (its CLIENT,
# T, check, ok, nok and AGENT_PID).  Each watch is agent-client --watch in
# the background, one line per event in a file; the checks compare whole
# sequences, so a missing, extra or misordered event fails.

# wstart NAME PATH [-r] [--stall MS]: a watch in the background ($WPID),
# its lines in $T/NAME, once it says it watches (10 s at most).
wstart() {
    local name=$1
    shift
    timeout 60 "$CLIENT" "$S" --watch "$@" >"$T/$name" 2>"$T/$name.err" &
    WPID=$!
    for _ in $(seq 200); do
        grep -q '^watching$' "$T/$name" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}
# wwait NAME REGEX: waits (10 s at most) for a line matching REGEX.
wwait() {
    for _ in $(seq 200); do
        grep -qE "$2" "$T/$1" && return 0
        sleep 0.05
    done
    return 1
}
# wlines NAME: what the watch printed after "watching", the watched
# folder's path shown as @.
wlines() {
    sed -e '1{/^watching$/d}' -e "s|$WD|@|g" "$T/$1"
}
# inotify_fds: how many inotify instances the agent's processes hold.
inotify_fds() {
    local n=0 p
    for p in "$AGENT_PID" $(pgrep -P "$AGENT_PID"); do
        n=$((n + $(ls -l "/proc/$p/fd" 2>/dev/null | grep -c 'anon_inode:inotify')))
    done
    echo "$n"
}

WD=$T/watched
mkdir -p "$WD"

# ---- a folder: each kind of change, a subfolder's files not seen, the end ----
if wstart w1 "$WD"; then
    (cd "$WD" && : >a && echo hi >>a && chmod 600 a && mv a b && mkdir d && echo x >d/f &&
        rm b && rm -r d && mv "$WD" "$WD.gone" && rm -r "$WD.gone")
    wwait w1 '^end$'
    wait "$WPID"
    rc=$?
    printf '%s\n' "create - @/a" "write - @/a" "chmod - @/a" "rename - @/a -> @/b" \
        "create d @/d" "remove - @/b" "remove d @/d" "rename d @" end >"$T/want"
    check "WATCH of a folder: create, write, chmod, rename, a subfolder and removals, in order; moving it away ends it (exit $rc; got: $(wlines w1 | tr '\n' '|'))" \
        eval 'wlines w1 | cmp -s - "$T/want" && [ "$rc" = 0 ]'
else
    nok "WATCH of a folder" "$(cat "$T/w1.err")"
fi

# ---- recursive: subfolders made later, moved in, renamed; the path removed ----
mkdir -p "$WD" "$T/outside/in/deeper"
echo o >"$T/outside/in/deeper/g"
if wstart w2 "$WD" -r; then
    (cd "$WD" && mkdir -p s/t && echo x >s/t/f && mv "$T/outside/in" s/in && mv s s2 &&
        echo y >s2/t/f2)
    wwait w2 "create - @/s2/t/f2"
    rm -r "$WD"
    wwait w2 '^end$'
    wait "$WPID"
    rc=$?
    # mkdir -p, then the file: their creates come from the kernel or from
    # reading each new folder, so a create may come twice; each is there.
    # A file written before its folder's watch was added is reported as
    # created only (the folder's read found it whole): its write may not come.
    got=$(wlines w2 | awk '!seen[$0]++' | grep -vx 'write - @/s/t/f' | tr '\n' '|')
    want="create d @/s|create d @/s/t|create - @/s/t/f|create d @/s/in|create d @/s/in/deeper|create - @/s/in/deeper/g|rename d @/s -> @/s2|create - @/s2/t/f2|write - @/s2/t/f2|"
    check "a recursive WATCH sees a new subfolder's files, a folder moved in with what it holds, and a renamed folder's files under its new name (got: $got)" \
        test "$(printf '%s' "$got" | sed 's/remove.*//')" = "$want"
    check "... and rm -r of the path: its files and folders removed, deepest first, the path last, then the end (exit $rc)" \
        eval '[ "$rc" = 0 ] && wlines w2 | tail -1 | grep -qx end &&
              wlines w2 | grep "^remove" | tail -1 | grep -qx "remove d @" &&
              [ "$(wlines w2 | grep -c "^remove - @/s2/t/f2$")" = 1 ]'
else
    nok "a recursive WATCH" "$(cat "$T/w2.err")"
fi

# ---- folders made and renamed before the agent reads a single event: the
# agent's process is stopped (SIGSTOP) meanwhile, so every event waits in
# the kernel's queue and the folders are gone from their first names when
# it looks: what they hold is still reported, under the names they have ----
mkdir -p "$WD"
if wstart w7 "$WD" -r; then
    conn=$(pgrep -n -P "$AGENT_PID")
    kill -STOP "$conn"
    (cd "$WD" && mkdir -p s/t && echo x >s/t/f && mv s s2 && echo y >s2/t/g)
    kill -CONT "$conn"
    wwait w7 "create - @?.*/s2/t/g$"
    mkdir "$WD/a"
    wwait w7 "create d .*/a$"
    kill -STOP "$conn"
    (cd "$WD" && mkdir a/b && echo x >a/b/f && mv a c && echo y >c/b/g)
    kill -CONT "$conn"
    wwait w7 "create - .*/c/b/g$"
    kill "$WPID"
    wait "$WPID" 2>/dev/null
    got=$(wlines w7 | tr '\n' '|')
    want="create d @/s|rename d @/s -> @/s2|create d @/s2/t|create - @/s2/t/f|create - @/s2/t/g|create d @/a|create d @/a/b|rename d @/a -> @/c|create - @/c/b/f|create - @/c/b/g|"
    check "folders made, filled and renamed before the agent read any of it: their files reported under the new names (got $got)" \
        test "$got" = "$want"
else
    nok "folders made and renamed before the agent reads" "$(cat "$T/w7.err")"
fi
rm -rf "$WD"

# ---- a file ----
echo one >"$T/file"
if wstart w3 "$T/file"; then
    echo two >>"$T/file"
    chmod 640 "$T/file"
    wwait w3 '^chmod'
    rm "$T/file"
    wwait w3 '^end$'
    wait "$WPID"
    rc=$?
    got=$(sed -e '1d' -e "s|$T/file|@|g" "$T/w3" | tr '\n' '|')
    # rm changes the link count (IN_ATTRIB: one more chmod) before the file goes
    check "WATCH of a file: write, chmod, then its removal ends it (exit $rc; got $got)" \
        eval '[ "$rc" = 0 ] && { [ "$got" = "write - @|chmod - @|remove - @|end|" ] ||
                                 [ "$got" = "write - @|chmod - @|chmod - @|remove - @|end|" ]; }'
else
    nok "WATCH of a file" "$(cat "$T/w3.err")"
fi

# ---- no such path ----
run --watch "$T/no/such"
check "WATCH of a path that does not exist: ERROR ENOENT, named (exit $rc)" \
    test "$rc" = 125 -a "$(cat "$T/err")" = "agent-client: $T/no/such: No such file or directory"

# ---- the host hangs up: the agent drops its inotify fd ----
mkdir -p "$WD"
before=$(inotify_fds)
if wstart w4 "$WD" -r; then
    during=$(inotify_fds)
    kill "$WPID"
    wait "$WPID" 2>/dev/null
    for _ in $(seq 100); do
        [ "$(inotify_fds)" = "$before" ] && break
        sleep 0.05
    done
    after=$(inotify_fds)
    check "a host that hangs up ends the watch: the agent's inotify instances $before, $during while watching, $after after" \
        test "$during" = $((before + 1)) -a "$after" = "$before"
else
    nok "a host that hangs up ends the watch" "$(cat "$T/w4.err")"
fi
expect_rc "... and the agent still serves" 0 -- true

# ---- a host that stops reading: the loss is reported, never silent ----
mkdir -p "$WD/flood"
if wstart w5 "$WD/flood" --stall 6000; then
    : >"$WD/flood/first"
    wwait w5 'create - .*/first$' # read: the client stalls now
    (cd "$WD/flood" && seq 1 30000 | sed 's/^/f/' | xargs touch)
    sleep 7 # the stall is over
    : >"$WD/flood/after"
    wwait w5 'create - .*/after$'
    kill "$WPID"
    wait "$WPID" 2>/dev/null
    n=$(grep -c '^create - .*/f[0-9]*$' "$T/w5")
    check "30000 files made while the host did not read: an overflow is reported ($n of 30000 creates came), and events after it still come" \
        eval 'grep -qx "overflow - -" "$T/w5" && grep -q "create - .*/after$" "$T/w5"'
else
    nok "a host that stops reading" "$(cat "$T/w5.err")"
fi
# ... and the path removed while it still does not read: the removal is
# the last event all the same (never dropped), then the end.
mkdir -p "$WD/flood2"
if wstart w6 "$WD/flood2" --stall 4000; then
    : >"$WD/flood2/first"
    wwait w6 'create - .*/first$'
    (cd "$WD/flood2" && seq 1 30000 | sed 's/^/f/' | xargs touch) && rm -rf "$WD/flood2"
    wwait w6 '^end$'
    wait "$WPID"
    rc=$?
    check "a path removed while the host did not read: an overflow, then its removal last, then the end (exit $rc; last: $(tail -2 "$T/w6" | tr '\n' '|'))" \
        eval '[ "$rc" = 0 ] && grep -qx "overflow - -" "$T/w6" &&
              [ "$(tail -2 "$T/w6" | tr "\n" "|")" = "remove d $WD/flood2|end|" ]'
else
    nok "a path removed while the host did not read" "$(cat "$T/w6.err")"
fi
rm -rf "$WD"
