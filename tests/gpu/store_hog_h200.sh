#!/usr/bin/env bash
# tests/gpu/store_hog_h200.sh - one GPU call for what the session of
# 2026-12-05 (fifth) built without a GPU (the device tool lent none):
#   hog    the attack tests/audit/attacks/timing_hog_reference.py (its own
#          copies on the GPU while the reference is timed) audited with the
#          build before its defence (.gpu-carry/kaudit-40fa473: recipe in
#          bench/audit_cost_ab.sh's header, at commit 40fa473) and with this
#          tree's (.gpu-carry/kaudit): before, measurement PASS and an
#          inflated, reportable speedup are expected; after, the measurement
#          axis INCONCLUSIVE (candidate-work-in-reference-window), no speedup;
#          then tests/gpu/controls' honest clean_tiled_gemm-like control
#          (tests/audit/candidates/probe_own_matmul.py) with this tree's:
#          no such finding (no false alarm on an honest candidate); and
#          tests/audit/attacks/forge_reference_phase.py (torch.matmul on a thread
#          born in a forged reference phase, the probe's answer rewritten) with
#          both builds: before, implementation PASS is expected; after, FAIL;
#   warm   bench/warm_h200.sh: the corpus cold into a fresh build store, then
#          each candidate again alone from the store (issue 35's warm target).
# 40fa473's Python guard refused /dev/null, which Triton's compiler opens
# (both attacks compile Triton kernels), so its audits of them ended INCONCL
# for that (H100, sixth session): kaudit-40fa473d is that build with the
# guard's fix alone.  Recipe: git worktree add /tmp/kw-40fa473d 40fa473;
# there, git show 76efe9b -- audit/audit_party.c | git apply; bash
# tests/gpu/carry_kaudit.sh; copy its .gpu-carry/kaudit to
# .gpu-carry/kaudit-40fa473d here.
# PARTS (default "hog warm"); results under $OUT: hog.tsv, the records, and
# warm_h200.sh's files.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUTDIR/records"
export KAUDIT_PYTHON=${KAUDIT_PYTHON:-python3}
PARTS=${PARTS:-"hog warm"}
W=/tmp/kaudit-store-hog
rm -rf "$W"; mkdir -p "$W"; chmod 711 "$W"
A=$ROOT/tests/audit
if [[ " $PARTS " == *" hog "* ]]; then
    printf 'build\tcandidate\texit\tsemantic\timplementation\tmeasurement\tcertificate\tspeedup\treportable\tfindings\thog\n' \
        >"$OUTDIR/hog.tsv"
    # HOG_PAIRS: "build:candidate ...", build "now" or a suffix of .gpu-carry/kaudit-*
    for pair in ${HOG_PAIRS:-40fa473d:timing_hog_reference now:timing_hog_reference now:probe_own_matmul \
        40fa473d:forge_reference_phase now:forge_reference_phase}; do
        build=${pair%%:*} cand=${pair#*:}
        K=$ROOT/.gpu-carry/kaudit/bin/kaudit
        [ "$build" = now ] || K=$ROOT/.gpu-carry/kaudit-$build/bin/kaudit
        f=$A/attacks/$cand.py
        [ -f "$f" ] || f=$A/candidates/$cand.py
        d=$W/$build-$cand
        timeout 240 "$K" audit --reference "$A/tasks/matmul.py" --candidate "$f" --contract "$A/contracts/matmul.json" \
            --device cuda --timeout 200 -d "$d" --quiet </dev/null >"$d.out" 2>&1
        rc=$?
        cp "$d/record.json" "$OUTDIR/records/$build-$cand.json" 2>/dev/null
        $KAUDIT_PYTHON - "$d/record.json" "$build" "$cand" "$rc" "$d/work/attack-"*.marker <<'PY' >>"$OUTDIR/hog.tsv"
import json, sys
rec, build, cand, rc = sys.argv[1:5]
marker = sys.argv[5] if len(sys.argv) > 5 else ""
try:
    r = json.load(open(rec))
except Exception:
    r = {"axes": {}}
ax = lambda k: (r["axes"].get(k) or {}).get("verdict")
sp = (r.get("timing") or {}).get("speedup") or {}
codes = sorted({f.get("code") for f in (r.get("analysis") or {}).get("findings", [])
                if f.get("kind") != "signal" or "reference" in (f.get("code") or "")})
try:
    hog = open(marker).read().strip()
except OSError:
    hog = ""
print("\t".join(str(v) for v in [build, cand, rc, ax("semantic"), ax("implementation"), ax("measurement"),
                                 r.get("certificate"), sp.get("ratio"), sp.get("reportable"), ",".join(codes), hog]))
PY
    done
    cat "$OUTDIR/hog.tsv"
fi
if [[ " $PARTS " == *" warm "* ]]; then
    WARM_DEADLINE_S=${WARM_DEADLINE_S:-470} bash "$ROOT/bench/warm_h200.sh"
fi
