#!/usr/bin/env bash
# bench/cupti_cost.sh - what each CUPTI mechanism costs a launch, measured inside one
# process (bench/cupti_toggle.c switches them; bench/cupti_cost.cu and cupti_cost.py
# are the bare launch loop and the PyTorch loop).
#
#   bash bench/cupti_cost.sh        (repository root, GPU machine; CUPTI_COST_PROCESSES=3)
#
# Runs each workload in CUPTI_COST_PROCESSES separate processes (each one
# rotates through all configurations internally), prints each process's table
# and writes the JSON lines to $OUT/cupti-cost.jsonl.
set -u
set -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
PY=${PYTHON:-python3}
N=${CUPTI_COST_PROCESSES:-3}
W=$(mktemp -d /tmp/kaudit-cupti-cost.XXXXXX)
cd "$ROOT" || exit 99
# The toolkit's libcupti, found through the library's own run path, so the
# PyTorch process keeps its own CUDA libraries (no LD_LIBRARY_PATH).
gcc -O2 -shared -fPIC -o "$W/libcupti_toggle.so" bench/cupti_toggle.c -I"$CUDA_HOME/include" \
    -L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lcupti || exit 1
"$CUDA_HOME/bin/nvcc" -O2 -cudart shared -o "$W/cupti_cost" bench/cupti_cost.cu "$W/libcupti_toggle.so" \
    -Xlinker -rpath -Xlinker "$CUDA_HOME/lib64:$W" || exit 1
: >"$OUTDIR/cupti-cost.jsonl"
# One process's table.  (A file, not -c '...': the f-strings need double quotes,
# and Python before 3.12 refuses backslashes inside them.)
cat >"$W/show.py" <<'EOF_SHOW'
import json, sys
d = json.loads(sys.stdin.read().strip().splitlines()[-1])
base = d["configs"]["off"]["median"]
print(f"{d['workload']}: {d['unit']}, {d['repeats']} segments of {d['per_segment']} per config")
for name, c in d["configs"].items():
    print(f"  {name:<17} median {c['median']:8.3f}  min {c['min']:8.3f}  +{c['median'] - base:7.3f}"
          f"  x{c['median'] / base:.3f}  records: kernel {c['kernel_records']} api {c['api_records']}"
          f" callbacks {c['callbacks']}")
EOF_SHOW
show() { "$PY" "$W/show.py" <<<"$1"; }
for ((p = 0; p < N; p++)); do
    out=$("$W/cupti_cost" 40 400) && { echo "$out" >>"$OUTDIR/cupti-cost.jsonl"; show "$out"; } || echo "c run $p failed"
    out=$("$PY" bench/cupti_cost.py "$W/libcupti_toggle.so" 20 200) &&
        { echo "$out" >>"$OUTDIR/cupti-cost.jsonl"; show "$out"; } || echo "torch run $p failed"
done
