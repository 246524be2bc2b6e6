#!/usr/bin/env bash
# bench/launch_probe.sh - where kaudit's launch-path cost comes from, part by part.
#
#   bash bench/launch_probe.sh        (from the repository root, on the GPU machine)
#
# Two workloads, each run in interleaved rounds (one process per mode per
# round, the mode order rotating) under a set of modes that switch kaudit's
# parts on one at a time:
#   c      bench/launch_cost.cu: an empty kernel launched through the shared
#          CUDA runtime, 200 launches per segment, median over 60 segments of
#          the host's issue time per launch (microseconds)
#   torch  bench/overhead_loops.py's launch-bound loop, 6000 iterations timed
#          in 12 parts, median part (seconds for the 6000)
# Modes:
#   bare            nothing
#   preload         LD_PRELOAD of the preload library alone (wrappers, writer; no CUPTI)
#   inject          CUDA_INJECTION64_PATH alone: CUPTI with every activity kind kaudit enables
#   inject_K        the same with KAUDIT_CUPTI_KINDS=K (K: kernel, api, kernel_api)
#   inject_nopool   inject with KAUDIT_CUPTI_BUFFER_POOL=0 (CUPTI clears its buffers itself)
#   inject_clock    inject with KAUDIT_CUPTI_CLOCK=default (CUPTI's clock, no callback)
#   kaudit          `kaudit run`
#   kaudit_noaudit  `kaudit run` without the rtld-audit module
#   kaudit_nopy     `kaudit run` without Python-side provenance
# For each mode: the median of the per-round ratios to bare of the same round,
# and their range.  The torch rounds also report the spread of bare itself.
#
# Environment: PROBE_ROUNDS_C=7, PROBE_ROUNDS_TORCH=8, PROBE_C_MODES, PROBE_TORCH_MODES
# (space-separated), PROBE_PIN=CPUS (taskset -c CPUS for every run, e.g. 2-7;
# default: no pinning), PROBE_BUDGET_S=420 (start no round after this),
# PYTHON (default python3), CUDA_HOME (default /usr/local/cuda).
# Output: the tables on stdout and in $OUT/probe-log.txt; every run in
# $OUT/probe-runs.jsonl; one kaudit session of 300 iterations of the torch loop
# in $OUT/probe-session.tar.gz (what one iteration records).
set -u
set -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
PY=${PYTHON:-python3}
ROUNDS_C=${PROBE_ROUNDS_C:-7}
ROUNDS_TORCH=${PROBE_ROUNDS_TORCH:-8}
BUDGET=${PROBE_BUDGET_S:-420}
C_MODES=${PROBE_C_MODES:-"bare preload inject inject_kernel inject_api inject_kernel_api inject_nopool inject_clock kaudit"}
TORCH_MODES=${PROBE_TORCH_MODES:-"bare kaudit inject preload inject_kernel kaudit_noaudit"}
TORCH_ARGS=(bench/overhead_loops.py --loop launch --launch-iters 6000 --launch-segments 12 --json)

# Environment and command prefix of a mode: sets MODE_ENV (array) and MODE_KAUDIT (0/1).
mode_setup() {
    local mode=$1 dir=$2
    MODE_ENV=()
    MODE_KAUDIT=0
    case $mode in
    bare) ;;
    preload) MODE_ENV=(KAUDIT_SESSION_DIR="$dir" LD_PRELOAD="$LIB") ;;
    inject) MODE_ENV=(KAUDIT_SESSION_DIR="$dir" CUDA_INJECTION64_PATH="$LIB") ;;
    inject_kernel) MODE_ENV=(KAUDIT_SESSION_DIR="$dir" CUDA_INJECTION64_PATH="$LIB" KAUDIT_CUPTI_KINDS=device,kernel) ;;
    inject_api) MODE_ENV=(KAUDIT_SESSION_DIR="$dir" CUDA_INJECTION64_PATH="$LIB" KAUDIT_CUPTI_KINDS=device,runtime,driver) ;;
    inject_kernel_api) MODE_ENV=(KAUDIT_SESSION_DIR="$dir" CUDA_INJECTION64_PATH="$LIB" KAUDIT_CUPTI_KINDS=device,kernel,runtime,driver) ;;
    inject_nopool) MODE_ENV=(KAUDIT_SESSION_DIR="$dir" CUDA_INJECTION64_PATH="$LIB" KAUDIT_CUPTI_BUFFER_POOL=0) ;;
    inject_clock) MODE_ENV=(KAUDIT_SESSION_DIR="$dir" CUDA_INJECTION64_PATH="$LIB" KAUDIT_CUPTI_CLOCK=default) ;;
    kaudit) MODE_KAUDIT=1 ;;
    kaudit_noaudit) MODE_KAUDIT=1; MODE_ENV=(KAUDIT_AUDIT_LIB=none) ;;
    kaudit_nopy) MODE_KAUDIT=1; MODE_ENV=(KAUDIT_NO_PYTHON=1) ;;
    kaudit_nopool) MODE_KAUDIT=1; MODE_ENV=(KAUDIT_CUPTI_BUFFER_POOL=0) ;;
    *) echo "unknown mode $mode" >&2; return 1 ;;
    esac
}

