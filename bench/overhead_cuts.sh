#!/usr/bin/env bash
# bench/overhead_cuts.sh - one device call that measures a change to kaudit's own
# per-call parts (issue 17, item 5) against the build before it, three ways:
#
#   1. bench/lt_wrapper_cost.c: the cublasLtMatmul wrapper alone, ns per call,
#      host-only, each build (and the new one with KAUDIT_LT_SUMMARY_CACHE=0);
#   2. bench/kaudit_ab.sh: in-process A/B on the launch-bound loop, our parts
#      split (callbacks, wrappers, no activity, kernel activity, everything)
#      against paused, for each build;
#   3. bench/floor.sh: process level, interleaved rounds of bare, the CUPTI
#      floors (kernel activity; kernel activity + launch callbacks), the new
#      kaudit and the old one: the target is kaudit at most 0.02 above the
#      floor with callbacks.
#
#   CUTS_NEW=.gpu-carry/kaudit CUTS_OLD=.gpu-carry/kaudit-old bash bench/overhead_cuts.sh
#
# Both builds come from tests/gpu/carry_kaudit.sh (run here at each commit).
# CUTS_PARTS="wrapper ab floor" picks parts; CUTS_FLOOR_ROUNDS (9),
# CUTS_FLOOR_BUDGET_S (300), CUTS_AB_PROCESSES (3 per build), CUTS_AB_REPEATS (30),
# CUTS_AB_SETTINGS.  The old build needs the "floor" setting of the benchmark
# control (preload/bench/bench_control.c): build it with that change applied.  Output: the console
# summaries; $OUT/cuts.tar.gz holds every part's files.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/h200_env.sh"
NEW=$(cd "${CUTS_NEW:-.gpu-carry/kaudit}" && pwd)/bin/kaudit
OLD=$(cd "${CUTS_OLD:-.gpu-carry/kaudit-old}" && pwd)/bin/kaudit
PARTS=${CUTS_PARTS:-wrapper ab floor}
W=$(mktemp -d /tmp/kaudit-cuts.XXXXXX)
part() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1

if part wrapper; then
    mkdir -p "$W/wrapper"
    CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
    gcc -O2 bench/lt_wrapper_cost.c -I"$CUDA_HOME/include" -L"$CUDA_HOME/lib64" \
        -Wl,-rpath,"$CUDA_HOME/lib64" -lcublasLt -ldl -o "$W/lt_wrapper_cost" || exit 1
    for round in 0 1 2; do
        for mode in new old nocache; do
            for desc in reuse fresh; do
                k=$NEW; env=()
                [ "$mode" = old ] && k=$OLD
                [ "$mode" = nocache ] && env=(KAUDIT_LT_SUMMARY_CACHE=0)
                rm -rf "$W/s"
                line=$(env KAUDIT_BENCH_CONTROL=1 "${env[@]}" "$k" run -d "$W/s" -- \
                    "$W/lt_wrapper_cost" 2000 40 "$desc" 2>>"$W/wrapper/err.txt")
                echo "{\"round\": $round, \"build\": \"$mode\", \"result\": $line}" | tee -a "$W/wrapper/lt.jsonl"
            done
        done
    done
    echo "wrapper done at $((SECONDS - start)) s"
fi

if part ab; then
    mkdir -p "$W/ab"
    # Ratios to the CUPTI floor in the same process (setting "floor"): resume
    # is what kaudit adds above it, the others split that.
    ABSET=${CUTS_AB_SETTINGS:-"pause floor resume callbacks wrappers kinds="}
    for build in new old; do
        k=$NEW
        [ "$build" = old ] && k=$OLD
        OUT=$W/ab AB_KAUDIT=$k AB_NAME=$build AB_PROCESSES=${CUTS_AB_PROCESSES:-3} AB_SETTINGS="$ABSET" \
            AB_REFERENCE=floor AB_REPEATS=${CUTS_AB_REPEATS:-30} PYTHON=$PY \
            bash bench/kaudit_ab.sh >"$W/ab/console-$build.txt" 2>&1
    done
    echo "ab done at $((SECONDS - start)) s"
fi

if part floor; then
    mkdir -p "$W/floor"
    OUT=$W/floor BENCH_KAUDIT=$NEW BENCH_KAUDIT_B=$OLD FLOOR_MODES="bare kaudit kaudit_b" FLOOR_VARIANTS= \
        FLOOR_ROUNDS=${CUTS_FLOOR_ROUNDS:-9} FLOOR_BUDGET_S=${CUTS_FLOOR_BUDGET_S:-300} PYTHON=$PY \
        bash bench/floor.sh >"$W/floor/console.txt" 2>&1
    echo "floor done at $((SECONDS - start)) s"
fi

tar -C "$W" -czf "$OUTDIR/cuts.tar.gz" .
if [ -f "$W/ab/console-new.txt" ]; then
    echo "===== in-process A/B (new, then old)"
    cat "$W/ab/console-new.txt" "$W/ab/console-old.txt"
fi
[ -f "$W/floor/console.txt" ] && { echo "===== floor"; tail -40 "$W/floor/console.txt"; }
echo "done at $((SECONDS - start)) s"
