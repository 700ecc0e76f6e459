# shellcheck shell=bash
# Sourced (bash) by tests/run-all, tests/lab/run, tests/lab/speed and
# tests/lib.sh: how much slower the lab is than on an idle host.
#
# LAB_SLOWDOWN is the lab's measured slowdown (tests/lab/speed: the wall
# time a fixed piece of work takes in L1 over LAB_SPEED_REF_MS, what it takes
# when QEMU has a core to itself), a decimal number such as 2.35.  Bounds
# that are hang guards on slow work (LAB_TIMEOUT, SUITE_TIMEOUT, the tests'
# T_TIMEOUT) are written for an idle host and stretched by it, never
# shortened: a slowdown under 1 counts as 1.  Unset, it is 1.

# The reference work (tests/lab/speed runs it in L1, timed by L1's clock,
# which under TCG without LAB_ICOUNT is the host's wall clock): bash's empty
# arithmetic loop, LAB_SPEED_LOOPS turns.  LAB_SPEED_REF_MS is what it takes
# with a whole host core: QEMU's own CPU time over the loop (utime + stime of
# its process) on this project's 2-core kvm-pvm machines, 2.77-2.91 s in 2
# runs while the wall time was 13.5-16.4 s beside other work
# (tests/lab/README.md, "Figures").
# shellcheck disable=SC2034  # read by tests/lab/speed
LAB_SPEED_LOOPS=100000 LAB_SPEED_REF_MS=2850
# A ceiling on the stretch: a slowdown past it (L1 stalled during the
# measurement, say) must not turn a 15-minute hang guard into hours.
LAB_SLOWDOWN_MAX=20

# lab_slowdown_check VALUE: true if VALUE is a slowdown this file takes (a
# decimal number, at most 2 places, not above LAB_SLOWDOWN_MAX).
lab_slowdown_check() {
    [[ $1 =~ ^[0-9]+(\.[0-9]{1,2})?$ ]] &&
        awk -v f="$1" -v m="$LAB_SLOWDOWN_MAX" 'BEGIN { exit !(f <= m) }'
}

# lab_scaled SECONDS: SECONDS times LAB_SLOWDOWN, rounded up, never less
# than SECONDS (an unset or malformed LAB_SLOWDOWN counts as 1: the
# callers that take it from a user check it first with lab_slowdown_check).
lab_scaled() {
    local f=${LAB_SLOWDOWN:-1}
    lab_slowdown_check "$f" || f=1
    awk -v s="$1" -v f="$f" 'BEGIN { if (f < 1) f = 1; t = s * f; printf "%d\n", (t == int(t)) ? t : int(t) + 1 }'
}
