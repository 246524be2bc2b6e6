#!/usr/bin/env bash
# tests/gpu/install_check.sh - on the GPU machine, after tests/gpu/run.sh or
# controls.sh built build-gpu (core only): install it to a fresh prefix and
# record a PyTorch matmul with the installed kaudit from another directory,
# twice without -d (numbered sessions), then dump what it recorded.
# Prints "INSTALL ok" or "INSTALL FAIL: ..." lines; writes $OUT/install.txt.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-$ROOT/gpu-out}
P=$(mktemp -d /tmp/kaudit-prefix.XXXXXX)
W=$(mktemp -d /tmp/kaudit-elsewhere.XXXXXX)
log=$OUTDIR/install.txt
fail() { echo "INSTALL FAIL: $*" | tee -a "$log"; }
cmake --install "$ROOT/build-gpu" --prefix "$P" >"$log" 2>&1 || { fail "cmake --install"; exit 1; }
cd "$W" || exit 99
prog='import torch; a = torch.randn(256, 256, device="cuda"); print(float((a @ a).sum().item()) != 0.0)'
for i in 1 2; do
    "$P/bin/kaudit" run -- python3 -c "$prog" >"$W/out$i" 2>"$W/err$i"
    echo "run $i: exit $? stdout $(cat "$W/out$i")" | tee -a "$log"
    cat "$W/err$i" >>"$log"
done
[ -f kaudit.session/info ] || fail "no kaudit.session"
[ -f kaudit-2.session/info ] || fail "the second run did not number its session"
grep -q "^preload: $P/lib/kaudit/libkaudit_preload.so" kaudit.session/info || fail "the installed preload was not used"
"$P/bin/kaudit" dump kaudit-2.session >"$W/dump.txt" 2>&1 || fail "dump"
head -40 "$W/dump.txt" >>"$log"
kernels=$(sed -n 's/^  kernels: //p' "$W/dump.txt" | head -1)
calls=$(sed -n 's/^  vendor_calls: //p' "$W/dump.txt" | head -1)
echo "kernels $kernels vendor_calls $calls" | tee -a "$log"
[ "${kernels:-0}" -gt 0 ] && [ "${calls:-0}" -gt 0 ] || fail "no kernels or vendor calls recorded"
grep -q "INSTALL FAIL" "$log" || echo "INSTALL ok" | tee -a "$log"
