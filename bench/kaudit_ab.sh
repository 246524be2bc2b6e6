#!/usr/bin/env bash
# bench/kaudit_ab.sh - kaudit's cost on the launch-bound loop, part by part, measured
# inside one process (bench/kaudit_ab.py: recording against paused, alternating).
#
#   bash bench/kaudit_ab.sh        (repository root, GPU machine)
#
# Environment: AB_PROCESSES=3 (processes with the default setup),
# AB_SETTINGS (the settings each process alternates), AB_VARIANTS (more
# process-wide setups, each "NAME:VAR=VALUE[,VAR=VALUE]" run once, e.g.
# "clock:KAUDIT_CUPTI_CLOCK=default"; "+" between variables), AB_REPEATS=20, AB_ITERS=200, PYTHON,
# AB_KAUDIT (a kaudit built elsewhere, e.g. a carried one; default: build-gpu, built if missing),
# AB_NAME (the prefix of the default processes' names), AB_REFERENCE (the setting the
# ratios divide by, default pause; "floor": what kaudit adds above the CUPTI floor).
# Output: a table per process; the JSON lines appended to $OUT/kaudit-ab.jsonl.
set -u
set -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
PY=${PYTHON:-python3}
cd "$ROOT" || exit 99
KAUDIT=${AB_KAUDIT:-$ROOT/build-gpu/bin/kaudit}
if [ -z "${AB_KAUDIT:-}" ] && [ ! -x "$KAUDIT" ]; then
    (cmake -S . -B build-gpu -G Ninja -DKAUDIT_CORE_ONLY=ON && cmake --build build-gpu) >/tmp/kaudit-ab-build.log 2>&1 ||
        { tail -20 /tmp/kaudit-ab-build.log; echo "kaudit did not build"; exit 1; }
fi
read -r -a SETTINGS <<<"${AB_SETTINGS:-pause resume kinds= kinds=device,kernel kinds=device,runtime,driver kinds=device,kernel,runtime,driver}"
W=$(mktemp -d /tmp/kaudit-ab.XXXXXX)
: >>"$OUTDIR/kaudit-ab.jsonl"

one() {   # one(NAME, ENV...)
    local name=$1 out
    shift
    rm -rf "$W/s"
    out=$(env KAUDIT_BENCH_CONTROL=1 "$@" "$KAUDIT" run -d "$W/s" -- "$PY" bench/kaudit_ab.py \
        --repeats "${AB_REPEATS:-20}" --iters "${AB_ITERS:-200}" --reference "${AB_REFERENCE:-pause}" \
        "${SETTINGS[@]}" 2>"$W/err") ||
        { echo "$name: failed: $(tail -3 "$W/err")"; return; }
    echo "$out" | "$PY" -c '
import json, sys
name = sys.argv[1]
d = json.loads(sys.stdin.read().strip().splitlines()[-1])
d["process"] = name
open(sys.argv[2], "a").write(json.dumps(d) + "\n")
p = d["settings"]["pause"]["median"]
print(f"{name}: us/iteration, {d['"'"'repeats'"'"']} segments of {d['"'"'iters'"'"']} per setting, ratios to {d.get('"'"'reference'"'"', '"'"'pause'"'"')}")
for s, v in d["settings"].items():
    print(f"  {s:<36} median {v['"'"'median'"'"']:8.2f}  min {v['"'"'min'"'"']:8.2f}  +{v['"'"'median'"'"'] - p:6.2f}"
          f"  ratio {v['"'"'ratio_median'"'"']:.3f} ({v['"'"'ratio_min'"'"']:.3f}..{v['"'"'ratio_max'"'"']:.3f})")
' "$name" "$OUTDIR/kaudit-ab.jsonl"
}

for ((p = 0; p < ${AB_PROCESSES:-3}; p++)); do one "${AB_NAME:-default}-$p"; done
for v in ${AB_VARIANTS:-}; do
    IFS=+ read -r -a envs <<<"${v#*:}"
    one "${v%%:*}" "${envs[@]}"
done
