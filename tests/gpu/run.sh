#!/usr/bin/env bash
# tests/gpu/run.sh - the GPU suite of issue 2 (item 8), in one command.
#
#   bash tests/gpu/run.sh            (from the repository root, on the GPU machine)
#
# Builds kaudit (core only) and the CUDA test programs, then runs each
# scenario twice, bare and under `kaudit run`, compares the program's stdout
# bit for bit, and asserts on `kaudit dump --json` of the recorded session
# (tests/gpu/check_session.py).  Scenarios:
#   raw_cublas       nvcc program (static cudart): own kernels, one named like a
#                    cuBLAS kernel, cublasSgemm on two streams, event timing
#   torch_ops        PyTorch: matmul fp32/bf16, conv2d, add, a load_inline kernel;
#                    kernel counts compared with a separate torch.profiler run
#   triton_add       a Triton kernel
#   side_stream      nvcc program: work on a side stream, event timing
#   fork_subprocess  PyTorch parent, scrubbed-env python child, os.fork child
#
# Output: every line goes to the console and to $OUT/log.txt ($OUT defaults
# to ./gpu-out).  Also written there: summary.json (every result),
# fixtures.tar.gz (a few small recorded sessions for the analyzer's tests),
# details.tar.gz (each run's stdout/stderr, dumps, build logs).  The last
# line is exactly "N passed, M failed"; the exit status is non-zero if M > 0.
#
# Environment:
#   KAUDIT_GPU_SKIP_INLINE=1   leave out the load_inline extension
#   KAUDIT_GPU_INLINE_FULL=1   build the extension with torch/extension.h (slow)
#   KAUDIT_GPU_ONLY="a b"      run only these scenarios
#   KAUDIT_GPU_CUPTI_HINT=1    export KAUDIT_CUPTI_LIB (PyTorch's libcupti for the Python
#                              runs, the toolkit's for nvcc programs); by default kaudit
#                              finds libcupti itself, and that lookup is under test
#   KAUDIT_GPU_DEADLINE_S=480  start no scenario after this many seconds
#   KAUDIT_GPU_TIMEOUT_S=240   limit for one program run
#   KAUDIT_GPU_WORK=DIR        work directory (default: a new one under /tmp)
#   PYTHON, NVCC, CUDA_HOME    tools (default python3, $CUDA_HOME/bin/nvcc, /usr/local/cuda)
set -u
set -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/log.txt

export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
PY=${PYTHON:-python3}
DEADLINE=${KAUDIT_GPU_DEADLINE_S:-480}
RUN_TIMEOUT=${KAUDIT_GPU_TIMEOUT_S:-240}
ONLY=${KAUDIT_GPU_ONLY:-}
export PATH="$CUDA_HOME/bin:$PATH"

PASSED=0
FAILED=0
RESULTS=""   # set in main: a TSV of status, name, detail

