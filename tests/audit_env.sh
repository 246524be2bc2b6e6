# tests/audit_env.sh - sourced by the audit tests (audit_cli.sh,
# audit_controls.sh) after setting NAME: the arguments KAUDIT PYTHON SRCDIR
# in K, PY and SRC, and the one rule for a Python without torch: skip (77),
# except under CI, which must run on real PyTorch (then FAIL); and jget, to read
# a record's fields.
K=$1 PY=$2 SRC=$3
if [ -z "$K" ] || [ -z "$PY" ] || [ -z "$SRC" ]; then
    echo "usage: $NAME KAUDIT PYTHON SRCDIR" >&2
    exit 2
fi
if ! "$PY" -c "import torch" >/dev/null 2>&1; then
    if [ -n "${CI:-}" ]; then
        echo "FAIL: CI is set but '$PY' cannot import torch (CI must run on real PyTorch)"
        exit 1
    fi
    echo "SKIP: '$PY' cannot import torch"
    exit 77
fi
export KAUDIT_PYTHON="$PY"
# jq-like: jget FILE PYTHON-EXPRESSION-ON-r (prints the value, "" when missing)
jget() {
    "$PY" - "$1" "$2" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    v = eval(sys.argv[2], {"r": r})
except Exception as e:
    v = "<error: %s>" % e
print("" if v is None else (json.dumps(v) if isinstance(v, (dict, list)) else v))
EOF
}
