#!/usr/bin/env bash
# tests/gpu/verify_all.sh - one device call that checks a change to the recording
# end to end: the in-process overhead A/B (bench/kaudit_ab.sh), the controls
# (tests/gpu/controls.sh: verdicts, fresh fixtures), the GPU suite
# (tests/gpu/run.sh: every kernel recorded, vendor kernels in vendor windows,
# output unchanged) and the process-level overhead benchmark (bench/overhead.sh).
#
#   bash tests/gpu/verify_all.sh       (repository root, GPU machine; about 9 minutes)
#
# Each part keeps its own output under a work directory; everything is packed
# into $OUT/verify.tar.gz (ab/, controls/, suite/, bench/), and the summaries
# are printed last.  VERIFY_PARTS="ab controls suite bench" picks parts;
# VERIFY_BENCH_VARIANTS adds kaudit modes to the benchmark (BENCH_VARIANTS syntax).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUTDIR"
W=$(mktemp -d /tmp/kaudit-verify.XXXXXX)
PARTS=${VERIFY_PARTS:-ab controls suite bench}
cd "$ROOT" || exit 99
start=$SECONDS
part() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
if part ab; then
    mkdir -p "$W/ab"
    OUT=$W/ab bash bench/kaudit_ab.sh >"$W/ab/console.txt" 2>&1
    echo "ab done at $((SECONDS - start)) s"
fi
if part controls; then
    mkdir -p "$W/controls"
    OUT=$W/controls KAUDIT_CONTROLS_DEADLINE_S=${VERIFY_CONTROLS_S:-170} bash tests/gpu/controls.sh \
        >"$W/controls/console.txt" 2>&1
    echo "controls done at $((SECONDS - start)) s"
fi
if part suite; then
    mkdir -p "$W/suite"
    OUT=$W/suite KAUDIT_GPU_SKIP_INLINE=${VERIFY_SKIP_INLINE:-1} KAUDIT_GPU_DEADLINE_S=${VERIFY_SUITE_S:-150} \
        bash tests/gpu/run.sh >"$W/suite/console.txt" 2>&1
    echo "suite done at $((SECONDS - start)) s"
fi
if part bench; then
    mkdir -p "$W/bench"
    OUT=$W/bench BENCH_MODES="bare kaudit" BENCH_ROUNDS=${VERIFY_BENCH_ROUNDS:-8} BENCH_BUDGET_S=${VERIFY_BENCH_S:-90} \
        BENCH_MARGINAL=0 BENCH_ARGS="--loop launch --launch-iters 6000 --launch-segments 12 --json" \
        BENCH_VARIANTS="${VERIFY_BENCH_VARIANTS:-}" \
        bash bench/overhead.sh >"$W/bench/console.txt" 2>&1
    echo "bench done at $((SECONDS - start)) s"
fi
tar -C "$W" -czf "$OUTDIR/verify.tar.gz" .
for p in ab controls suite bench; do
    [ -f "$W/$p/console.txt" ] || continue
    echo "===== $p"
    case $p in
    ab) cat "$W/ab/console.txt" ;;
    controls) grep -E "^CONTROL|recorded|failed" "$W/controls/console.txt" | tail -22 ;;
    suite) grep -E "FAIL|passed" "$W/suite/console.txt" | tail -12 ;;
    bench) tail -24 "$W/bench/console.txt" ;;
    esac
done