# One line per result, in the log and in $RESULTS (a TSV: no tabs or newlines in fields).
oneline() { local s=${1//$'\n'/ | }; printf '%s' "${s//$'\t'/ }"; }
pass() {
    local detail
    detail=$(oneline "${2:-}")
    PASSED=$((PASSED + 1))
    echo "PASS $1${detail:+ -- $detail}"
    printf 'PASS\t%s\t%s\n' "$1" "$detail" >>"$RESULTS"
}
fail() {
    local detail
    detail=$(oneline "${2:-}")
    FAILED=$((FAILED + 1))
    echo "FAIL $1${detail:+ -- $detail}"
    printf 'FAIL\t%s\t%s\n' "$1" "$detail" >>"$RESULTS"
}
section() { echo; echo "=== $* ($((SECONDS))s)"; }
want() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }

# Count the PASS/FAIL lines of a checker's output into the totals.
absorb() {
    local line rest
    while IFS= read -r line; do
        echo "$line"
        case "$line" in
        "PASS "*) rest=${line#PASS }; PASSED=$((PASSED + 1))
                  printf 'PASS\t%s\t\n' "$rest" >>"$RESULTS" ;;
        "FAIL "*) rest=${line#FAIL }; FAILED=$((FAILED + 1))
                  printf 'FAIL\t%s\t\n' "$rest" >>"$RESULTS" ;;
        esac
    done
}

env_facts() {
    section "environment"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(uname -n)  kernel: $(uname -r)  cpus: $(nproc)"
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi -L
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
            --format=csv
    else
        echo "nvidia-smi: not found"
    fi
    "$NVCC" --version | tail -2 || echo "nvcc: not found at $NVCC"
    "$PY" - <<'EOF' 2>&1 || echo "python facts failed"
import sys
print("python", sys.version.split()[0], sys.executable)
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda,
          "cudnn", torch.backends.cudnn.version(),
          "device", torch.cuda.get_device_name() if torch.cuda.is_available() else "none")
except Exception as exc:
    print("torch: not importable:", exc)
try:
    import triton
    print("triton", triton.__version__)
except Exception as exc:
    print("triton: not importable:", exc)
EOF
    local xx
    xx=$(ldconfig -p 2>/dev/null | grep -i xxhash | tr -s ' \t' ' ' | paste -sd';')
    echo "libxxhash (ldconfig -p): ${xx:-none}"
    if command -v cuobjdump >/dev/null; then
        echo "cuobjdump: $(command -v cuobjdump) ($(cuobjdump --version 2>&1 | tail -1))"
    else
        echo "cuobjdump: not found"
    fi
    echo "cmake: $(cmake --version 2>/dev/null | head -1)  ninja: $(ninja --version 2>/dev/null)"
    echo "c++: $(c++ --version 2>/dev/null | head -1)"
}

# libcupti for KAUDIT_CUPTI_LIB: the one PyTorch ships, and the toolkit's.
find_cupti() {
    TORCH_CUPTI=$("$PY" - <<'EOF' 2>/dev/null
import glob, os, sysconfig
for base in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
    for pat in ("nvidia/cu13/lib/libcupti.so.13", "nvidia/*/lib/libcupti.so.13",
                "nvidia/*/lib/libcupti.so*"):
        hits = sorted(glob.glob(os.path.join(base, pat)))
        if hits:
            print(hits[0]); raise SystemExit
EOF
)
    RAW_CUPTI=""
    for f in "$CUDA_HOME/extras/CUPTI/lib64/libcupti.so.13" "$CUDA_HOME/lib64/libcupti.so.13" \
        "$CUDA_HOME/targets/x86_64-linux/lib/libcupti.so.13"; do
        if [ -e "$f" ]; then RAW_CUPTI=$f; break; fi
    done
    TORCH_CUDA_LIBDIR=""
    [ -n "$TORCH_CUPTI" ] && TORCH_CUDA_LIBDIR=$(dirname "$TORCH_CUPTI")
    echo "libcupti for PyTorch runs: ${TORCH_CUPTI:-none found}"
    echo "libcupti for nvcc programs: ${RAW_CUPTI:-none found}"
    if [ "${KAUDIT_GPU_CUPTI_HINT:-0}" = 1 ]; then
        echo "KAUDIT_GPU_CUPTI_HINT=1: these are exported as KAUDIT_CUPTI_LIB for the traced runs"
    else
        echo "KAUDIT_CUPTI_LIB is not exported: kaudit finds libcupti itself (KAUDIT_GPU_CUPTI_HINT=1 to help it)"
        TORCH_CUPTI=""
        RAW_CUPTI=""
    fi
}

