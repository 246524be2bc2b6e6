#!/bin/sh
# tests/cli_analyze.sh KAUDIT SOURCE_DIR - `kaudit analyze`, `report` and
# `contract` on bad input: a clear message naming the file and the place, a
# non-zero exit, no crash, and never a PASS on missing evidence.
. "$(dirname "$0")/cli_env.sh"

SESSION=$SRC/examples/h200-side-stream/session
INV=$SRC/inventory/data/h200-torch2.11-calibrated.inventory.zst

# A private copy of the contracts, so that they can be broken.
mkdir -p "$T/c"
cp "$SRC/contracts/examples/side-stream.json" "$T/c/side.json"
run contract pin "$T/c/manifest.json" "$T/c/side.json"
check "pin: exit 0" rc 0

run analyze "$SESSION" --contract "$T/c/side.json"
check "pinned contract: analysis runs (INCONCL: semantic unsupported)" rc 11
check "pinned contract: implementation PASS" out_has "implementation  PASS"

run analyze "$SESSION" --contract "$T/c/side.json" --semantic PASS
check "with a supplied semantic PASS the certificate is PASS" rc 0

run analyze
check "no session: exit 2" rc 2
run analyze "$SESSION"
check "no contract: exit 2" rc 2
check "no contract: said" err_has "contract is required"
run analyze "$SESSION" --contract "$T/c/side.json" --weak MAYBE
check "bad --weak: exit 2" rc 2
err_is() { printf '%s\n' "$@" >"$T/want"; cmp -s "$T/want" "$T/err"; }
ANALYZE_HINT="usage: kaudit analyze DIR --contract FILE [options] (kaudit analyze --help for more)"
check "bad --weak: message and synopsis" err_is "kaudit: error: --weak takes ACCEPT or REJECT, not 'MAYBE'" "$ANALYZE_HINT"
run analyze "$SESSION" --contract "$T/c/side.json" --x
check "unknown option: exit 2" rc 2
check "unknown option: message and synopsis" err_is "kaudit: error: unknown option '--x'" "$ANALYZE_HINT"
run analyze "$SESSION" --contract
check "option without its value: message and synopsis" err_is "kaudit: error: option '--contract' needs a value" "$ANALYZE_HINT"
run report "$SESSION" --save
check "report --save: unknown to report" err_is "kaudit: error: unknown option '--save'" \
    "usage: kaudit report DIR [--contract FILE [--manifest FILE] [--inventory FILE] [--weak W]] (kaudit report --help for more)"
run version
check "version: exit 0" rc 0
check "version: trace formats" out_has "^trace format: writes version [0-9]*, reads versions [0-9]* to [0-9]*$"
run --version
check "--version: the same" out_has "^trace format: writes version"
run version extra
check "version with an argument: exit 2" rc 2

# A contract edited after pinning is refused.
sed 's/1048576/1048577/' "$T/c/side.json" >"$T/c/side2.json" && mv "$T/c/side2.json" "$T/c/side.json"
run analyze "$SESSION" --contract "$T/c/side.json"
check "changed contract: exit 1" rc 1
check "changed contract: named" err_has "does not match its manifest"

# Not pinned anywhere.
mkdir -p "$T/free"
cp "$SRC/contracts/examples/side-stream.json" "$T/free/x.json"
run analyze "$SESSION" --contract "$T/free/x.json" --manifest "$T/c/manifest.json"
check "unlisted contract: exit 1" rc 1
check "unlisted contract: named" err_has "is not listed in the manifest"

# Malformed contract, pinned (the digest matches, the content does not parse).
printf '{"kaudit_contract": 1, "task_id": "x",\n "implementation": {"self_implemented": tru}}\n' >"$T/c/bad.json"
run contract pin "$T/c/manifest.json" "$T/c/bad.json"
check "malformed contract cannot be pinned: exit 1" rc 1
check "malformed contract: line named" err_has "line 2"
printf '{"kaudit_contract": 1, "task_id": "x", "implementation": {"self_implemented": true, "forbidden": ["gem"]}}\n' >"$T/c/bad.json"
run contract show "$T/c/bad.json" --manifest "$T/c/manifest.json"
check "unpinned show: exit 1" rc 1

# Missing session, and a session without info.
run analyze "$T/nope" --contract "$SRC/contracts/examples/side-stream.json"
check "missing session: exit 1" rc 1
mkdir -p "$T/empty"
run analyze "$T/empty" --contract "$SRC/contracts/examples/side-stream.json"
check "session without info: exit 1" rc 1

