#!/bin/sh
# tests/cli_seal.sh KAUDIT SOURCE_DIR - the seal `kaudit run` writes over a
# session (session/session_seal.h): `kaudit verify` and `kaudit analyze` accept
# an intact session and refuse one whose files were changed, removed or
# added after the run, naming the file; a session without a seal is judged
# as before, and verify says it is not sealed.
. "$(dirname "$0")/cli_env.sh"
C=$SRC/contracts/examples/torch-ops.json

run run -d "$T/s" -- sh -c 'echo hello'
check "run: exit 0" rc 0
check "run: the command's output only" out_has "^hello$"
check "run: a seal" [ -f "$T/s/seal" ]
check "seal: names info" grep -q '^info [0-9]* [0-9a-f]\{32\}$' "$T/s/seal"
check "seal: names the trace" grep -q '^p[0-9]*-[0-9]*\.kat [0-9]* [0-9a-f]\{32\}$' "$T/s/seal"
check "seal: a chain" grep -q '^chain [0-9a-f]\{32\}$' "$T/s/seal"
run verify "$T/s"
check "verify intact: exit 0" rc 0
check "verify intact: the chain" out_has "intact, chain $(sed -n 's/^chain //p' "$T/s/seal")"
run analyze "$T/s" --contract "$C"
check "analyze intact: judged (INCONCL, semantic unsupported)" rc 11

trace=$(ls "$T/s" | grep '\.kat$' | head -1)
cp "$T/s/$trace" "$T/keep"
printf 'x' >>"$T/s/$trace"
run verify "$T/s"
check "a trace grown: verify exit 1" rc 1
check "a trace grown: named" err_has "does not match its seal: sealed '$trace"
run analyze "$T/s" --contract "$C"
check "a trace grown: analyze refuses (exit 1)" rc 1
check "a trace grown: analyze says why" err_has "does not match its seal"
run report "$T/s" --contract "$C"
check "a trace grown: report refuses (exit 1)" rc 1
cp "$T/keep" "$T/s/$trace"
run verify "$T/s"
check "restored: intact again" rc 0

cp "$T/s/$trace" "$T/s/p1-1.kat"
run verify "$T/s"
check "a trace copied in: refused" rc 1
rm "$T/s/p1-1.kat"
rm "$T/s/$trace"
run verify "$T/s"
check "a trace removed: refused" rc 1
cp "$T/keep" "$T/s/$trace"
sed -i 's/^status: .*/status: exited 0 (edited)/' "$T/s/info"
run verify "$T/s"
check "info edited: refused" rc 1
check "info edited: named" err_has "sealed 'info "

run run -d "$T/u" -- true
rm "$T/u/seal"
run verify "$T/u"
check "seal removed: verify exit 1" rc 1
check "seal removed: said (info says it was sealed)" err_has "lost its seal"
run analyze "$T/u" --contract "$C"
check "seal removed: analyze refuses (exit 1)" rc 1
# a session from before seals (or a core build): info does not promise one
sed -i '/^seal: /d' "$T/u/info"
run verify "$T/u"
check "no seal: verify exit 11" rc 11
check "no seal: said" out_has "not sealed"
run analyze "$T/u" --contract "$C"
check "no seal: analyze judges as before" rc 11
# records removed from an unsealed session (one recorded before seals, or
# whose seal was taken away): a real H200 session with two cuBLAS calls, each
# VENDOR_CALL record retyped as padding.  It was implementation FAIL (C3b);
# with its calls hidden it must not become PASS: the kernels' vendor windows
# name calls that have no record, and info counts calls the traces lack
# hide_vendor_calls DIR: every VENDOR_CALL record of DIR's traces retyped as padding
hide_vendor_calls() {
    python3 - "$1" <<'PYEOF'
import os, struct, sys
for name in os.listdir(sys.argv[1]):
    if not name.endswith(".kat"):
        continue
    path = os.path.join(sys.argv[1], name)
    b = bytearray(open(path, "rb").read())
    at = 64
    while at + 8 <= len(b):
        size, kind = struct.unpack_from("<IH", b, at)
        if size < 8:
            break
        if kind == 19:  # KAT_REC_VENDOR_CALL -> KAT_REC_PAD
            struct.pack_into("<H", b, at + 4, 1)
        at += size
    open(path, "wb").write(b)
PYEOF
}
cp -r "$SRC/examples/h200-raw-cublas/session" "$T/r"
rm -f "$T/r/seal"
RC=$SRC/contracts/examples/raw-cublas.json
run analyze "$T/r" --contract "$RC"
check "unsealed, untouched: FAIL (exit 10)" rc 10
hide_vendor_calls "$T/r"
run analyze "$T/r" --contract "$RC"
check "vendor calls removed: implementation INCONCLUSIVE, not PASS" out_has "^  implementation  INCONCLUSIVE"
run analyze "$T/r" --contract "$RC" --json
check "vendor calls removed: vendor-call-missing" out_has '"vendor-call-missing"'
check "vendor calls removed: info-counts-disagree" out_has '"info-counts-disagree"'
# the same in trace format 2, where the windows are in the API records' tails
cp -r "$SRC/examples/controls-format2/deleg_nn_linear/session" "$T/r2"
R2C=$SRC/contracts/controls/linear.json
run analyze "$T/r2" --contract "$R2C"
check "format 2, untouched: FAIL (exit 10)" rc 10
hide_vendor_calls "$T/r2"
run analyze "$T/r2" --contract "$R2C"
check "format 2, vendor calls removed: implementation INCONCLUSIVE, not PASS" out_has "^  implementation  INCONCLUSIVE"
run analyze "$T/r2" --contract "$R2C" --json
check "format 2, vendor calls removed: vendor-call-missing" out_has '"vendor-call-missing"'

run verify
check "verify without a directory: exit 2" rc 2

finish
