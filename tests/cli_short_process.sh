#!/bin/sh
# tests/cli_short_process.sh KAUDIT SOURCE_DIR PROG_SHORT_UNTRACED [PROG_STATIC_TRUE] - a process
# of the run that lives a few milliseconds without a trace (a raw fork and
# execve with an empty environment, SIGCHLD ignored so that no zombie is left
# to be seen: tests/programs/prog_short_untraced.c) is accounted for: info
# names it in untraced_processes, and analyze withholds PASS
# (process-without-trace, INCONCLUSIVE).  Before the kernel's process events
# (supervisor/proc_events.c) the 50 ms census missed it.
. "$(dirname "$0")/cli_env.sh"
SHORT=$3
STATIC=${4-}
CONTRACT=$SRC/contracts/examples/torch-ops.json

# 1. the attack: /bin/true, with no environment, ends in about a millisecond
"$K" run -d "$T/s1" -- "$SHORT" /bin/true >"$T/o1" 2>"$T/e1"
echo $? >"$T/rc1"
echo "  $(grep -E '^(process_accounting|untraced_processes|static_processes):' "$T/s1/info" | tr '\n' ' ')"
check "short untraced: the command ran (exit 0)" [ "$(cat "$T/rc1")" = 0 ]
pid=$(sed -n 's/^started //p' "$T/o1")
# (named by its program, or, when it ended before kaudit run could read
# /proc, by the one it exec'd from)
check "short untraced: info names it in untraced_processes" \
    grep -q "^untraced_processes: 1: $pid " "$T/s1/info"
"$K" analyze "$T/s1" --contract "$CONTRACT" --json >"$T/a1" 2>/dev/null
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

# 3. the child forked by libc, so the preload's fork handler gives it a trace
#    of its own, then the raw execve: that trace is the fork child's, not the
#    program's
"$K" run -d "$T/s3" -- "$SHORT" --traced-fork /bin/true >"$T/o3" 2>/dev/null
pid=$(sed -n 's/^started //p' "$T/o3")
check "traced fork, untraced exec: the fork child handed over a trace" sh -c "ls '$T/s3/p$pid-'*.kat >/dev/null"
check "traced fork, untraced exec: info names the program in untraced_processes" \
    grep -q "^untraced_processes: 1: $pid " "$T/s3/info"

# 4. a traced run: sh, its subshell (a fork child) and its programs all hand
#    over a trace, and the session says how its processes were seen
"$K" run -d "$T/s4" -- sh -c '/bin/true; (true); sleep 0.01' >/dev/null 2>&1
check "traced run: no untraced process" sh -c "! grep -q '^untraced_processes:' '$T/s4/info'"
accounting=$(sed -n 's/^process_accounting: //p' "$T/s4/info")
echo "  process_accounting: $accounting"
check "traced run: process_accounting is said" [ -n "$accounting" ]
"$K" analyze "$T/s4" --contract "$CONTRACT" --json >"$T/a4" 2>/dev/null
if [ "$accounting" = proc-connector ]; then
    check "traced run: no process-accounting-incomplete" sh -c "! grep -q process-accounting-incomplete '$T/a4'"
else
    check "census only: process-accounting-incomplete" grep -q process-accounting-incomplete "$T/a4"
fi

# 5. a static program (no loader, no preload) exec'd the same way: listed in
#    static_processes, not counted
if [ -n "$STATIC" ]; then
    "$K" run -d "$T/s5" -- "$SHORT" "$STATIC" >"$T/o5" 2>/dev/null
    pid=$(sed -n 's/^started //p' "$T/o5")
    # it lives some microseconds: when it has ended before kaudit run could
    # read its program, it is counted, said so, never passed over
    check "static program: listed in static_processes (or counted as unread)" \
        sh -c "grep -q '^static_processes: 1: $pid prog_static_tru' '$T/s5/info' && ! grep -q '^untraced_processes:' '$T/s5/info' ||
               grep -q \"^untraced_processes: 1: $pid (exec'd from .*ended before\" '$T/s5/info'"
    echo "  $(grep -E '^(static|untraced)_processes:' "$T/s5/info")"
    # ldconfig (static; Triton runs it): listed in static_processes, or, on a
    # loaded machine where it ended before it could be read, counted untraced
    # (fail closed) as prog_static_true above (a clean clone under load saw it)
    if [ -x /sbin/ldconfig ] && [ "$(od -A n -t x1 -N 4 /sbin/ldconfig | tr -d ' ')" = 7f454c46 ]; then
        "$K" run -d "$T/s5b" -- sh -c '/sbin/ldconfig -p >/dev/null' >/dev/null 2>&1
        check "ldconfig -p: listed in static_processes, or untraced when it ended before it was read" \
            sh -c "grep -q '^static_processes: 1: [0-9]* ldconfig' '$T/s5b/info' ||
                   grep -q \"^untraced_processes: 1: [0-9]* (exec'd from .*ended before\" '$T/s5b/info'"
        echo "  $(grep -E '^(static|untraced)_processes:' "$T/s5b/info")"
    fi
fi

# 6. where the kernel's events are refused (kaudit run by an ordinary user:
#    no CAP_NET_ADMIN), the census alone sees the processes: info says so and
#    analyze withholds PASS
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
    mkdir "$T/user" && chmod 777 "$T/user" && chmod 755 "$T"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$K" run -d "$T/user/s6" -- sh -c 'true' >/dev/null 2>&1
    echo "  as uid 65534: $(grep '^process_accounting:' "$T/user/s6/info")"
    check "census only: info says process_accounting: census" grep -q '^process_accounting: census: ' "$T/user/s6/info"
    "$K" analyze "$T/user/s6" --contract "$CONTRACT" --json >"$T/a6" 2>/dev/null
    echo $? >"$T/rca6"
    check "census only: process-accounting-incomplete" grep -q process-accounting-incomplete "$T/a6"
    check "census only: analyze INCONCLUSIVE (exit 11)" [ "$(cat "$T/rca6")" = 11 ]
fi

finish cli_short_process