# A truncated trace: INCONCLUSIVE, never PASS.
mkdir -p "$T/trunc"
cp "$SESSION/info" "$T/trunc/"
f=$(ls "$SESSION"/*.kat | head -1)
head -c 9000 "$f" >"$T/trunc/$(basename "$f")"
run analyze "$T/trunc" --contract "$SRC/contracts/examples/side-stream.json" --semantic PASS
check "truncated trace: not PASS (exit 11)" rc 11
check "truncated trace: said" out_has "truncated"

# A trace of another format version: unreadable, INCONCLUSIVE.
mkdir -p "$T/ver"
cp "$SESSION/info" "$T/ver/"
cp "$f" "$T/ver/$(basename "$f")"
printf '\143' | dd of="$T/ver/$(basename "$f")" bs=1 seek=8 conv=notrunc 2>/dev/null
run report "$T/ver" --contract "$SRC/contracts/examples/side-stream.json" --semantic PASS
check "other version: not PASS (exit 11)" rc 11
check "other version: named" out_has "format_version\|version"

# An inventory whose digest does not verify.
if [ -f "$INV" ]; then
    zstd -dc "$INV" >"$T/inv.txt" 2>/dev/null || python3 -c "import sys" 
    if [ -s "$T/inv.txt" ]; then
        sed '5s/./X/' "$T/inv.txt" >"$T/inv-bad.txt"
        run analyze "$SESSION" --contract "$SRC/contracts/examples/side-stream.json" --inventory "$T/inv-bad.txt"
        check "bad inventory: exit 1" rc 1
        check "bad inventory: named" err_has "inv-bad.txt"
    fi
fi
run analyze "$SESSION" --contract "$SRC/contracts/examples/side-stream.json" --inventory "$T/no-such.inventory"
check "missing inventory: exit 1" rc 1

# The inventory without --inventory: the bundled calibrated one, named in
# every report; KAUDIT_INVENTORY overrides it; "none" judges without one.
run analyze "$SESSION" --contract "$SRC/contracts/examples/side-stream.json"
check "default inventory: exit 11" rc 11
check "default inventory: the bundled one, named" out_has "inventory: .*inventory/data/h200-torch2.11-calibrated.inventory.zst (digest "
run report "$SESSION" --contract "$SRC/contracts/examples/side-stream.json"
check "default inventory: report names it" out_has "inventory: .*h200-torch2.11-calibrated.inventory.zst (digest "
run report "$SESSION" --contract "$SRC/contracts/examples/side-stream.json" --json
check "default inventory: JSON names it" out_has '"file":.*h200-torch2.11-calibrated.inventory.zst"'
run analyze "$SESSION" --contract "$SRC/contracts/examples/side-stream.json" --inventory none
check "--inventory none: exit 11" rc 11
check "--inventory none: said" out_has "inventory: none"
run report "$SESSION" --contract "$SRC/contracts/examples/side-stream.json" --json --inventory none
check "--inventory none: JSON null" out_has '"inventory":	null'
KAUDIT_INVENTORY=none run analyze "$SESSION" --contract "$SRC/contracts/examples/side-stream.json"
check "KAUDIT_INVENTORY=none: said" out_has "inventory: none"
KAUDIT_INVENTORY="$T/no-such.inventory" run analyze "$SESSION" --contract "$SRC/contracts/examples/side-stream.json"
check "KAUDIT_INVENTORY missing: exit 1" rc 1
check "KAUDIT_INVENTORY missing: named" err_has "no-such.inventory"
KAUDIT_INVENTORY=none run analyze "$SESSION" --contract "$SRC/contracts/examples/side-stream.json" --inventory "$INV"
check "--inventory wins over KAUDIT_INVENTORY" out_has "inventory: .*h200-torch2.11-calibrated.inventory.zst (digest "
# --inventory-digest pins the inventory as a manifest pins a contract
run analyze "$SESSION" --contract "$SRC/contracts/examples/side-stream.json" --inventory "$INV"
inv_digest=$(sed -n 's/.*inventory: .* (digest \([0-9a-f]*\)).*/\1/p' "$T/out" | head -1)
run analyze "$SESSION" --contract "$SRC/contracts/examples/side-stream.json" --inventory "$INV" --inventory-digest "$inv_digest"
check "--inventory-digest matching: judged (exit 11)" rc 11
run analyze "$SESSION" --contract "$SRC/contracts/examples/side-stream.json" --inventory "$INV" \
    --inventory-digest 0123456789abcdef0123456789abcdef
check "--inventory-digest other: exit 1" rc 1
check "--inventory-digest other: named" err_has "not the pinned 0123456789abcdef0123456789abcdef"
cp -r "$SESSION" "$T/saved-none"
run analyze "$T/saved-none" --contract "$SRC/contracts/examples/side-stream.json" --inventory none --save
run report "$T/saved-none"
check "saved analysis without an inventory: report keeps none" out_has "inventory: none"

# report: saved analysis round trip, JSON and timeline.
cp -r "$SESSION" "$T/saved"
run analyze "$T/saved" --contract "$SRC/contracts/examples/side-stream.json" --inventory "$INV" --weak ACCEPT --save
check "analyze --save: exit 11" rc 11
run report "$T/saved" --perfetto "$T/timeline.json"
check "report from the saved analysis: exit 11" rc 11
check "report names the contract" out_has "contracts/examples/side-stream.json"
check "report shows the outcome" out_has "outcome: INCONCL"
check "timeline written" test -s "$T/timeline.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert any(e.get('cat')=='candidate' for e in d['traceEvents'])" "$T/timeline.json"
check "timeline is JSON with candidate kernels" test $? -eq 0
run report "$T/saved" --json
check "report --json" out_has '"kaudit-report"'
check "analyze --save: the analysis has a seal of its own" test -s "$T/saved/analysis.seal"
# a saved analysis changed after the save (its contract pointed elsewhere)
cp -r "$T/saved" "$T/planted"
sed 's/side-stream.json/torch-ops.json/' "$T/saved/analysis.json" >"$T/planted/analysis.json"
run report "$T/planted"
check "planted analysis: report refuses (exit 1)" rc 1
check "planted analysis: named" err_has "analysis.json' does not match its seal"
rm -f "$T/planted/analysis.seal"
run report "$T/planted"
check "unsealed analysis: report refuses (exit 1)" rc 1
check "unsealed analysis: said" err_has "has no seal of its own"
run report "$T/planted" --contract "$SRC/contracts/examples/side-stream.json"
check "unsealed analysis: --contract judges afresh (exit 11)" rc 11
run report "$T/empty"
check "report without a saved analysis: exit 1" rc 1

# A semantic verdict supplied to analyze is saved and restored: report DIR
# gives the certificate and outcome analyze gave (C0 here, every axis PASS).
json_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['certificate']['verdict'], (d['outcome'] or {}).get('code'), d['axes']['semantic']['verdict'], d['axes']['semantic'].get('source'))" "$1"; }
cp -r "$SESSION" "$T/saved-semantic"
run analyze "$T/saved-semantic" --contract "$SRC/contracts/examples/side-stream.json" --inventory "$INV" --weak ACCEPT --semantic PASS --save --json
check "analyze --semantic PASS --save: exit 0" rc 0
cp "$T/out" "$T/analyze.json"
check "analyze --semantic PASS: C0" test "$(json_get "$T/analyze.json")" = "PASS C0 PASS supplied"
run report "$T/saved-semantic" --json
check "report of the saved --semantic PASS analysis: exit 0" rc 0
cp "$T/out" "$T/report.json"
check "report: the same certificate, outcome and semantic verdict as analyze" \
    test "$(json_get "$T/report.json")" = "$(json_get "$T/analyze.json")"
run report "$T/saved-semantic"
check "report text: certificate PASS" out_has "certificate: PASS"
check "report text: outcome C0" out_has "outcome: C0"
run report "$T/saved-semantic" --semantic FAIL
check "report --semantic overrides the saved verdict" rc 10

# Every process accounted for (issue 14): a fork child whose trace was
# removed leaves the session incomplete, never PASS, and the finding names it.
cp -r "$SRC/examples/h200-fork-subprocess/session" "$T/forked"
run analyze "$T/forked" --contract "$SRC/contracts/examples/torch-ops.json"
check "fork session, all traces: no process-without-trace" sh -c "! grep -q 'has no trace' '$T/out'"
child=$(ls "$T/forked" | grep '^p1221-')
rm "$T/forked/$child"
run analyze "$T/forked" --contract "$SRC/contracts/examples/torch-ops.json"
check "fork child's trace removed: implementation INCONCLUSIVE" out_has "implementation  INCONCLUSIVE a process the traces name"
run report "$T/forked" --contract "$SRC/contracts/examples/torch-ops.json"
check "fork child's trace removed: the finding names the pid" out_has "process-without-trace: a fork started pid 1221"

finish