build_all() {
    section "build"
    local t0=$SECONDS
    # The load_inline extension builds in the background meanwhile (bare, outside
    # any measured run), into the TORCH_EXTENSIONS_DIR every torch run reuses.
    if want torch_ops && [ "${KAUDIT_GPU_SKIP_INLINE:-0}" != 1 ]; then
        (cd "$ROOT" && MAX_JOBS=8 timeout -k 10 420 "$PY" tests/gpu/torch_ops.py --build-only) \
            >"$WORK/inline-build.log" 2>&1 &
        INLINE_PID=$!
    fi
    (cd "$ROOT" && cmake -S . -B build-gpu -G Ninja -DKAUDIT_CORE_ONLY=ON &&
        cmake --build build-gpu) >"$WORK/kaudit-build.log" 2>&1
    local rc=$?
    KAUDIT=$ROOT/build-gpu/bin/kaudit
    PRELOAD=$ROOT/build-gpu/lib/libkaudit_preload.so
    if [ $rc -eq 0 ] && [ -x "$KAUDIT" ] && [ -e "$PRELOAD" ]; then
        pass "build: kaudit and libkaudit_preload.so (core only)" "$((SECONDS - t0))s"
        "$KAUDIT" --version 2>&1 | head -1
        KAUDIT_OK=1
    else
        fail "build: kaudit and libkaudit_preload.so (core only)" "rc=$rc; see kaudit-build.log"
        tail -30 "$WORK/kaudit-build.log"
        KAUDIT_OK=0
    fi

    mkdir -p "$WORK/bin"
    # shellcheck disable=SC2054  # the commas belong to the linker option
    local p1 p2 blas=(-Xlinker -rpath,"$CUDA_HOME/lib64" -lcublas)
    if [ ! -e "$CUDA_HOME/lib64/libcublas.so" ] && [ -n "$TORCH_CUDA_LIBDIR" ] &&
        [ -e "$TORCH_CUDA_LIBDIR/libcublas.so.13" ]; then
        # No toolkit cuBLAS to link: use the copy PyTorch ships.
        local tl=$TORCH_CUDA_LIBDIR
        # shellcheck disable=SC2054
        blas=(-L"$tl" -l:libcublas.so.13 -Xlinker -rpath,"$tl")
        echo "no $CUDA_HOME/lib64/libcublas.so: linking raw_cublas with $tl/libcublas.so.13"
    fi
    "$NVCC" -O2 -arch=sm_90 -o "$WORK/bin/raw_cublas" "$ROOT/tests/gpu/raw_cublas.cu" "${blas[@]}" \
        >"$WORK/nvcc-raw_cublas.log" 2>&1 &
    p1=$!
    "$NVCC" -O2 -arch=sm_90 -o "$WORK/bin/side_stream" "$ROOT/tests/gpu/side_stream.cu" \
        >"$WORK/nvcc-side_stream.log" 2>&1 &
    p2=$!
    if wait $p1; then pass "build: raw_cublas with nvcc (static cudart, -lcublas)"
    else fail "build: raw_cublas with nvcc" "$(tail -5 "$WORK/nvcc-raw_cublas.log")"; fi
    if wait $p2; then pass "build: side_stream with nvcc"
    else fail "build: side_stream with nvcc" "$(tail -5 "$WORK/nvcc-side_stream.log")"; fi
    BUILD_T0=$t0
}

# The load_inline build runs in the background from the start; the torch
# scenario waits for it here.
await_inline() {
    [ -n "${INLINE_PID:-}" ] || return 0
    if wait "$INLINE_PID"; then
        pass "build: load_inline extension ($(grep -o 'inline_mode [a-z]*' "$WORK/inline-build.log" | head -1))" \
            "ready $((SECONDS - BUILD_T0))s after the builds began"
    else
        fail "build: load_inline extension" "$(tail -5 "$WORK/inline-build.log" | tr '\n' ' ')"
    fi
    INLINE_PID=""
}

