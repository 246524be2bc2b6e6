#!/bin/sh
# analyze_bench.sh - build kaudit_analyze_bench if needed and run it: the
# analysis of a synthetic 2,000,000-kernel session (and of N/4 and N/2, for
# the memory scaling), then once more with the shipped H200 inventory, as
# `kaudit analyze --inventory` would run.  What it measures:
# docs/analyzer-bench.md.
#
#   bench/analyze_bench.sh [BENCH-ARGS...]     e.g. --kernels 500000 --repeat 5
#
# Environment: BUILD the build directory (default: build/ in the repository);
# OUT a directory for the results (default ./bench-out): OUT/analyze-bench.txt;
# INVENTORY the inventory of the second run (default the shipped
# inventory/data/h200-torch2.11-calibrated.inventory.zst; empty: no second run).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
OUTDIR=${OUT:-./bench-out}
INVENTORY=${INVENTORY-$ROOT/inventory/data/h200-torch2.11-calibrated.inventory.zst}
BIN=$BUILD/bin/kaudit_analyze_bench
CONTRACT=$ROOT/contracts/controls/matmul.json

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    cmake -S "$ROOT" -B "$BUILD" > /dev/null
fi
cmake --build "$BUILD" --target kaudit_analyze_bench -j "$(nproc)" > /dev/null ||
    { echo "cannot build kaudit_analyze_bench in $BUILD (is bench/analyze.cmake included?)" >&2; exit 1; }
mkdir -p "$OUTDIR"
RESULT=$OUTDIR/analyze-bench.txt

{
    echo "host: $(uname -n), $(nproc) CPUs ($(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //')), $(free -g | awk '/^Mem:/ { print $2 }') GiB RAM; $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout')
    git -C "$ROOT" diff --quiet HEAD -- analyzer 2>/dev/null || [ "$rev" = 'not a git checkout' ] || rev="$rev, analyzer/ modified"
    type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt")
    echo "source: $ROOT ($rev); build: $BUILD (${type:-RelWithDebInfo, the default})"
    echo "command: $BIN --contract $CONTRACT $*"
    "$BIN" --contract "$CONTRACT" "$@"
    if [ -n "$INVENTORY" ] && [ -f "$INVENTORY" ]; then
        echo
        echo "command: $BIN --contract $CONTRACT --inventory $INVENTORY --no-scaling $*"
        "$BIN" --contract "$CONTRACT" --inventory "$INVENTORY" --no-scaling "$@"
    fi
} 2>&1 | tee "$RESULT"
echo "results in $RESULT"
# tee hides the program's exit status: a run that finished printed its summary line
grep -q '^analyze: [0-9]* kernels in ' "$RESULT" || { echo "the benchmark failed" >&2; exit 1; }
