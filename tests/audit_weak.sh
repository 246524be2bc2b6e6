#!/bin/sh
# tests/audit_weak.sh KAUDIT PYTHON SRCDIR - the weak surfaces of `kaudit audit`
# (docs/validators.md, "Weak surfaces") on CPU:
#  1. every row of tests/audit/weak/controls.tsv audited with
#     --weak-surfaces all: its semantic verdict, each surface's decision and
#     the row's reasons (tests/audit/weak/check_weak.py);
#  2. the switch: an unknown name is a usage error naming it (exit 2), a list
#     runs only its surfaces, none (the default) writes weak_surfaces null
#     and runs no surface;
#  3. a batch passes the switch on and its ledger's weak_decisions equal the
#     records' decisions, which kaudit validators then scores.
# Exit 77 (skip) when PYTHON has no torch, unless CI is set (then FAIL).
NAME=audit_weak.sh
. "$(dirname "$0")/audit_env.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
A=$SRC/tests/audit
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
t_start=$(date +%s)

# 1. the controls
tail -n +2 "$A/weak/controls.tsv" >"$T/rows"
while IFS='	' read -r name task cand rest; do
    [ -n "$name" ] || continue
    timeout 300 "$K" audit --reference "$A/tasks/$task.py" --candidate "$A/$cand" --device cpu \
        --weak-surfaces all -d "$T/$name" --json "$T/$name.json" --quiet >"$T/$name.out" 2>&1 </dev/null
done <"$T/rows"
"$PY" "$A/weak/check_weak.py" "$A/weak/controls.tsv" "$T" || fail "weak controls (above)"

# 2. the switch
"$K" audit --reference "$A/tasks/gelu.py" --candidate "$A/weak/gelu_erf.py" --device cpu \
    --weak-surfaces KernelBench,cuda-agent,Nope -d "$T/bad" --quiet >"$T/bad.out" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "an unknown surface: exit $rc, want 2"
grep -q "unknown weak surface 'Nope'" "$T/bad.out" || fail "an unknown surface: the error does not name it: $(cat "$T/bad.out")"
[ ! -e "$T/bad/record.json" ] || fail "an unknown surface: a record was written"
"$K" audit --reference "$A/tasks/gelu.py" --candidate "$A/weak/gelu_off_5e3.py" --device cpu \
    --weak-surfaces kernelbench,CUDA-L1 -d "$T/list" --quiet >/dev/null 2>&1
"$PY" -c '
import json, sys
r = json.load(open(sys.argv[1] + "/record.json"))
ws = r["weak_surfaces"]
assert sorted(ws) == ["CUDA-L1", "KernelBench"], sorted(ws)
assert ws["KernelBench"]["decision"] == "REJECT" and ws["CUDA-L1"]["decision"] == "ACCEPT", ws
ev = [json.loads(l) for l in open(sys.argv[1] + "/runner/events.jsonl")]
ran = [e["surface"] for e in ev if e["event"] == "weak"]
assert ran == ["KernelBench", "CUDA-L1"], ran
' "$T/list" || fail "--weak-surfaces kernelbench,CUDA-L1: not exactly those two surfaces"
# trials not kept between surfaces (on the H200, KernelBench's 6.4 GB
# inputs are not): the seed-42 surfaces still decide, and accept an honest
# candidate (they once raised KeyError looking a trial up after the loop)
KAUDIT_WEAK_TRIAL_CACHE_BYTES=0 "$K" audit --reference "$A/tasks/gelu.py" --candidate "$A/weak/gelu_erf.py" \
    --device cpu --weak-surfaces KernelBench,KernelGYM,CUDA-L1 -d "$T/nocache" --quiet >/dev/null 2>&1
