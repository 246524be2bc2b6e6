#!/bin/sh
# tests/cli_seal.sh KAUDIT SOURCE_DIR - the seal `kaudit run` writes over a
# session (tools/session_seal.h): `kaudit verify` and `kaudit analyze` accept
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
check "no seal: verify exit 11" rc 11
check "no seal: said" out_has "not sealed"
run analyze "$T/u" --contract "$C"
check "no seal: analyze judges as before" rc 11
run verify
check "verify without a directory: exit 2" rc 2

finish
