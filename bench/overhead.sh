#!/usr/bin/env bash
# bench/overhead.sh - what `kaudit run` costs a PyTorch workload (issue 2, item 9).
#
#   bash bench/overhead.sh           (from the repository root, on the GPU machine)
#
# Runs bench/overhead_loops.py (a launch-bound loop and a GPU-bound loop) in
# three modes: bare, under `kaudit run`, and with torch.profiler (CPU + CUDA)
# in-process.  Rounds of one run per mode, the order rotating every round
# (bare/kaudit/profiler, kaudit/profiler/bare, ...), so drifts in clock or
# temperature fall on every mode alike.  Reports, per loop and mode, the
# median time and the median over rounds of (mode / bare of the same round);
# for the launch loop also read against each process's host speed (its
# pure-Python reference time): 'matched' rows keep only the processes on the
# fast host plateau, 'adjusted' rows move every process along one fitted
# slope to the same reference time (bench/notes/overhead.md); and the trace bytes per
# kernel launch (session size / kernels recorded, and the marginal bytes of
# extra launches).
#
# Output: the table on stdout, also in $OUT/bench-log.txt; every number in
# $OUT/bench.json ($OUT defaults to ./bench-out).  Targets (issue 2): kaudit
# <= 1.10x bare on the launch-bound loop, <= 1.02x on the GPU-bound loop.
#
# Environment:
#   BENCH_ROUNDS=7        rounds (each: one run of each mode)
#   BENCH_BUDGET_S=200    start no round after this many seconds (at least 3 rounds run)
#   BENCH_MARGINAL=1      two extra kaudit runs (launch loop, N and 3N iterations)
#                         for the marginal trace bytes per launch; 0 skips them
#   BENCH_ARGS="..."      extra arguments for overhead_loops.py (e.g. --launch-iters 3000)
#   BENCH_KAUDIT=PATH     the kaudit to bench (default: build-gpu/bin/kaudit, built if missing)
#   BENCH_KAUDIT_B=PATH   the kaudit of mode kaudit_b (default: the same): two builds in one run
#   BENCH_MODES="bare kaudit"  the modes to run (default: bare kaudit profiler; also
#                         kaudit_b: kaudit with BENCH_KAUDIT_B_ENV added)
#   BENCH_KAUDIT_B_ENV="A=1"  environment of the kaudit_b runs
#   BENCH_VARIANTS="NAME:A=1+B=2 ..."  more kaudit modes, each named kaudit_NAME and run with
#                         that environment added ('+' between variables; values may hold
#                         commas), e.g. "kernel:KAUDIT_CUPTI_KINDS=device,kernel
#                         pinned:KAUDIT_CUPTI_PINNED=1"; they join BENCH_MODES
#   BENCH_BARE_VARIANTS="NAME:A=1+B=2 ..."  modes named bare_NAME: the bare loop, without
#                         kaudit, with that environment (e.g. a CUPTI client of our own
#                         injected through CUDA_INJECTION64_PATH: bench/floor.sh)
#   BENCH_KAUDIT_ENV="A=1 B=2"  more environment for the kaudit runs (Python-side provenance:
#                         KAUDIT_PYTHON_WATCH=Linear reports every nn.Linear.forward frame;
#                         KAUDIT_NO_PYTHON=1 turns it off)
#   KAUDIT_GPU_CUPTI_HINT=1  export KAUDIT_CUPTI_LIB (PyTorch's libcupti) for the kaudit runs
#   PYTHON                python with torch (default python3)
set -u
set -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
ROUNDS=${BENCH_ROUNDS:-7}
BUDGET=${BENCH_BUDGET_S:-200}
MARGINAL=${BENCH_MARGINAL:-1}
read -r -a EXTRA <<<"${BENCH_ARGS:-}"

gpu_state() {
    command -v nvidia-smi >/dev/null &&
        nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu \
            --format=csv,noheader 2>/dev/null | head -1
}

