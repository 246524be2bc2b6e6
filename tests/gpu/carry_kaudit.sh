#!/usr/bin/env bash
# tests/gpu/carry_kaudit.sh - build the full kaudit here (the GPU machine
# lacks cJSON's and xxHash's headers), install it to .gpu-carry/kaudit with
# an RPATH to its own lib/kaudit, and put beside it the one shared library
# the GPU machine does not have (libcjson.so.1).  Then carry .gpu-carry/kaudit
# to the GPU machine (the device tool's carry) for tests/gpu/audit_h200.sh.
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$ROOT/build-carry
P=$ROOT/.gpu-carry/kaudit
# No plots: the GPU machine has no cairo (they are drawn here from the ledger).
cmake -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=Release -DKAUDIT_INVENTORY_REQUIRED=ON -DKAUDIT_PLOTS=OFF \
    -DCMAKE_INSTALL_RPATH='$ORIGIN/../lib/kaudit' -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON >/dev/null
cmake --build "$B" -j"$(nproc)" >/dev/null
rm -rf "$P"
cmake --install "$B" --prefix "$P" >/dev/null
cp -L /usr/lib/x86_64-linux-gnu/libcjson.so.1 "$P/lib/kaudit/"
# the example sessions are not needed there
rm -rf "$P/share/kaudit/examples"
du -sh "$P"
