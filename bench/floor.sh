#!/usr/bin/env bash
# bench/floor.sh - how far below kaudit's cost the launch-bound loop can get
# while every kernel's GPU time still comes from CUPTI.
#
#   bash bench/floor.sh        (repository root, GPU machine; about 8 minutes)
#
# The floor is a CUPTI client that does nothing but count
# (bench/cupti_toggle.c), injected through CUDA_INJECTION64_PATH into the
# bare loop from process start, as kaudit's client is:
#   bare_floork    CONCURRENT_KERNEL activity records only
#   bare_floorcbk  those, and a callback on every launch API that keeps the
#                  correlation id and a timestamp (what a kernel record needs
#                  from the host: who launched it, when)
# against bare, kaudit, kaudit without any activity kind
# (KAUDIT_CUPTI_KINDS=device: everything of kaudit except the activity
# records) and torch.profiler, in interleaved rounds (bench/overhead.sh;
# FLOOR_ROUNDS, FLOOR_BUDGET_S; FLOOR_MODES and FLOOR_VARIANTS replace the
# modes beside the floor, in BENCH_MODES and BENCH_VARIANTS syntax).  First
# it prints what a host timestamp costs here (bench/host_clock.c).
#
# Output: the tables on stdout; $OUT/floor.tar.gz holds bench.json, the
# console log, each floor run's record counts and the host clock line.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
W=$(mktemp -d /tmp/kaudit-floor.XXXXXX)
cd "$ROOT" || exit 99

cc -O2 -Ipreload -Isession -o "$W/host_clock" bench/host_clock.c preload/host_clock.c && "$W/host_clock" | tee "$W/host-clock.json"
# Linked by soname: in a PyTorch process the libcupti.so.13 PyTorch already
# loaded is the one used, as it is for kaudit.
gcc -O2 -shared -fPIC -o "$W/libcupti_toggle.so" bench/cupti_toggle.c -I"$CUDA_HOME/include" \
    -L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lcupti || exit 1

INJECT="CUDA_INJECTION64_PATH=$W/libcupti_toggle.so"
mkdir -p "$W/bench"
touch "$W/bench-started"
OUT=$W/bench BENCH_MODES=${FLOOR_MODES:-"bare kaudit profiler"} BENCH_ROUNDS=${FLOOR_ROUNDS:-10} \
    BENCH_BUDGET_S=${FLOOR_BUDGET_S:-330} BENCH_MARGINAL=0 \
    BENCH_ARGS="--loop launch --launch-iters 6000 --launch-segments 12 --json" \
    BENCH_VARIANTS=${FLOOR_VARIANTS-"none:KAUDIT_CUPTI_KINDS=device"} \
    BENCH_BARE_VARIANTS="floork:$INJECT+CT_INJECT=kernel floorcbk:$INJECT+CT_INJECT=cb_kernel" \
    bash bench/overhead.sh >"$W/bench/console.txt" 2>&1
# What the floor clients recorded, per run: their stderr, kept in the work
# directory overhead.sh made (the one newer than the marker).
find /tmp -maxdepth 1 -name 'kaudit-bench.*' -newer "$W/bench-started" -exec sh -c \
    'cat "$1"/err-*-bare_floor* 2>/dev/null' _ {} \; | grep "cupti_toggle:" >"$W/floor-counts.txt"
tar -C "$W" -czf "$OUTDIR/floor.tar.gz" .
echo "===== floor clients' records (first 4 runs)"
head -4 "$W/floor-counts.txt"
echo "===== bench"
tail -30 "$W/bench/console.txt"
echo "done at $SECONDS s"
