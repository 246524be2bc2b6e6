#!/usr/bin/env bash
# bench/carry_wrapper_skips.sh - bench builds of the preload whose
# cublasLtMatmul wrapper leaves parts out (preload/CMakeLists.txt,
# KAUDIT_WRAPPER_SKIP), each installed beside the carried kaudit as
# .gpu-carry/skip-NAME (a copy of .gpu-carry/kaudit with that preload), for
# bench/variants_h200.sh: "NAME=.gpu-carry/skip-NAME".  Never shipped.
#
#   bash tests/gpu/carry_kaudit.sh && bash bench/carry_wrapper_skips.sh [NAME=PARTS ...]
#
# Default: summary clock caller emit, each alone; parts=summary;clock;caller;emit;
# all (the call passes straight through).  PARTS "profile" makes instead a build
# that counts cycles per stage of the wrapper (KAUDIT_WRAPPER_PROFILE, for
# bench/wrapper_profile.py; bench/variants_h200.sh's VARIANTS_PROFILE).
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE=$ROOT/.gpu-carry/kaudit
[ -f "$BASE/lib/kaudit/libkaudit_preload.so" ] || { echo "run tests/gpu/carry_kaudit.sh first"; exit 1; }
[ $# -gt 0 ] || set -- summary=summary clock=clock caller=caller emit=emit "parts=summary;clock;caller;emit" all=all
for spec in "$@"; do
    name=${spec%%=*} parts=${spec#*=}
    B=$ROOT/build-skip-$name
    if [ "$parts" = profile ]; then
        flags=(-DKAUDIT_WRAPPER_SKIP= -DKAUDIT_WRAPPER_PROFILE=ON)
    else
        flags=("-DKAUDIT_WRAPPER_SKIP=$parts" -DKAUDIT_WRAPPER_PROFILE=OFF)
    fi
    cmake -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=Release -DKAUDIT_PLOTS=OFF "${flags[@]}" >/dev/null
    cmake --build "$B" -j"$(nproc)" --target kaudit_preload >/dev/null
    rm -rf "$ROOT/.gpu-carry/skip-$name"
    cp -a "$BASE" "$ROOT/.gpu-carry/skip-$name"
    cp "$(find "$B" -name libkaudit_preload.so -type f | head -1)" "$ROOT/.gpu-carry/skip-$name/lib/kaudit/"
    echo "skip-$name: $parts"
done