# run_pair NAME CUPTI_LIB CMD... : bare run, kaudit run, stdout comparison, dump.
# Leaves $WORK/NAME/{bare,kaudit}.{out,err,rc}, session/, dump.json.
run_pair() {
    local name=$1 cupti=$2
    shift 2
    local d=$WORK/$name rc_b rc_k t0
    mkdir -p "$d"
    printf '%q ' "$@" >"$d/command.txt"
    t0=$SECONDS
    (
        cd "$ROOT" || exit 99
        export TRITON_CACHE_DIR=$d/triton-cache-bare
        timeout -k 10 "$RUN_TIMEOUT" "$@"
    ) >"$d/bare.out" 2>"$d/bare.err"
    rc_b=$?
    echo "$rc_b" >"$d/bare.rc"
    local tb=$((SECONDS - t0))
    t0=$SECONDS
    (
        cd "$ROOT" || exit 99
        export TRITON_CACHE_DIR=$d/triton-cache-kaudit
        if [ -n "$cupti" ]; then export KAUDIT_CUPTI_LIB=$cupti; fi
        timeout -k 10 "$RUN_TIMEOUT" "$KAUDIT" run -d "$d/session" -- "$@"
    ) >"$d/kaudit.out" 2>"$d/kaudit.err"
    rc_k=$?
    echo "$rc_k" >"$d/kaudit.rc"
    local tk=$((SECONDS - t0))
    echo "($name: bare ${tb}s, under kaudit ${tk}s)"

    if [ "$rc_b" -eq 0 ]; then pass "$name: bare run exits 0"
    else fail "$name: bare run exits 0" "rc=$rc_b; stderr: $(tail -3 "$d/bare.err" | tr '\n' ' ')"; fi
    if [ "$rc_k" -eq 0 ]; then pass "$name: run under kaudit exits 0"
    else fail "$name: run under kaudit exits 0" "rc=$rc_k; stderr: $(tail -3 "$d/kaudit.err" | tr '\n' ' ')"; fi
    if [ ! -s "$d/bare.out" ] || ! grep -q 'sha256=' "$d/bare.out"; then
        fail "$name: program printed result hashes" "bare stdout has no sha256= line"
    elif cmp -s "$d/bare.out" "$d/kaudit.out"; then
        pass "$name: stdout bitwise identical with and without kaudit" \
            "$(wc -l <"$d/bare.out") lines, sha256 $(sha256sum <"$d/bare.out" | cut -c1-16)"
    else
        fail "$name: stdout bitwise identical with and without kaudit" \
            "$(diff "$d/bare.out" "$d/kaudit.out" | head -6 | tr '\n' ' ')"
    fi
    if grep -q '^kaudit:' "$d/bare.err"; then
        fail "$name: bare run is really bare" "kaudit messages in the bare run's stderr"
    fi

    if [ ! -d "$d/session" ]; then
        fail "$name: session directory recorded" "$d/session does not exist"
        return 1
    fi
    echo "session: $(find "$d/session" -type f | wc -l) files, $(du -sk "$d/session" | cut -f1) KiB"
    if timeout -k 5 120 "$KAUDIT" dump --json "$d/session" >"$d/dump.json" 2>"$d/dump.err"; then
        pass "$name: kaudit dump --json reads the session" "$(wc -c <"$d/dump.json") bytes"
    else
        # dump still prints what it could read: check that too
        fail "$name: kaudit dump --json reads the session" "$(tail -3 "$d/dump.err" | tr '\n' ' ')"
        [ -s "$d/dump.json" ] || return 1
    fi
    return 0
}

check() {
    local name=$1
    shift
    local d=$WORK/$name
    "$PY" "$ROOT/tests/gpu/check_session.py" "$name" --dump "$d/dump.json" \
        --stderr "$d/kaudit.err" "$@" >"$d/check.txt" 2>&1
    local rc=$?
    absorb <"$d/check.txt"
    if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$d/check.txt"; then
        fail "$name: checker ran" "exit $rc without a FAIL line: $(tail -3 "$d/check.txt" | tr '\n' ' ')"
    fi
}

late() {
    if [ "$SECONDS" -gt "$DEADLINE" ]; then
        fail "$1: not run" "suite deadline of ${DEADLINE}s passed (at ${SECONDS}s)"
        return 0
    fi
    return 1
}

scenario_raw_cublas() {
    want raw_cublas || return 0
    section "scenario raw_cublas"
    late raw_cublas && return 0
    [ -x "$WORK/bin/raw_cublas" ] || { fail "raw_cublas: not run" "no binary"; return 0; }
    run_pair raw_cublas "$RAW_CUPTI" "$WORK/bin/raw_cublas" && check raw_cublas
}

