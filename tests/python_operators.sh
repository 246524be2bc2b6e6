#!/bin/sh
# tests/python_operators.sh KAUDIT PYTHON SRCDIR - the sitecustomize's operator
# sampler (docs/python-provenance.md, "Operators"): its schedule and nesting
# (tests/python/operator_sampler_check.py), then on real PyTorch under
# `kaudit run`: the program's output is unchanged, no profiler is left on,
# and the trace says what the sampler did (on a CPU build of PyTorch, "off"
# with PyTorch's reason; on a CUDA build, "on").
# Exit 77 (skip) when PYTHON has no torch, unless CI is set (then FAIL).
NAME=python_operators.sh
. "$(dirname "$0")/audit_env.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$PY" "$SRC/tests/python/operator_sampler_check.py" "$SRC/preload/python/sitecustomize.py" || fail "sampler bookkeeping"
# the causal probe's perturbation on real PyTorch (runner/kaudit_probe.py)
"$PY" "$SRC/tests/python/probe_check.py" "$SRC/runner" || fail "the probe's perturbation"
# the switches a candidate reports, applied in the reference's process (runner/kaudit_flags.py)
"$PY" "$SRC/tests/python/flags_check.py" "$SRC/runner" || fail "the switches applied from the candidate's report"
# torch._dynamo's import while the candidate's compilers run (runner/kaudit_probe.py, Preimport)
"$PY" "$SRC/tests/python/preimport_check.py" "$SRC/runner" || fail "the import beside the build"

PROG=$SRC/tests/python/operators_program.py
"$PY" "$PROG" >"$T/bare.txt" 2>&1 || fail "the program failed on its own: $(cat "$T/bare.txt")"
"$K" run -d "$T/s" -- "$PY" "$PROG" >"$T/traced.txt" 2>"$T/traced.err" || fail "kaudit run failed: $(cat "$T/traced.err")"
cmp -s "$T/bare.txt" "$T/traced.txt" || fail "output changed under kaudit run: $(diff "$T/bare.txt" "$T/traced.txt")"
grep -q "profiler True" "$T/traced.txt" && fail "a profiler was left on after a watched call"
"$K" dump --json "$T/s" >"$T/dump.json" || fail "dump failed"
said=$("$PY" - "$T/dump.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
out = []
def walk(o):
    if isinstance(o, dict):
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
    elif isinstance(o, str) and o.startswith("operators "):
        out.append(o)
walk(d)
print("\n".join(out))
PYEOF
)
if "$PY" -c "import torch, sys; sys.exit(0 if torch.version.cuda else 1)" 2>/dev/null; then
    echo "$said" | grep -q "^operators on:" || fail "a CUDA build of PyTorch, and the sampler did not say on: '$said'"
else
    echo "$said" | grep -q "^operators off: RuntimeError: .*without CUDA" ||
        fail "a CPU build of PyTorch, and the sampler did not give PyTorch's reason: '$said'"
fi
KAUDIT_PYTHON_OPERATORS=off "$K" run -d "$T/off" -- "$PY" "$PROG" >"$T/off.txt" 2>&1 || fail "kaudit run (off) failed"
"$K" dump --json "$T/off" | grep -q "operators off: KAUDIT_PYTHON_OPERATORS=off" || fail "off by the environment not said"
# the analysis reports the sampler's word with the provenance
mkdir -p "$T/c" && cp "$SRC/tests/python/operators_contract.json" "$T/c/operators.json"
"$K" contract pin "$T/c/manifest.json" "$T/c/operators.json" >/dev/null || fail "contract pin failed"
"$K" analyze "$T/s" --contract "$T/c/operators.json" --inventory none --json >"$T/a.json" 2>"$T/a.err"
grep -q '"operators"' "$T/a.json" || fail "analyze did not report the sampler's state: $(head -c 400 "$T/a.json") $(cat "$T/a.err")"
[ "$fails" = 0 ] && echo "python_operators: all passed"
exit $((fails > 0))
