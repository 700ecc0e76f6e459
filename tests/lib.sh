# Shared helpers for airlock's shell tests.  Source it, call the check
# functions, end with `finish NAME`, which prints one line per skipped check,
# "SKIP: NAME: CHECK: WHY", then "NAME: N passed, N failed, N skipped", and
# returns non-zero if anything failed (tests/run-all counts these lines).
#
# Each check runs a command, captures its stdout, stderr and status, and
# asserts on them.  A failing check prints what it saw.  A check that cannot
# run here is `skip`ped, with the reason: never counted as passed.

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
AIRLOCK=${AIRLOCK:-$TOP/build/airlock}
PASSED=0
FAILED=0
SKIPPED=0
SKIPS=()
T_OUT=""
T_ERR=""
T_RC=0
T_TMP=$(mktemp -d /tmp/airlock-test.XXXXXX)
trap 'rm -rf "$T_TMP"' EXIT

# The lab's measured slowdown (LAB_SLOWDOWN, tests/lab/slowdown.sh): a test's
# bounds on slow work are written for an idle host and stretched by it with
# `lab_scaled SECONDS`.
. "$TOP/tests/lab/slowdown.sh"

# bounded CMD...: runs CMD under the harness's own bound (T_TIMEOUT, 30 s
# unless set, stretched by LAB_SLOWDOWN: TERM, then KILL 5 s later) and
# sets T_RC.  When the bound
# ends CMD, timeout(1) says 124 (or 137 after the KILL), which are also
# statuses CMD itself may have to return (airlock run --timeout gives 124):
# so then T_RC is not a number but says what happened, and no expected
# status can match it.  The bound fired iff CMD ran for the whole bound.
bounded() {
    local secs t0 t1
    secs=$(lab_scaled "${T_TIMEOUT:-30}")
    t0=$(date +%s%N)
    timeout --kill-after=5 "$secs" "$@"
    T_RC=$?
    t1=$(date +%s%N)
    if { [ "$T_RC" = 124 ] || [ "$T_RC" = 137 ]; } && [ $(((t1 - t0) / 1000000)) -ge $((secs * 1000)) ]; then
        T_RC="none: the test's own ${secs} s bound (T_TIMEOUT) ended it (timeout(1) said $T_RC)"
    fi
}

# run CMD...: runs it (bounded), keeps output and status.
run() {
    bounded "$@" >"$T_TMP/out" 2>"$T_TMP/err" </dev/null
    T_OUT=$(cat "$T_TMP/out")
    T_ERR=$(cat "$T_TMP/err")
}

# run_stdin INPUT CMD...: like run, with INPUT on stdin (a pipe).
run_stdin() {
    local input=$1
    shift
    bounded "$@" < <(printf '%s' "$input") >"$T_TMP/out" 2>"$T_TMP/err"
    T_OUT=$(cat "$T_TMP/out")
    T_ERR=$(cat "$T_TMP/err")
}

# run_interactive WAIT INPUT CMD...: like run, but sends INPUT on stdin only
# once stdout matches the extended regex WAIT (a prompt), the way a person
# types only after seeing one.  A serial console drops what arrives before
# the guest's tty is listening.
run_interactive() {
    local wait=$1 input=$2 fd i=0
    shift 2
    rm -f "$T_TMP/in.fifo" "$T_TMP/rc" && mkfifo "$T_TMP/in.fifo"
    { bounded "$@" <"$T_TMP/in.fifo" >"$T_TMP/out" 2>"$T_TMP/err"; printf '%s' "$T_RC" >"$T_TMP/rc"; } &
    local pid=$!
    exec {fd}>"$T_TMP/in.fifo"
    while ! grep -Eq -- "$wait" "$T_TMP/out" && kill -0 "$pid" 2>/dev/null; do
        sleep 0.2
        i=$((i + 1))
        [ "$i" -lt $(($(lab_scaled "${T_TIMEOUT:-30}") * 5)) ] || break
    done
    printf '%s' "$input" >&"$fd"
    exec {fd}>&-
    wait "$pid"
    T_RC=$(cat "$T_TMP/rc")
    T_OUT=$(cat "$T_TMP/out")
    T_ERR=$(cat "$T_TMP/err")
}

_fail() {
    FAILED=$((FAILED + 1))
    echo "not ok - $1: $2"
    echo "    status: $T_RC"
    echo "    stdout: $(printf '%s' "$T_OUT" | tail -c 600)"
    echo "    stderr: $(printf '%s' "$T_ERR" | tail -c 600)"
}

_pass() {
    PASSED=$((PASSED + 1))
    echo "ok - $1"
}

# expect NAME STATUS [--out REGEX]... [--err REGEX]... [--no-out REGEX]... [--no-err REGEX]...
# Asserts on the last run: exit status, and extended regexes that stdout or
# stderr must (or must not) match.  For status 125 the error must be one line
# (warnings, "airlock: warning: ...", are not part of it).
expect() {
    local name=$1 want=$2
    shift 2
    if [ "$T_RC" != "$want" ]; then
        _fail "$name" "exit status $T_RC, want $want"
        return
    fi
    while [ $# -gt 0 ]; do
        case $1 in
        --out) printf '%s' "$T_OUT" | grep -Eq -- "$2" || { _fail "$name" "stdout lacks /$2/"; return; } ;;
        --err) printf '%s' "$T_ERR" | grep -Eq -- "$2" || { _fail "$name" "stderr lacks /$2/"; return; } ;;
        --no-out) printf '%s' "$T_OUT" | grep -Eq -- "$2" && { _fail "$name" "stdout has /$2/"; return; } ;;
        --no-err) printf '%s' "$T_ERR" | grep -Eq -- "$2" && { _fail "$name" "stderr has /$2/"; return; } ;;
        *) _fail "$name" "bad expect argument $1"; return ;;
        esac
        shift 2
    done
    if [ "$want" = 125 ] && [ "$(printf '%s\n' "$T_ERR" | grep -v '^airlock: warning: ' | grep -c .)" != 1 ]; then
        _fail "$name" "error is not exactly one line"
        return
    fi
    _pass "$name"
}

# skip NAME WHY: the check NAME cannot run here (WHY says what is missing).
# It is reported as skipped, by finish too, and never counted as passed.
skip() {
    SKIPPED=$((SKIPPED + 1))
    SKIPS+=("$1: $2")
    echo "skip - $1: $2"
}

finish() {
    local s
    for s in "${SKIPS[@]}"; do
        echo "SKIP: $1: $s"
    done
    echo "$1: $PASSED passed, $FAILED failed, $SKIPPED skipped"
    [ "$FAILED" = 0 ]
}