scenario_side_stream() {
    want side_stream || return 0
    section "scenario side_stream"
    late side_stream && return 0
    [ -x "$WORK/bin/side_stream" ] || { fail "side_stream: not run" "no binary"; return 0; }
    run_pair side_stream "$RAW_CUPTI" "$WORK/bin/side_stream" && check side_stream
}

scenario_torch_ops() {
    want torch_ops || return 0
    section "scenario torch_ops"
    late torch_ops && return 0
    local d=$WORK/torch_ops
    mkdir -p "$d"
    await_inline
    # The independent count of kernels: torch.profiler in a separate run, no kaudit.
    (cd "$ROOT" && timeout -k 10 "$RUN_TIMEOUT" "$PY" tests/gpu/torch_ops.py --profile "$d/profile.json") \
        >"$d/profile.out" 2>"$d/profile.err"
    local rc=$?
    if [ $rc -eq 0 ] && [ -s "$d/profile.json" ]; then
        pass "torch_ops: torch.profiler reference run" \
            "$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d.get("chrome_kernel_counts") or {}; print(sum(c.values()), "kernels,", len(c), "names", d.get("errors") or "")' "$d/profile.json")"
    else
        fail "torch_ops: torch.profiler reference run" "rc=$rc: $(tail -3 "$d/profile.err" | tr '\n' ' ')"
    fi
    run_pair torch_ops "$TORCH_CUPTI" "$PY" tests/gpu/torch_ops.py || return 0
    if cmp -s "$d/bare.out" "$d/profile.out"; then
        echo "INFO torch_ops: the torch.profiler run printed the same results"
    else
        echo "INFO torch_ops: the torch.profiler run printed different results (not kaudit's doing)"
    fi
    check torch_ops --profile "$d/profile.json"
}

scenario_triton_add() {
    want triton_add || return 0
    section "scenario triton_add"
    late triton_add && return 0
    run_pair triton_add "$TORCH_CUPTI" "$PY" tests/gpu/triton_add.py && check triton_add
}

scenario_fork_subprocess() {
    want fork_subprocess || return 0
    section "scenario fork_subprocess"
    late fork_subprocess && return 0
    run_pair fork_subprocess "$TORCH_CUPTI" "$PY" tests/gpu/fork_subprocess.py &&
        check fork_subprocess
}

scenario_ctypes_cublas() {
    want ctypes_cublas || return 0
    section "scenario ctypes_cublas"
    late ctypes_cublas && return 0
    run_pair ctypes_cublas "$TORCH_CUPTI" "$PY" tests/gpu/ctypes_cublas.py && check ctypes_cublas
}

# A few small sessions, with what the program printed, for the analyzer's tests.
pack_fixtures() {
    section "fixtures"
    local fx=$WORK/fixtures n=0 name d size
    rm -rf "$fx"
    mkdir -p "$fx"
    for name in raw_cublas torch_ops side_stream fork_subprocess ctypes_cublas triton_add; do
        d=$WORK/$name
        [ -d "$d/session" ] && [ -s "$d/dump.json" ] || continue
        [ $n -lt 5 ] || break
        mkdir -p "$fx/$name"
        cp -a "$d/session" "$fx/$name/session"
        cp "$d/dump.json" "$fx/$name/dump.json"
        cp "$d/kaudit.out" "$fx/$name/stdout.txt"
        cp "$d/kaudit.err" "$fx/$name/stderr.txt"
        cp "$d/command.txt" "$fx/$name/command.txt"
        [ -f "$d/profile.json" ] && cp "$d/profile.json" "$fx/$name/profile.json"
        size=$(tar -C "$fx" -czf - "$name" | wc -c)
        if [ "$size" -lt 2000000 ]; then
            echo "fixture $name: $size bytes compressed"
            n=$((n + 1))
        else
            echo "fixture $name: $size bytes compressed, over 2 MB: left out"
            rm -rf "${fx:?}/$name"
        fi
    done
    if [ $n -gt 0 ]; then
        (cd "$fx" && printf '%s\n' \
            "Sessions recorded by tests/gpu/run.sh on $(uname -n) at $(date -u +%Y-%m-%dT%H:%M:%SZ)." \
            "Each directory: session/ (kaudit run -d), dump.json (kaudit dump --json)," \
            "stdout.txt and stderr.txt of the traced program, command.txt." >README.txt)
        tar -C "$fx" -czf "$OUTDIR/fixtures.tar.gz" . &&
            echo "fixtures.tar.gz: $(wc -c <"$OUTDIR/fixtures.tar.gz") bytes, $n session(s)"
    else
        echo "no session to pack"
    fi
}

