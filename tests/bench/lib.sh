# Benchmark helpers: run two commands alternately N times each under
# build/bench/marktime and print min / median / max (ms) of process start ->
# marker, -> exit status known, -> every process gone (teardown done), and
# the median peak RSS (largest process).  Figures only: nothing here asserts
# a time.
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
MARKTIME=$TOP/build/bench/marktime
RUNS=${BENCH_RUNS:-10}

# The median of v[1..n], sorted: the middle value, or the mean of the two
# middle ones.  An awk function, the one definition every bench script's
# median goes through (stats, median).
MEDIAN_AWK='function median(v, n) { return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'

# median: the median of the numbers on stdin (one per line), as awk prints
# a number; "-" when there are none.
median() {
    sort -n | awk "$MEDIAN_AWK"' {v[NR] = $1} END { if (NR == 0) print "-"; else print median(v, NR) }'
}

# stats FILE [FORMAT]: "min median max" of the numbers in FILE (one per
# line), each printed with FORMAT (default %.1f); "- - -" when FILE is
# empty or missing.
stats() {
    [ -s "$1" ] || { echo "- - -"; return; }
    sort -n "$1" | awk -v f="${2:-%.1f}" "$MEDIAN_AWK"' {v[NR] = $1} END {
        printf f " " f " " f "\n", v[1], median(v, NR), v[NR] }'
}

# field NAME LINE: the value of NAME=... in a marktime line.
field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# fresh_memory: with BENCH_FRESH_MEMORY=1, a process writes to 60 % of the
# available memory and frees it, before each measured run.  In the lab
# (TCG), a guest whose memory lands on pages an earlier guest ran code
# from boots up to twice as slowly on the wall clock, and the page
# allocator hands the last guest's pages to the next one; after this the
# next guest gets pages L1 has just written, whichever monitor runs it
# (docs/benchmarks.md, "Why the lab's wall clock is bimodal").
fresh_memory() {
    [ "${BENCH_FRESH_MEMORY:-0}" = 1 ] || return 0
    python3 -c '
n = int(next(l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemAvailable:"))) * 1024 * 6 // 10
b = bytearray(n)
for i in range(0, n, 4096):
    b[i] = 1'
}

# measure DIR LABEL MARKER CMD...: one run, appended to DIR/LABEL.*
# MARKER "-" means the command's exit is the mark (it prints nothing).
measure() {
    local dir=$1 label=$2 marker=$3
    shift 3
    local line
    fresh_memory
    line=$("$MARKTIME" "${marker/#-/never-printed-marker}" "$@" 2>>"$dir/$label.stderr")
    local m
    m=$(field marker_ms "$line")
    [ "$marker" = - ] && m=$(field exit_ms "$line")
    if [ "$(field status "$line")" != 0 ] || [ "${m#-}" != "$m" ]; then
        echo "$line" >>"$dir/$label.failed"
        return
    fi
    echo "$m" >>"$dir/$label.marker"
    field exit_ms "$line" >>"$dir/$label.exit"
    field gone_ms "$line" >>"$dir/$label.gone"
    echo "$(($(field rss_kb "$line") / 1024))" >>"$dir/$label.rss"
}

# report DIR LABEL: one table row.
report() {
    local dir=$1 label=$2 failed=0
    [ -f "$dir/$label.failed" ] && failed=$(wc -l <"$dir/$label.failed")
    local ok=0
    [ -f "$dir/$label.marker" ] && ok=$(wc -l <"$dir/$label.marker")
    printf '  %-8s %3s ok %2s failed | marker %-17s | status %-17s | all gone %-17s | peak RSS MB %s\n' \
        "$label" "$ok" "$failed" "$(stats "$dir/$label.marker")" "$(stats "$dir/$label.exit")" \
        "$(stats "$dir/$label.gone")" "$(stats "$dir/$label.rss" | cut -d' ' -f2)"
}

# ratio DIR A B [min]: median(B) / median(A) of the marker times; with
# "min", min(B) / min(A).
ratio() {
    local a b f=2
    [ "${4:-}" = min ] && f=1
    a=$(stats "$1/$2.marker" | cut -d' ' -f$f)
    b=$(stats "$1/$3.marker" | cut -d' ' -f$f)
    awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0 && b > 0) printf "%.2f\n", b / a; else print "n/a" }'
}
