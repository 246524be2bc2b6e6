#!/usr/bin/env bash
# bench/overhead_probe.sh - where does kaudit's launch-path cost come from?
# Runs the launch-bound loop bare and with the parts of kaudit switched on one
# at a time (the preload's wrappers alone; CUPTI alone; both), interleaved.
set -u
OUT=${OUT:-$PWD/bench-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/probe-log.txt") 2>&1
[ -x build-gpu/bin/kaudit ] || { cmake -S . -B build-gpu -G Ninja -DKAUDIT_CORE_ONLY=ON >/dev/null && cmake --build build-gpu >/dev/null; } || exit 1
LIB=$PWD/build-gpu/lib/libkaudit_preload.so
ITERS=${PROBE_ITERS:-2000}
W=$(mktemp -d)
loop() { python3 bench/overhead_loops.py --loop launch --launch-iters "$ITERS" --launch-warmup 200; }
run_mode() {
  local mode=$1 d="$W/$1.$2"; mkdir -p "$d"
  case $mode in
    bare) loop ;;
    preload_only) KAUDIT_SESSION_DIR=$d LD_PRELOAD=$LIB loop ;;
    cupti_only) KAUDIT_SESSION_DIR=$d CUDA_INJECTION64_PATH=$LIB loop ;;
    cupti_noapi) KAUDIT_API_RECORDS=none KAUDIT_SESSION_DIR=$d CUDA_INJECTION64_PATH=$LIB loop ;;
    full) build-gpu/bin/kaudit run -d "$d" -- python3 bench/overhead_loops.py --loop launch --launch-iters "$ITERS" --launch-warmup 200 ;;
    full_defclock) KAUDIT_CUPTI_CLOCK=default build-gpu/bin/kaudit run -d "$d" -- python3 bench/overhead_loops.py --loop launch --launch-iters "$ITERS" --launch-warmup 200 ;;
    full_bigbuf) KAUDIT_CUPTI_BUFFER_MB=64 build-gpu/bin/kaudit run -d "$d" -- python3 bench/overhead_loops.py --loop launch --launch-iters "$ITERS" --launch-warmup 200 ;;
    full_noapi) KAUDIT_API_RECORDS=none build-gpu/bin/kaudit run -d "$d" -- python3 bench/overhead_loops.py --loop launch --launch-iters "$ITERS" --launch-warmup 200 ;;
  esac
}
MODES=${PROBE_MODES:-"bare preload_only cupti_only cupti_noapi full full_noapi"}
for r in ${PROBE_ROUNDS:-1 2 3}; do
  for m in $MODES; do
    t=$(run_mode "$m" "$r" 2>"$W/$m.$r.err" | tail -1)
    echo "round $r $m $t s ($(du -sk "$W/$m.$r" 2>/dev/null | cut -f1) KiB)"
  done
done
for m in $MODES; do tail -3 "$W/$m.1.err"; done
