#!/usr/bin/env bash
# tests/gpu/trust_h200.sh - one GPU call for the certificate's new rules and
# the isolated audit's cost (sixth session of 2026-12-05):
#   hog     tests/gpu/store_hog_h200.sh's attacks (timing_hog_reference,
#           forge_reference_phase) with the build before their defences and
#           with this tree's, and an honest control (no false alarm);
#   honest  tests/gpu/audit_h200.sh's honest part: the tiled GEMM of
#           tests/gpu/controls with its own CUDA extension, cold then warm
#           (PASS, C0 expected: no false alarm of the new rules on a
#           candidate that builds and launches its own kernels);
#   real    tests/gpu/audit_h200.sh's real candidates (Triton, load_inline,
#           KernelBench's adversarial kernels), cold then warm;
#   cost    bench/audit_cost_ab.sh, 2417f31 against this tree, a warm-up
#           audit first (issue 33's cost, p50 and p95).
# TRUST_PARTS (default "hog real honest cost") picks parts, so a cut call can be
# resumed with the parts it did not reach; TRUST_DEADLINE_S (570) bounds the
# whole call: each part gets what is left, the cost part last.
# Everything under $OUT comes back as at most 8 files: trust-log.txt, the
# parts' tables, and trust-evidence.tar.gz (records and logs).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FINAL=${OUT:-$ROOT/gpu-out}
mkdir -p "$FINAL"
STAGE=$(mktemp -d /tmp/kaudit-trust.XXXXXX)
export KAUDIT_PYTHON=${KAUDIT_PYTHON:-python3}
PARTS=${TRUST_PARTS:-"hog real honest cost"}
deadline=$((SECONDS + ${TRUST_DEADLINE_S:-570}))
log=$FINAL/trust-log.txt
left() { echo $((deadline - SECONDS)); }
part() { # name, seconds wanted at most, command...
    local name=$1 want=$2
    shift 2
    local l
    l=$(left)
    [ "$l" -gt 30 ] || { echo "part $name not run: $l s left" | tee -a "$log"; return; }
    [ "$want" -lt "$l" ] || want=$l
    echo "part $name: up to $want s ($(date -u +%T))" | tee -a "$log"
    local t0=$SECONDS
    timeout "$want" "$@" >>"$log" 2>&1
    echo "part $name: exit $? after $((SECONDS - t0)) s" | tee -a "$log"
}
echo "kaudit: $("$ROOT/.gpu-carry/kaudit/bin/kaudit" version | head -1); $($KAUDIT_PYTHON -c 'import torch,sys; print(sys.version.split()[0], torch.__version__, torch.cuda.get_device_name(0))' 2>&1)" | tee -a "$log"
for p in $PARTS; do
    case $p in
    hog) part hog "${TRUST_HOG_S:-300}" env OUT="$STAGE/hog" PARTS=hog bash "$ROOT/tests/gpu/store_hog_h200.sh" ;;
    real) part real 330 env OUT="$STAGE/real" AUDIT_PARTS=real AUDIT_REAL_BUDGET=${TRUST_REAL_S:-150} bash "$ROOT/tests/gpu/audit_h200.sh" ;;
    honest) part honest 150 env OUT="$STAGE/honest" AUDIT_PARTS=honest bash "$ROOT/tests/gpu/audit_h200.sh" ;;
    cost) part cost "$(left)" env OUT="$STAGE/cost" COST_BUILDS="2417f31 now" COST_ROUNDS=3 \
              COST_DEADLINE_S=$(($(left) - 40)) bash "$ROOT/bench/audit_cost_ab.sh" ;;
    *) echo "unknown part $p" | tee -a "$log" ;;
    esac
done
for f in "$STAGE"/hog/hog.tsv "$STAGE"/real/audit-log.txt "$STAGE"/honest/audit-honest.tsv "$STAGE"/cost/cost-ab.tsv "$STAGE"/cost/cost-summary.txt; do
    [ -f "$f" ] && cp "$f" "$FINAL/" && { echo "== $(basename "$f")"; cat "$f"; } | cut -c1-300 | tee -a "$log"
done
tar -C "$STAGE" -czf "$FINAL/trust-evidence.tar.gz" . /tmp/kaudit-store-hog/*.out /tmp/kaudit-audit-h200/records 2>/dev/null
ls -la "$FINAL"