# One run: append a JSON line {round, mode, ok, ...timings} to $RUNS.
run_one() {
    local round=$1 mode=$2 t0 rc out
    t0=$(date +%s%N)
    case $mode in
    bare) out=$(cd "$ROOT" && timeout -k 10 180 "$PY" bench/overhead_loops.py --mode bare "${EXTRA[@]}" 2>"$W/err-$round-$mode") ;;
    bare_*)
        local benv=()
        IFS=+ read -r -a benv <<<"${VARIANT_ENV[$mode]:-}"
        out=$(cd "$ROOT" && timeout -k 10 180 env "${benv[@]}" "$PY" bench/overhead_loops.py --mode bare \
            "${EXTRA[@]}" 2>"$W/err-$round-$mode")
        ;;
    profiler) out=$(cd "$ROOT" && timeout -k 10 180 "$PY" bench/overhead_loops.py --mode profiler "${EXTRA[@]}" 2>"$W/err-$round-$mode") ;;
    kaudit)
        rm -rf "$W/sess-$round"
        out=$(cd "$ROOT" && timeout -k 10 180 env "${KENV[@]}" \
            "$KAUDIT" run -d "$W/sess-$round" -- "$PY" bench/overhead_loops.py --mode bare "${EXTRA[@]}" \
            2>"$W/err-$round-$mode")
        ;;
    kaudit_*)
        local venv=()
        if [ "$mode" = kaudit_b ]; then
            venv=("${KENV_B[@]}")
        else
            IFS=+ read -r -a venv <<<"${VARIANT_ENV[$mode]:-}"
        fi
        rm -rf "$W/sessb-$round"
        out=$(cd "$ROOT" && timeout -k 10 180 env "${KENV[@]}" "${venv[@]}" \
            "${BENCH_KAUDIT_B:-$KAUDIT}" run -d "$W/sessb-$round" -- "$PY" bench/overhead_loops.py --mode bare "${EXTRA[@]}" \
            2>"$W/err-$round-$mode")
        rm -rf "$W/sessb-$round"
        ;;
    esac
    rc=$?
    local wall=$(( ($(date +%s%N) - t0) / 1000000 ))
    "$PY" - "$round" "$mode" "$rc" "$wall" "$out" "$W/err-$round-$mode" "$RUNS" <<'EOF'
import json, sys
rnd, mode, rc, wall, out, errf, runs = sys.argv[1:]
row = {"round": int(rnd), "mode": mode, "rc": int(rc), "process_wall_s": int(wall or 0) / 1000}
try:
    row.update(json.loads(out.strip().splitlines()[-1]))
    row["mode"] = mode
    row["ok"] = int(rc) == 0
except Exception as exc:
    row["ok"] = False
    try:
        tail = open(errf).read().strip().splitlines()[-2:]
    except OSError:
        tail = []
    row["error"] = f"rc={rc}, no result line ({exc}); stderr: {' | '.join(tail)}"
with open(runs, "a") as f:
    f.write(json.dumps(row) + "\n")
if row["ok"]:
    print(f"  {mode:<8} launch {row.get('launch_s', 0):.4f} s  gpu {row.get('gpu_s', 0):.4f} s"
          f"  (process {row['process_wall_s']:.1f} s)")
else:
    print(f"  {mode:<8} FAILED: {row['error'][:300]}")
EOF
}

kernels_in_session() {
    local sess=$1
    "$KAUDIT" dump --json "$sess" 2>/dev/null | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
n = 0
for p in d.get("processes", []):
    c = p.get("counts") or {}
    n += c["kernels"] if isinstance(c.get("kernels"), int) else len(p.get("kernels") or [])
print(n)'
}

session_bytes() { du -sb "$1" | cut -f1; }

