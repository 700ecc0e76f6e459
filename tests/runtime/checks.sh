# shellcheck shell=bash
# tests/runtime/checks.sh: the timed checks the engine tests share
# (engines-smoke, engines-ports, engines-docker).  Source it after
# tests/lib.sh and tests/runtime/engines.sh.
#
#   check NAME STATUS [expect's --out/--err/--no-out/--no-err REGEX]... -- CMD...
#                    CMD run (tests/lib.sh's run), its time printed and
#                    kept, then lib.sh's expect
#   setup NAME CMD...  an engine's setup as a check of its own: passed,
#                    failed (its checks then skip, naming it in
#                    $SKIP_WHY), or skipped (cannot run here); 0 when
#                    the engine is ready
#   skip_all WHY NAME...
#   _took NAME MS    prints "time: NAME S s" and keeps it in TIMES, which
#                    the tests print as a summary at the end
TIMES=()
SKIP_WHY=

_took() {
    printf 'time: %s %d.%03d s\n' "$1" $(($2 / 1000)) $(($2 % 1000))
    TIMES+=("$1=$(printf '%d.%d' $(($2 / 1000)) $(($2 % 1000 / 100)))")
}

check() {
    local name=$1 want=$2 ex=() t0
    shift 2
    while [ "$1" != -- ]; do ex+=("$1"); shift; done
    shift
    t0=$(_eng_ms)
    run "$@"
    _took "$name" $(($(_eng_ms) - t0))
    expect "$name" "$want" "${ex[@]}"
}

setup() {
    local name=$1 t0 rc
    shift
    t0=$(_eng_ms)
    "$@"
    rc=$?
    _took "$name" $(($(_eng_ms) - t0))
    case $rc in
        0) _pass "$name"; return 0 ;;
        2) skip "$name" "$ENGINE_WHY"; SKIP_WHY="$ENGINE_WHY" ;;
        *) T_RC=$rc T_OUT="" T_ERR="$ENGINE_WHY"; _fail "$name" "$ENGINE_WHY"
           SKIP_WHY="$name failed" ;;
    esac
    return 1
}

skip_all() {
    local why=$1 n
    shift
    for n in "$@"; do skip "$n" "$why"; done
}