# run_one WORKLOAD ROUND MODE: appends {"workload","round","mode","value",...} to $RUNS.
run_one() {
    local workload=$1 round=$2 mode=$3 dir="$W/s-$1-$2-$3" cmd out rc libpath=()
    rm -rf "$dir"
    mode_setup "$mode" "$dir" || return
    [ "$MODE_KAUDIT" = 1 ] || mkdir -p "$dir"
    if [ "$workload" = c ]; then
        # The toolkit's shared cudart; PyTorch brings its own (never override that).
        cmd=("$W/launch_cost" 60 200)
        libpath=(LD_LIBRARY_PATH="$CUDA_HOME/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    else
        cmd=("$PY" "${TORCH_ARGS[@]}")
    fi
    [ "$MODE_KAUDIT" = 1 ] && cmd=("$KAUDIT" run -d "$dir" -- "${cmd[@]}")
    out=$(cd "$ROOT" && timeout -k 10 120 env "${libpath[@]}" "${MODE_ENV[@]}" "${PIN[@]}" "${cmd[@]}" \
        2>"$dir.err")
    rc=$?
    "$PY" - "$workload" "$round" "$mode" "$rc" "$out" "$dir.err" "$RUNS" <<'EOF'
import json, sys
workload, rnd, mode, rc, out, errf, runs = sys.argv[1:]
row = {"workload": workload, "round": int(rnd), "mode": mode, "rc": int(rc)}
try:
    d = json.loads(out.strip().splitlines()[-1])
    row["value"] = d["issue_us_median"] if workload == "c" else d["launch_s"]
    row["detail"] = d
except Exception as exc:
    tail = open(errf, errors="replace").read().strip().splitlines()[-2:]
    row["error"] = f"rc={rc}: {exc}; {' | '.join(tail)}"
with open(runs, "a") as f:
    f.write(json.dumps(row) + "\n")
v = row.get("value")
print(f"  {workload} r{rnd} {mode:<18} " + (f"{v:.4f}" if v is not None else "FAILED " + row["error"][:200]))
EOF
    rm -rf "$dir"
}

rounds() {
    local workload=$1 n=$2 modes_text=$3 r i modes
    read -r -a modes <<<"$modes_text"
    for ((r = 0; r < n; r++)); do
        if [ "$r" -ge 3 ] && [ "$SECONDS" -gt "$BUDGET" ]; then
            echo "$workload: budget of ${BUDGET}s reached after $r rounds"
            break
        fi
        echo "$workload round $r ($SECONDS s)"
        for ((i = 0; i < ${#modes[@]}; i++)); do
            run_one "$workload" "$r" "${modes[$(((r + i) % ${#modes[@]}))]}"
        done
    done
}

steal_ticks() { awk '/^cpu /{print $9}' /proc/stat; }

main() {
    cd "$ROOT" || return 99
    W=$(mktemp -d /tmp/kaudit-probe.XXXXXX)
    RUNS=$OUTDIR/probe-runs.jsonl
    : >"$RUNS"
    PIN=()
    [ -n "${PROBE_PIN:-}" ] && command -v taskset >/dev/null && PIN=(taskset -c "$PROBE_PIN")
    echo "launch probe: work $W; pin: ${PIN[*]:-(none)}; $(nproc) CPUs"
    echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader 2>/dev/null | head -1
    KAUDIT=$ROOT/build-gpu/bin/kaudit
    LIB=$ROOT/build-gpu/lib/libkaudit_preload.so
    if [ ! -x "$KAUDIT" ]; then
        (cmake -S . -B build-gpu -G Ninja -DKAUDIT_CORE_ONLY=ON && cmake --build build-gpu) \
            >"$W/build.log" 2>&1 || { tail -20 "$W/build.log"; echo "kaudit did not build"; return 1; }
    fi
    "$CUDA_HOME/bin/nvcc" -O2 -cudart shared -o "$W/launch_cost" bench/launch_cost.cu \
        >"$W/nvcc.log" 2>&1 || { cat "$W/nvcc.log"; echo "launch_cost did not build"; return 1; }
    echo "built ($SECONDS s)"

    local steal0 steal1
    steal0=$(steal_ticks)
    rounds c "$ROUNDS_C" "$C_MODES"
    rounds torch "$ROUNDS_TORCH" "$TORCH_MODES"
    steal1=$(steal_ticks)
    echo "steal time during the rounds: $(( (steal1 - steal0) )) ticks of 1/$(getconf CLK_TCK) s over all CPUs"

    # One session of the torch loop, to see what an iteration records.
    (cd "$ROOT" && "$KAUDIT" run -d "$W/session" -- "$PY" bench/overhead_loops.py --loop launch \
        --launch-iters 300 --launch-warmup 50 >/dev/null 2>"$W/session.err")
    tar -C "$W" -czf "$OUTDIR/probe-session.tar.gz" session 2>/dev/null

    "$PY" - "$RUNS" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for workload, unit in (("c", "us/launch"), ("torch", "s/6000 it")):
    rs = [r for r in rows if r["workload"] == workload and "value" in r]
    if not rs:
        continue
    bare = {r["round"]: r["value"] for r in rs if r["mode"] == "bare"}
    modes = []
    for r in rs:
        if r["mode"] not in modes:
            modes.append(r["mode"])
    print(f"\n{workload}: median {unit}, and median ratio to bare of the same round (min..max)")
    for m in modes:
        vals = [r["value"] for r in rs if r["mode"] == m]
        ratios = [r["value"] / bare[r["round"]] for r in rs if r["mode"] == m and r["round"] in bare]
        line = f"  {m:<18} n={len(vals):<2} median {statistics.median(vals):9.4f}  range {min(vals):.4f}..{max(vals):.4f}"
        if m != "bare" and ratios:
            line += f"  ratio {statistics.median(ratios):.3f} ({min(ratios):.3f}..{max(ratios):.3f})"
        print(line)
EOF
    echo "command: bash bench/launch_probe.sh (${SECONDS}s)"
}

main "$@" 2>&1 | tee "$OUTDIR/probe-log.txt"
exit "${PIPESTATUS[0]}"