main() {
    cd "$ROOT" || exit 99
    PY=$(command -v "${PYTHON:-python3}") || { echo "no python"; return 1; }
    W=$(mktemp -d /tmp/kaudit-bench.XXXXXX)
    RUNS=$W/runs.jsonl
    : >"$RUNS"
    echo "kaudit overhead bench: repo $ROOT, work $W, results in $OUTDIR"
    echo "gpu at start: $(gpu_state)"

    KAUDIT=${BENCH_KAUDIT:-$ROOT/build-gpu/bin/kaudit}
    if [ ! -x "$KAUDIT" ]; then
        echo "building kaudit (core only)"
        (cmake -S . -B build-gpu -G Ninja -DKAUDIT_CORE_ONLY=ON && cmake --build build-gpu) \
            >"$W/build.log" 2>&1 || { tail -20 "$W/build.log"; echo "kaudit did not build"; return 1; }
    fi
    CUPTI=""
    if [ "${KAUDIT_GPU_CUPTI_HINT:-0}" = 1 ]; then
        CUPTI=$("$PY" -c '
import glob, os, sysconfig
for base in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
    hits = sorted(glob.glob(os.path.join(base, "nvidia/cu13/lib/libcupti.so.13"))
                  + glob.glob(os.path.join(base, "nvidia/*/lib/libcupti.so*")))
    if hits:
        print(hits[0]); break' 2>/dev/null)
    fi
    echo "KAUDIT_CUPTI_LIB for the kaudit runs: ${CUPTI:-(not set)}"
    KENV=()
    [ -n "$CUPTI" ] && KENV=(KAUDIT_CUPTI_LIB="$CUPTI")
    # More environment for the kaudit runs only, e.g. KAUDIT_PYTHON_WATCH=Linear
    # (Python-side provenance reports every nn.Linear.forward) or KAUDIT_NO_PYTHON=1.
    local extra_kenv=()
    read -r -a extra_kenv <<<"${BENCH_KAUDIT_ENV:-}"
    KENV+=("${extra_kenv[@]}")
    # Mode kaudit_b: kaudit with BENCH_KAUDIT_B_ENV as well (an A/B of two settings).
    KENV_B=()
    read -r -a KENV_B <<<"${BENCH_KAUDIT_B_ENV:-}"
    echo "extra environment for the kaudit runs: ${BENCH_KAUDIT_ENV:-(none)}"

    local modes r i done_rounds=0 v
    read -r -a modes <<<"${BENCH_MODES:-bare kaudit profiler}"
    declare -gA VARIANT_ENV=()
    for v in ${BENCH_VARIANTS:-}; do
        VARIANT_ENV["kaudit_${v%%:*}"]=${v#*:}
        modes+=("kaudit_${v%%:*}")
    done
    for v in ${BENCH_BARE_VARIANTS:-}; do
        VARIANT_ENV["bare_${v%%:*}"]=${v#*:}
        modes+=("bare_${v%%:*}")
    done
    echo "modes: ${modes[*]}"
    for ((r = 0; r < ROUNDS; r++)); do
        if [ "$r" -ge 3 ] && [ "$SECONDS" -gt "$BUDGET" ]; then
            echo "budget of ${BUDGET}s reached after $r rounds"
            break
        fi
        echo "round $r ($SECONDS s)"
        for ((i = 0; i < ${#modes[@]}; i++)); do
            run_one "$r" "${modes[$(((r + i) % ${#modes[@]}))]}"
        done
        # Keep the first kaudit session for the size figures; drop the others.
        [ "$r" -gt 0 ] && rm -rf "$W/sess-$r"
        done_rounds=$((r + 1))
    done

    local meta=$W/meta.json sb kn
    sb=0
    kn=0
    if [ -d "$W/sess-0" ]; then
        sb=$(session_bytes "$W/sess-0")
        kn=$(kernels_in_session "$W/sess-0")
    fi
    local mb1=0 mb2=0 mk1=0 mk2=0 n1=2000 n2=6000
    if [ "$MARGINAL" = 1 ]; then
        echo "marginal trace size: launch loop with $n1 and $n2 iterations under kaudit ($SECONDS s)"
        for n in $n1 $n2; do
            rm -rf "$W/marg-$n"
            (cd "$ROOT" && timeout -k 10 180 env "${KENV[@]}" "$KAUDIT" run \
                -d "$W/marg-$n" -- "$PY" bench/overhead_loops.py --loop launch --launch-iters "$n" \
                >/dev/null 2>"$W/err-marg-$n")
        done
        if [ -d "$W/marg-$n1" ] && [ -d "$W/marg-$n2" ]; then
            mb1=$(session_bytes "$W/marg-$n1")
            mb2=$(session_bytes "$W/marg-$n2")
            mk1=$(kernels_in_session "$W/marg-$n1")
            mk2=$(kernels_in_session "$W/marg-$n2")
        fi
    fi
    "$PY" - "$meta" "$sb" "${kn:-0}" "$mb1" "$mb2" "${mk1:-0}" "${mk2:-0}" "$done_rounds" \
        "$(gpu_state)" "$("$KAUDIT" --version 2>&1 | head -1)" <<'EOF'
import json, sys
meta, sb, kn, mb1, mb2, mk1, mk2, rounds, gpu, version = sys.argv[1:]
m = {"rounds": int(rounds), "gpu_at_end": gpu, "kaudit_version": version,
     "trace": {"session_bytes": int(sb), "kernels": int(kn)}}
if int(mk2) > int(mk1):
    m["marginal"] = {"bytes_delta": int(mb2) - int(mb1), "kernels_delta": int(mk2) - int(mk1),
                     "sessions": {"bytes": [int(mb1), int(mb2)], "kernels": [int(mk1), int(mk2)]}}
json.dump(m, open(meta, "w"))
EOF
    echo
    echo "gpu at end: $(gpu_state)"
    "$PY" "$ROOT/bench/overhead_loops.py" --summarize "$RUNS" --meta "$meta" --out "$OUTDIR/bench.json"
    local rc=$?
    echo "command: bash bench/overhead.sh (rounds=$done_rounds, ${SECONDS}s); raw runs in $OUTDIR/bench.json"
    return $rc
}

main "$@" 2>&1 | tee "$OUTDIR/bench-log.txt"
exit "${PIPESTATUS[0]}"
