#!/usr/bin/env bash
# bench/perf_launch_h200.sh - where the launching thread's time goes on the
# launch-bound loop under kaudit run, by sampling (perf record, cpu-clock:
# the VM has no hardware counters), for the split of bench/notes/overhead.md.
#
#   bash bench/perf_launch_h200.sh      (GPU machine; carries .gpu-carry/kaudit
#                                        and .gpu-carry/perf: a perf binary with the
#                                        shared libraries it needs that the GPU
#                                        machine lacks, from the development VM)
#
# For each build (PERF_BUILDS, default "kaudit": .gpu-carry/NAME) the loop runs
# PERF_ITERS iterations; PERF_DELAY_S after its start (past the import and the
# warm-up) the main thread is sampled for PERF_SECONDS.  Output: $OUT/perf-NAME-*.txt
# (self time by object, by symbol, and the callers of the C library's and
# the vDSO's symbols).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/h200_env.sh"
P=$ROOT/.gpu-carry/perf
perf() { LD_LIBRARY_PATH=$P/lib "$P/perf" "$@"; }
perf --version || exit 1
cat /proc/sys/kernel/perf_event_paranoid
for name in ${PERF_BUILDS:-kaudit}; do
    K=$ROOT/.gpu-carry/$name/bin/kaudit
    W=$(mktemp -d /tmp/perf-launch.XXXXXX)
    "$K" run -d "$W/s" -- "$PY" bench/overhead_loops.py --loop launch --launch-iters "${PERF_ITERS:-400000}" \
        >"$W/loop.out" 2>"$W/loop.err" &
    supervisor=$!
    sleep "${PERF_DELAY_S:-14}"
    # the loop's main thread (kaudit run's own command line names the loop too)
    pid=$(pgrep -f "overhead_loops.py --loop launch" | grep -vx "$supervisor" | head -1)
    [ -n "$pid" ] || { echo "$name: the loop is not running"; tail -5 "$W/loop.err"; continue; }
    perf record -F 4999 -e cpu-clock -g -t "$pid" -o "$W/perf.data" -- sleep "${PERF_SECONDS:-8}" 2>"$W/record.err" ||
        { echo "$name: perf record failed"; tail -5 "$W/record.err"; }
    wait
    echo "$name: loop $(cat "$W/loop.out")"
    perf report -i "$W/perf.data" --stdio --no-children --sort dso -g none --percent-limit 0.2 \
        >"$OUTDIR/perf-$name-dso.txt" 2>/dev/null
    perf report -i "$W/perf.data" --stdio --no-children --sort dso,sym -g none --percent-limit 0.2 \
        >"$OUTDIR/perf-$name-sym.txt" 2>/dev/null
    perf report -i "$W/perf.data" --stdio --no-children --sort dso,sym -g caller,0.5,callee,function,percent \
        --percent-limit 0.3 --dsos "libc.so.6,[vdso],libkaudit_preload.so" \
        >"$OUTDIR/perf-$name-callers.txt" 2>/dev/null
    head -40 "$OUTDIR/perf-$name-dso.txt" | grep -v "^#" | grep -v "^$"
    rm -rf "$W"
done
