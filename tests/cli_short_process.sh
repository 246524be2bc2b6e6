#!/bin/sh
# tests/cli_short_process.sh KAUDIT SOURCE_DIR PROG_SHORT_UNTRACED - a process
# of the run that lives a few milliseconds without a trace (a raw fork and
# execve with an empty environment, SIGCHLD ignored so that no zombie is left
# to be seen: tests/programs/prog_short_untraced.c) is accounted for: info
# names it in untraced_processes, and analyze withholds PASS
# (process-without-trace, INCONCLUSIVE).  Before the kernel's process events
# (supervisor/proc_events.c) the 50 ms census missed it.
. "$(dirname "$0")/cli_env.sh"
SHORT=$3

# 1. the attack: /bin/true, with no environment, ends in about a millisecond
"$K" run -d "$T/s1" -- "$SHORT" /bin/true >"$T/o1" 2>"$T/e1"
echo $? >"$T/rc1"
echo "  $(grep -E '^(process_accounting|untraced_processes|static_processes):' "$T/s1/info" | tr '\n' ' ')"
check "short untraced: the command ran (exit 0)" [ "$(cat "$T/rc1")" = 0 ]
pid=$(sed -n 's/^started //p' "$T/o1")
check "short untraced: info names it in untraced_processes" \
    grep -q "^untraced_processes: 1: $pid true" "$T/s1/info"
"$K" analyze "$T/s1" --contract "$SRC/contracts/examples/torch-ops.json" --json >"$T/a1" 2>/dev/null
echo $? >"$T/rca1"
check "short untraced: analyze INCONCLUSIVE (exit 11)" [ "$(cat "$T/rca1")" = 11 ]
check "short untraced: process-without-trace" grep -q process-without-trace "$T/a1"

# 2. the same ten times over: each one is seen, not only the lucky ones
n=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    "$K" run -d "$T/r$i" -- "$SHORT" /bin/true 1 >/dev/null 2>&1
    grep -q '^untraced_processes: 1: ' "$T/r$i/info" && n=$((n + 1))
done
echo "  seen in $n of 10 runs"
check "short untraced: seen in 10 of 10 runs" [ "$n" = 10 ]

# 3. a traced run beside it: sh and its children all hand over a trace
"$K" run -d "$T/s3" -- sh -c '/bin/true; (true); sleep 0.01' >/dev/null 2>&1
check "traced run: no untraced process" sh -c "! grep -q '^untraced_processes:' '$T/s3/info'"

finish cli_short_process
