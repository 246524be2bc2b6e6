# bench/h200_env.sh - sourced by the benchmark scripts that run on the GPU
# machine: ROOT (the repository), OUTDIR ($OUT, or bench-out), PY (the
# machine's PyTorch Python, or python3), and the working directory ROOT.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
cd "$ROOT" || exit 99
PY=${PYTHON:-/opt/torch/.venv/bin/python}
[ -x "$PY" ] || PY=python3