"$PY" -c '
import json, sys
ws = json.load(open(sys.argv[1] + "/record.json"))["weak_surfaces"]
for name, tol, n in (("KernelBench", "0.0001", 5), ("KernelGYM", "0.01", 5), ("CUDA-L1", "0.01", 10)):
    d = ws[name]
    assert d["decision"] == "ACCEPT", (name, d)
    assert d["reason"].startswith("%d of %d trials within atol=rtol=%s" % (n, n, tol)), (name, d)
' "$T/nocache" || fail "trials not kept between surfaces: a seed-42 surface did not accept the honest candidate"
# a malformed cache size is ignored (the module is imported by every audit)
KAUDIT_WEAK_TRIAL_CACHE_BYTES=1G "$K" audit --reference "$A/tasks/gelu.py" --candidate "$A/weak/gelu_erf.py" \
    --device cpu --weak-surfaces KernelBench -d "$T/badcache" --quiet >/dev/null 2>&1
"$PY" -c '
import json, sys
ws = json.load(open(sys.argv[1] + "/record.json"))["weak_surfaces"]
assert ws["KernelBench"]["decision"] == "ACCEPT", ws
' "$T/badcache" || fail "KAUDIT_WEAK_TRIAL_CACHE_BYTES=1G broke the audit"
"$K" audit --reference "$A/tasks/gelu.py" --candidate "$A/weak/gelu_erf.py" --device cpu \
    -d "$T/none" --quiet >/dev/null 2>&1
"$PY" -c '
import json, sys
r = json.load(open(sys.argv[1] + "/record.json"))
assert r["weak_surfaces"] is None, r["weak_surfaces"]
assert json.load(open(sys.argv[1] + "/plan.json"))["weak_surfaces"] == []
assert not any(json.loads(l)["event"].startswith("weak") for l in open(sys.argv[1] + "/runner/events.jsonl"))
' "$T/none" || fail "the default: weak surfaces ran or the record is not null"

# 3. a batch and its ledger
printf '%s\n' \
    "{\"id\": \"off\", \"reference\": \"$A/tasks/gelu.py\", \"candidate\": \"$A/weak/gelu_off_5e3.py\"}" \
    "{\"id\": \"easy\", \"reference\": \"$A/tasks/gelu.py\", \"candidate\": \"$A/weak/gelu_easy_inputs.py\"}" \
    >"$T/tasks.jsonl"
"$K" audit --batch "$T/tasks.jsonl" -o "$T/ledger.jsonl" --device cpu --weak-surfaces all --jobs 2 \
    >"$T/batch.out" 2>&1 || fail "the batch: exit $? ($(tail -3 "$T/batch.out"))"
"$PY" -c '
import json, sys
for line in open(sys.argv[1]):
    l = json.loads(line)
    rec = json.load(open(l["record"]))
    want = {k: v["decision"] for k, v in rec["weak_surfaces"].items()}
    assert len(want) == 7 and l["weak_decisions"] == want, (l["id"], l.get("weak_decisions"), want)
' "$T/ledger.jsonl" || fail "the ledger's weak_decisions are not the records' decisions"
"$K" validators "$T/ledger.jsonl" --format json -o "$T/v.json" || fail "kaudit validators on the ledger: exit $?"
"$PY" -c '
import json, sys
v = json.load(open(sys.argv[1]))
rows = {(r["validator"], r["corpus"]): r for r in v["rates"]}
# both records FAIL (semantic); off is accepted by the five 1e-2 surfaces, easy by all seven
for s, accepted in (("KernelBench", 1), ("robust-kbench", 1), ("CUDA-Agent", 2), ("KernelGYM", 2),
                    ("DeepReinforce", 2), ("MusaCoder", 2), ("CUDA-L1", 2)):
    r = rows[(s, "default")]
    assert r["misses"]["count"] == accepted and r["misses"]["of"] == 2, (s, r["misses"])
' "$T/v.json" || fail "kaudit validators: the misses per surface differ from the controls' design"

echo "audit_weak: $fails failure(s), $(( $(date +%s) - t_start )) s"
[ "$fails" -eq 0 ]
