#!/usr/bin/env bash
# tests/gpu/calibrate.sh - record the session `kaudit inventory calibrate`
# reads (issue 3, item 3b): tests/gpu/calibrate_exercise.py under kaudit run,
# on the GPU machine.  Writes $OUT/calibration-session.tar.gz; calibrate it
# where the full build exists:
#   kaudit inventory calibrate -o OUT.inventory INVENTORY SESSION_DIR
set -u
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
cmake -S . -B build-gpu -G Ninja -DKAUDIT_CORE_ONLY=ON >/dev/null && cmake --build build-gpu >/dev/null || exit 1
W=$(mktemp -d)
time build-gpu/bin/kaudit run -v -d "$W/calibration" -- python3 tests/gpu/calibrate_exercise.py || exit 1
build-gpu/bin/kaudit dump "$W/calibration" | grep -E "counts:|in a vendor window|health" | head -20
tar czf "$OUT/calibration-session.tar.gz" -C "$W" calibration
ls -la "$OUT"
