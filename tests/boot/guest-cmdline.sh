# The guest command line the Linux tests and benchmarks start from.
# idle=poll: in the nested lab an L2 vCPU that halts can leave the TCG L1
# waiting forever for an interrupt (seen: L1 at 0% CPU, no console output,
# until LAB_TIMEOUT); a guest that polls instead of halting never takes
# that path.  It costs only idle time, which these guests hardly have.
GUEST_CMDLINE="console=ttyS0 reboot=k panic=-1 quiet idle=poll"