pack_details() {
    local list=$WORK/details.list
    (cd "$WORK" && find . -maxdepth 2 -type f \( -name '*.out' -o -name '*.err' -o -name '*.rc' \
        -o -name '*.log' -o -name 'check.txt' -o -name 'command.txt' -o -name 'profile.json' \
        -o -name 'dump.json' \) | sort) >"$list"
    tar -C "$WORK" -czf "$OUTDIR/details.tar.gz" -T "$list" 2>/dev/null
    if [ "$(wc -c <"$OUTDIR/details.tar.gz")" -gt 15000000 ]; then
        grep -v 'dump.json$' "$list" >"$list.small"
        tar -C "$WORK" -czf "$OUTDIR/details.tar.gz" -T "$list.small" 2>/dev/null
    fi
    echo "details.tar.gz: $(wc -c <"$OUTDIR/details.tar.gz") bytes"
}

write_summary() {
    "$PY" - "$RESULTS" "$OUTDIR/summary.json" "$PASSED" "$FAILED" "$SECONDS" "$WORK" <<'EOF' ||
import json, sys
results, out, passed, failed, secs, work = sys.argv[1:]
rows = []
with open(results) as f:
    for line in f:
        parts = line.rstrip("\n").split("\t")
        parts += [""] * (3 - len(parts))
        rows.append({"status": parts[0], "name": parts[1], "detail": parts[2]})
with open(out, "w") as f:
    json.dump({"passed": int(passed), "failed": int(failed), "elapsed_s": int(secs),
               "work_dir": work, "results": rows}, f, indent=1)
EOF
        echo "summary.json could not be written"
}

main() {
    cd "$ROOT" || exit 99
    PY=$(command -v "$PY") || { echo "no python: ${PYTHON:-python3}"; echo "0 passed, 1 failed"; return 1; }
    WORK=${KAUDIT_GPU_WORK:-$(mktemp -d /tmp/kaudit-gpu.XXXXXX)}
    mkdir -p "$WORK"
    RESULTS=$WORK/results.tsv
    : >"$RESULTS"
    export TORCH_EXTENSIONS_DIR=$WORK/torch-extensions
    export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
    export PYTHONDONTWRITEBYTECODE=1
    echo "kaudit GPU suite: repo $ROOT, work $WORK, results in $OUTDIR"

    env_facts
    find_cupti
    build_all
    if [ "$KAUDIT_OK" = 1 ]; then
        scenario_raw_cublas
        scenario_side_stream
        scenario_torch_ops
        scenario_triton_add
        scenario_fork_subprocess
        scenario_ctypes_cublas
    else
        fail "scenarios: not run" "kaudit did not build"
    fi
    pack_fixtures
    pack_details
    write_summary

    section "summary"
    if [ "$FAILED" -gt 0 ]; then
        echo "failed:"
        grep '^FAIL' "$RESULTS" | cut -f2,3 | sed 's/\t/ -- /; s/ -- $//; s/^/  /' | cut -c1-300
    fi
    echo "elapsed ${SECONDS}s; log, summary.json, fixtures.tar.gz, details.tar.gz in $OUTDIR"
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}

main "$@" 2>&1 | tee "$LOG"
exit "${PIPESTATUS[0]}"
